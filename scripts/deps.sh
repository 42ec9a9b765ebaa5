#!/usr/bin/env bash
# Installs the Debian 12 packages blockdnn needs that are missing (as root; uses sudo if not).
# Extra package names given as arguments are installed too.
set -euo pipefail

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

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
