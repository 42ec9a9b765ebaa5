#!/usr/bin/env bash
# Runs every benchdnn input file of DATA/{conv,bnorm,rnn} (oneDNN's tests/benchdnn/inputs layout)
# through build/tools/blockdnn-bench in correctness mode on avx512 and avx2, one CSV per file in
# OUT/, then prints per directory and ISA the counts of passed / failed / skipped / invalid
# problems and the skip reasons. Usage:
#   scripts/benchdnn_lists.sh DATA OUT [DIR|DIR/GLOB...] [-- extra blockdnn-bench options, e.g. --mb=1]
# (conv/shapes_* runs only those files of conv/, in that order).
# A file running longer than TIMEOUT seconds (default 1800) is stopped and listed; BENCH names
# another blockdnn-bench binary.
set -uo pipefail
cd "$(dirname "$0")/.."
data="$1"; out="$2"; shift 2
dirs=(); extra=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
  dirs+=("$1"); shift
done
[ ${#dirs[@]} -gt 0 ] || dirs=(conv bnorm rnn)
mkdir -p "$out"
for d in "${dirs[@]}"; do
  if [ -d "$data/$d" ]; then files=("$data/$d"/*); else files=($data/$d); fi
  for f in "${files[@]}"; do
    name="$(basename "$(dirname "$f")")-$(basename "$f")"
    start=$(date +%s)
    timeout "${TIMEOUT:-1800}" "${BENCH:-build/tools/blockdnn-bench}" --batch="$f" --mode=C --isa=avx512,avx2 --no-progress \
      --csv="$out/$name.csv" "${extra[@]}" > "$out/$name.txt" 2>&1
    rc=$?
    echo "$name rc=$rc $(( $(date +%s) - start ))s $(grep -h '^correctness:' "$out/$name.txt")"
  done
done
/usr/bin/python3 - "$out" "${dirs[@]}" <<'PY'
import csv, glob, os, sys, collections
out, dirs = sys.argv[1], sys.argv[2:]
for d in sorted(set(x.split("/")[0] for x in dirs)):
    counts = collections.defaultdict(collections.Counter)
    reasons = collections.Counter()
    for path in sorted(glob.glob(os.path.join(out, d + "-*.csv"))):
        for r in csv.DictReader(open(path)):
            counts[r["isa"]][r["status"]] += 1
            if r["status"] != "passed":
                reasons[r["status"] + ": " + (r["reason"][:110] or "error over the tolerance")] += 1
    for isa, c in sorted(counts.items()):
        print(f"{d:6s} {isa:7s} " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    for why, n in reasons.most_common(12):
        print(f"         {n:6d}  {why}")
PY
