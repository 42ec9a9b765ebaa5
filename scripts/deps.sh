#!/usr/bin/env bash
# Installs the Debian 12 packages blockdnn needs that are missing (as root; uses sudo if not).
# Extra package names given as arguments are installed too. apt's output goes to a log that is
# shown, with the step that failed, only if it fails (scripts/step.sh).
set -euo pipefail
source "$(dirname "$0")/step.sh"

packages=(
  g++ meson ninja-build pkg-config python3
  libxbyak-dev libcpuinfo-dev libgtest-dev libbenchmark-dev libcli11-dev
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null ||
    { echo "deps: not root and no sudo; as root: apt-get install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "deps: installing ${missing[*]}"
step "apt-get update" "${sudo[@]}" apt-get update
step "apt-get install ${missing[*]}" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
