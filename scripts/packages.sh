# Debian 12 packages beyond the build essentials of scripts/deps.sh, by purpose. Sourced.
# libzydis-dev: disassembly of JIT kernels (kernelgen, BLOCKDNN_JIT_DUMP; the kernelgen test).
main_packages=(libzydis-dev)
test_packages=(libzydis-dev)
