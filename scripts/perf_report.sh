#!/usr/bin/env bash
# One command for the whole comparison with oneDNN:
#   bash scripts/perf_report.sh [--quick] [--out DIR]
# installs what is missing (oneDNN's libdnnl-dev with ocl-icd-opencl-dev, whose OpenCL header
# its CMake config needs), configures build-perf/ (release, the oneDNN baseline on, no tests; it
# leaves build/ alone), builds the five benchmarks and blockdnn-bench there, runs them with
# --benchmark_repetitions=3, each process's repetitions interleaved at random (so blockdnn's and
# oneDNN's rows sample the same spells of a busy host; JSON and console logs in DIR, default
# perf-report/), and prints one report (scripts/perf_report.py; also saved as DIR/report.txt):
# the CPU, its flags and the machine model, then blockdnn / oneDNN time ratios for conv per
# ResNet-50 layer (avx512 nChw16c and avx2 nChw8c at mb 1 on 1 and 2 threads and mb 16 on 1; the
# 53-layer chains), blockdnn alone on nChw16c under an AVX2 cap (oneDNN has no kernel there; mb
# 16 on 1 thread, % of the ymm FMA peak per layer), bnorm (on 1 and 2 threads), RNN and GEMM,
# each with % of the FMA peak or of the copy bandwidth, blockdnn's conv creation time, and the
# speed floors (docs/tuning.md), each against this run's figures (README says how long it
# takes). --quick: three conv layers, one shape per bnorm and RNN table and two for GEMM, 2
# repetitions of shorter runs; it checks that the script works, its figures are rough.
# oneDNN takes its ISA cap once per process, so every AVX2 table is a second process.
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."
source scripts/step.sh

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
quick=0
out=
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --out) [ $# -ge 2 ] || { echo "perf_report: --out needs a directory" >&2; exit 2; }; out=$2; shift ;;
    --out=*) out=${1#--out=} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "perf_report: unknown argument '$1' (--quick, --out DIR)" >&2; exit 2 ;;
  esac
  shift
done
# A given DIR is relative to where the script was called from; the default is in the repository.
if [ -z "$out" ]; then out=perf-report; elif [ "${out:0:1}" != / ]; then out=$here/$out; fi

build="build-perf"
# oneDNN comes through its CMake config (cmake; OpenCL libraries it looks for); bench_sched's
# oneTBB baseline is required with the baseline option.
bash scripts/deps.sh libdnnl-dev ocl-icd-opencl-dev cmake libtbb-dev
if [ -f "$build/build.ninja" ]; then
  # A build dir set up another way (say without the baseline) is set up for the report again.
  step "meson setup $build" meson setup --reconfigure -Dtests=disabled -Dexamples=disabled \
    -Dbench=enabled -Dtools=enabled -Donednn_baseline=enabled "$build"
else
  wipe=()
  [ -d "$build/meson-private" ] && wipe=(--wipe) # a setup that failed half-way
  step "meson setup $build" meson setup "${wipe[@]}" --buildtype=release -Dtests=disabled -Dexamples=disabled \
    -Dbench=enabled -Dtools=enabled -Donednn_baseline=enabled "$build"
fi
# The commit the binaries are built from, read now: the tree may change while the runs take.
built_commit=$(git log -1 --format='%h %s' 2>/dev/null || true)
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null || true)
echo "perf_report: building in $build/" >&2
step "ninja -C $build" ninja -C "$build" bench/bench_conv bench/bench_bnorm bench/bench_rnn bench/bench_gemm bench/bench_create \
  tools/blockdnn-bench

mkdir -p "$out"
files=(machine.txt run.txt report.txt commit.txt)
for f in conv_avx512 conv_avx2 conv_avx2_nChw16c bnorm rnn_avx512 rnn_avx2 gemm_avx512 gemm_avx2 create; do files+=("$f.json" "$f.log"); done
for f in "${files[@]}"; do rm -f "$out/$f"; done
echo "${built_commit:-unknown}${dirty:+ (with uncommitted changes)}" > "$out/commit.txt"

# blockdnn-bench's machine lines (cpu, isa, model) from the smallest correctness run.
machine_ok=1
"$build/tools/blockdnn-bench" --mode=C --isa=ref --no-progress --conv mb1ic8ih4oc8oh4kh1 >"$out/machine.txt" 2>&1 ||
  { echo "perf_report: blockdnn-bench failed; see $out/machine.txt" >&2; machine_ok=0; }
