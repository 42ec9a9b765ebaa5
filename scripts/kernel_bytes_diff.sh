#!/usr/bin/env bash
# Compares the conv kernels two kernelgen builds generate, byte for byte, over the descriptors
# of tests/data/conv, both ISAs and four variants each (default layouts, nhwc, nchw src, bias
# with relu). For a change meant to leave the code as it was (a faster generator, a refactor):
#   scripts/kernel_bytes_diff.sh OLD/tools/kernelgen NEW/tools/kernelgen
# Prints each combination whose kernels differ, or that the builds treat differently, then a
# count line; exits 1 when any differs, when a build fails other than by refusing the problem
# (kernelgen's exit 1 or 2), or when nothing was compared. Kernels are generated, never run, so
# any x86 CPU will do.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_KERNELGEN NEW_KERNELGEN" >&2; exit 2; }
old=$(realpath -m "$1") new=$(realpath -m "$2")
for k in "$old" "$new"; do [ -x "$k" ] || { echo "$0: $k is not an executable" >&2; exit 2; }; done
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -h -v '^#' tests/data/conv/shapes_* | grep -E 'ic[0-9]' | tr -d ' \r' | sort -u > "$tmp/descs"
# Runs both builds on one combination into $tmp/o and $tmp/n; sets ro and rn to their exits.
run_pair() {
  rm -rf "$tmp/o" "$tmp/n"
  mkdir "$tmp/o" "$tmp/n"
  ro=0 rn=0
  "$old" conv "$@" --out="$tmp/o" --format=bin < /dev/null > /dev/null 2>&1 || ro=$?
  "$new" conv "$@" --out="$tmp/n" --format=bin < /dev/null > /dev/null 2>&1 || rn=$?
}
pair_agrees() { [ "$ro" -eq "$rn" ] && diff -r -q "$tmp/o" "$tmp/n" > /dev/null; }

same=0 differ=0 refused=0 none=0 rerun=0
while read -r d; do
  for isa in avx2 avx512; do
    for v in "" "--stag=nhwc --dtag=nhwc" "--stag=nchw" "--bias --post-ops=relu"; do
      read -r -a opts <<< "$v"
      what="$d $v --isa=$isa"
      run_pair "$d" "${opts[@]}" --isa=$isa
      # Each process times its FMA units for the machine model that picks the blocking, and a
      # timing disturbed by other load may give other numbers: a difference is counted only if
      # a second run shows it too, and a one-off is printed.
      if ! pair_agrees; then
        run_pair "$d" "${opts[@]}" --isa=$isa
        pair_agrees && { echo "differed once, the same on a second run: $what"; rerun=$((rerun + 1)); }
      fi
      if [ "$ro" -ne "$rn" ] || [ "$ro" -gt 2 ]; then
        echo "exit $ro vs $rn: $what"
        differ=$((differ + 1))
      elif [ "$ro" -ne 0 ]; then
        refused=$((refused + 1))
      elif ! pair_agrees; then
        echo "differ: $what"
        differ=$((differ + 1))
      elif [ -z "$(ls "$tmp/o")" ]; then
        none=$((none + 1))
      else
        same=$((same + 1))
      fi
    done
  done
done < "$tmp/descs"
echo "$(wc -l < "$tmp/descs") descriptors: $same kernel sets identical ($rerun of them on a second run)," \
  "$differ different, $refused refused by both, $none with no JIT kernel"
[ "$differ" -eq 0 ] && [ "$same" -gt 0 ]
