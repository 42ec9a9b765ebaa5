# Debian 12 packages beyond the build essentials of scripts/deps.sh, by purpose. Sourced.
main_packages=()
test_packages=()