isas=(avx2)
grep -q "^isa: detected avx512" "$out/machine.txt" && isas=(avx512 avx2)
grep -q "^isa: detected \(avx512\|avx2\)" "$out/machine.txt" || isas=()

reps=3
bench_args=()
conv_rows='(mb1/t1|mb1/t2|mb16/t1)/[^/]+'
# The single layers only: res[0-9] leaves out resnet_50_chain.
nchw16c_rows='mb16/t1/(conv1|res[0-9][^/]*)'
# bnorm on 1 and 2 threads: against oneDNN and the NT copy with the same threads.
bnorm_rows='(copy|bnorm/avx512|bnorm/avx2)/t[12]/'
rnn_rows='t1/'
gemm_rows='t1/'
if [ $quick -eq 1 ]; then
  reps=2
  bench_args=(--benchmark_min_time=0.1)
  conv_rows='((mb1/t1|mb1/t2|mb16/t1)/(res2a_branch2b|res3a_branch2c|res4a_branch2b)|mb1/t1/resnet_50_chain)'
  nchw16c_rows='mb16/t1/(res2a_branch2b|res3a_branch2c|res4a_branch2b)'
  bnorm_rows='(copy|bnorm/avx512|bnorm/avx2)/t[12]/mb16ic64ih56/'
  rnn_rows='t1/[^/]+/l1t100mb1sic128/'
  gemm_rows='t1/(M512N512K512|lstm_layer_t50mb64sic512)/'
fi
mode=
[ $quick -eq 1 ] && mode=", --quick (fewer rows, shorter runs: rough figures)"
echo "run: $reps repetitions per row, interleaved at random in each process$mode; 1 thread unless a column or row says t2; files in $out/" >"$out/run.txt"
# How busy the CPUs were over the second before the runs: the 1-minute load average would
# still count the build above.
busy_percent() {
  local a b i total=0 idle
  read -ra a < <(head -1 /proc/stat)
  sleep 1
  read -ra b < <(head -1 /proc/stat)
  for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
  idle=$((b[4] + b[5] - a[4] - a[5]))
  echo $((total > 0 ? 100 * (total - idle) / total : 0))
}
busy0=$(busy_percent)

failed=$((1 - machine_ok))
# run NAME BINARY ARGS...: one benchmark process, its JSON and console output in DIR.
run() {
  local name=$1 bin=$2 rc=0
  shift 2
  echo "perf_report: $name" >&2
  "$build/bench/$bin" "$@" --benchmark_repetitions=$reps --benchmark_enable_random_interleaving=true \
    "${bench_args[@]}" --benchmark_out="$out/$name.json" --benchmark_out_format=json >"$out/$name.log" 2>&1 \
    || rc=$?
  if [ $rc -ne 0 ]; then
    echo "perf_report: $bin exited $rc; its output is in $out/$name.log" >&2
    failed=1
  fi
}
for isa in "${isas[@]}"; do
  cap=()
  [ "$isa" = avx2 ] && cap=(--onednn_isa=avx2)
  run "conv_$isa" bench_conv "${cap[@]}" "--benchmark_filter=^conv/$isa/$conv_rows/"
done
# oneDNN 2.6 has no AVX2 kernel for nChw16c: its rows would only skip, so only blockdnn's run.
[[ " ${isas[*]} " = *" avx2 "* ]] &&
  run conv_avx2_nChw16c bench_conv "--benchmark_filter=^conv/avx2_nChw16c/$nchw16c_rows/blockdnn"
[ ${#isas[@]} -gt 0 ] && run bnorm bench_bnorm "--benchmark_filter=^$bnorm_rows"
for isa in "${isas[@]}"; do
  run "rnn_$isa" bench_rnn "--benchmark_filter=^rnn/$isa/$rnn_rows"
  run "gemm_$isa" bench_gemm "--benchmark_filter=^gemm/$isa/$gemm_rows"
done
# Creation: blockdnn's conv rows only (their floors are absolute); each row runs a few seconds.
[ ${#isas[@]} -gt 0 ] && run create bench_create \
  "--benchmark_filter=^create/conv/($(IFS='|'; echo "${isas[*]}"))/(jit_gen_cold|cached)/[^/]+/blockdnn"

# Other work on the cores slows the 2-thread rows most (a spinning pool waits on a preempted thread).
echo "CPUs busy in the second before the runs: ${busy0}%; load average (1 min) after them: $(cut -d' ' -f1 /proc/loadavg)" >>"$out/run.txt"
python3 scripts/perf_report.py "$out" | tee "$out/report.txt"
exit $failed
