#!/usr/bin/env bash
# The README's main command: installs what is missing, builds (release) into build/ and runs the
# main job, build/tools/blockdnn-bench. Arguments are passed to blockdnn-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/packages.sh
bash scripts/deps.sh "${main_packages[@]}"
if [ -f build/build.ninja ]; then meson setup --reconfigure build >/dev/null; else meson setup build --buildtype=release >/dev/null; fi
ninja -C build
exec build/tools/blockdnn-bench "$@"
