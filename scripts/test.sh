#!/usr/bin/env bash
# The README's test command: installs what is missing (scripts/deps.sh, test_packages), builds
# (release) everything into build/, runs every GoogleTest case and prints 'N passed, N failed'.
# Exits non-zero if anything failed.
set -euo pipefail
if [ $# -gt 0 ]; then
  echo "usage: bash scripts/test.sh (it takes no arguments; got: $*)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
source scripts/configure.sh
# -Dtests=enabled: a test package that is missing is an error naming it, not a suite left out.
configure_build enabled "${test_packages[@]}"
step --show "ninja: the whole build" ninja -C build
rc=0
meson test -C build --print-errorlogs --num-processes 2 || rc=$?
python3 scripts/count_gtest.py build || rc=1
exit $rc
