# Debian 12 packages beyond the build essentials of scripts/deps.sh, by purpose. Sourced.
main_packages=(
  libzydis-dev                                    # disassembly of JIT kernels (kernelgen, BLOCKDNN_JIT_DUMP)
  gnuplot-nox                                     # blockdnn-bench --plot (skipped with a note without it)
)
test_packages=(
  libzydis-dev                                    # the kernelgen test reads its disassembly
  libonnx-dev libonnx-testdata libprotobuf-dev   # ONNX conformance data and its reader
  python3-torch python3-torchvision python3-numpy # PyTorch reference cases, example weights
  dataset-fashion-mnist                           # the Fashion-MNIST example and its test
  clang-14 libclang-rt-14-dev                     # libFuzzer target of blockdnn-bench's parsers (scripts/fuzz.sh)
  clang-format-14                                 # the source layout check (scripts/check_format.py)
  pybind11-dev python3-dev libdlpack-dev python3-pytest # the Python package (python/) and its tests
)
