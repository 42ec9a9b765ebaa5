#!/usr/bin/env bash
# The README's test command: installs what is missing, builds (release) into build/, runs every
# GoogleTest case and prints 'N passed, N failed'. Exits non-zero if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/packages.sh
bash scripts/deps.sh "${test_packages[@]}"
if [ -f build/build.ninja ]; then meson setup --reconfigure build >/dev/null; else meson setup build --buildtype=release >/dev/null; fi
ninja -C build
rc=0
meson test -C build --print-errorlogs --num-processes 2 || rc=$?
python3 scripts/count_gtest.py build || rc=1
exit $rc
