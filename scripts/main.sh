#!/usr/bin/env bash
# The README's main command: installs what is missing (scripts/deps.sh, main_packages; not the
# test packages), builds (release) into build/ the two programs it runs, then
#   1. blockdnn-bench's embedded defaults (ResNet-50 convolutions and batch normalizations, a
#      few RNNs) in correctness and performance mode on every ISA the CPU has, with a plot;
#   2. ResNet-50 forward at mb 1 on two streams (end-to-end images/s);
# and ends with a short report, well under a minute on two cores after the build. Arguments go to
# blockdnn-bench: --full is the longer run (larger minibatches), --baseline=onednn adds oneDNN.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/configure.sh
# -Dtests=auto: the tests are configured when their packages are there and left out (with a
# warning naming them) when not; scripts/test.sh sets enabled.
configure_build auto "${main_packages[@]}"
step --show "ninja: blockdnn-bench and the resnet example" ninja -C build tools/blockdnn-bench examples/resnet
report=build/report
mkdir -p "$report"
rc=0

echo
echo "== 1. blockdnn-bench: embedded defaults, correctness and performance"
for a in "$@"; do
  case "$a" in -h|--help) exec build/tools/blockdnn-bench --help ;; esac
done
bench=(build/tools/blockdnn-bench --csv="$report/driver.csv" --plot="$report/driver.svg" "$@")
tee_rc=0
"${bench[@]}" | tee "$report/driver.txt.new" || { st=("${PIPESTATUS[@]}"); rc=${st[0]}; tee_rc=${st[1]}; }
[ "$tee_rc" -eq 0 ] || { echo "main.sh: could not write $report/driver.txt.new" >&2; exit 1; }
# Exit 2 before the 'problems:' line is a refusal (an unknown option, a bad BLOCKDNN_* value):
# stop there, with the last report left as it was, rather than run the rest and call it a
# failed check. (After it, 2 counts invalid problems of a run that took place.)
if [ "$rc" -eq 2 ] && ! grep -q '^problems: ' "$report/driver.txt.new"; then
  rm -f "$report/driver.txt.new"
  echo "main.sh: blockdnn-bench refused its arguments or environment (see above); nothing else was run" >&2
  exit 2
fi
mv "$report/driver.txt.new" "$report/driver.txt"
[ "$rc" -eq 0 ] || rc=1

echo
echo "== 2. ResNet-50 forward, mb 1, two streams"
# examples/resnet: ResNet-50 with seeded weights, bnorm folded, blocked layouts; it checks its
# logits against the other ISA's kernels (without AVX-512: the reference kernels, a few seconds)
# and the two-stream run against the sequential one. It prints the streams' gain over the
# requests run one after another, and the share they reach of the ideal (two requests at once,
# each as fast as one alone on its stream's share of the threads).
build/examples/resnet --model=resnet50 --mb=1 --streams=2 | tee "$report/resnet50.txt" || rc=1

echo
echo "== short report (full output in $report/)"
sed -n '/^summary (geometric means/,/^correctness:/p' "$report/driver.txt"
grep -hiE 'images/s|correctness|identical|end-to-end' "$report/resnet50.txt" || true
if [ $rc -ne 0 ]; then
  echo "SOME CHECKS FAILED"
elif grep -q 'outputs were not checked' "$report/resnet50.txt"; then
  echo "all correctness checks that ran passed (the ResNet-50 outputs were not checked, see above)"
else
  echo "all correctness checks passed"
fi
exit $rc
