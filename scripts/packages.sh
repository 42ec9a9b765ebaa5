# Debian 12 packages beyond the build essentials of scripts/deps.sh, by purpose. Sourced.
main_packages=()
test_packages=(
  libonnx-dev libonnx-testdata libprotobuf-dev   # ONNX conformance data and its reader
  python3-torch python3-torchvision python3-numpy # PyTorch reference cases
)
