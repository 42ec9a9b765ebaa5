#!/usr/bin/env bash
# Builds the libFuzzer target of blockdnn-bench's batch reader and descriptor parsers
# (tools/driver/fuzz_batch.cpp) with clang and ASan + UBSan, then fuzzes it for SECONDS
# (default 60) with one process per core (FUZZ_JOBS=N: N processes). Findings (crash-*, leak-*,
# timeout-*, oom-* files) land in build-fuzz/. Exits non-zero on a finding. Needs clang-14 and
# libclang-rt-14-dev (scripts/packages.sh: test_packages).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
cxx="$(command -v clang++-14 || command -v clang++ || true)"
[ -n "$cxx" ] || { echo "fuzz: clang++ not found (apt-get install clang-14 libclang-rt-14-dev)"; exit 1; }
out=build-fuzz
jobs="${FUZZ_JOBS:-$(nproc)}"
mkdir -p "$out/corpus"
# The reader, the spec builder and the fewest library sources they need (parsers and the
# descriptors' validate(); no kernels, no threads).
srcs=(
  tools/driver/fuzz_batch.cpp testing/batch.cpp tools/driver/spec.cpp
  src/core/prb_parse.cpp src/core/spatial.cpp src/core/status.cpp src/core/eltwise_alg.cpp
  src/core/post_ops.cpp src/ops/conv/conv_desc.cpp src/ops/pool/pool_desc.cpp src/ops/ip/ip_desc.cpp
  src/ops/conv/conv_parse.cpp src/ops/pool/pool_parse.cpp src/ops/bnorm/bnorm_parse.cpp src/ops/bnorm/bnorm_desc.cpp
  src/ops/rnn/rnn_parse.cpp src/ops/rnn/rnn_desc.cpp src/tensor/layout.cpp src/tensor/tensor_desc.cpp
  src/core/memory.cpp src/ops/eltwise/eltwise_desc.cpp src/ops/softmax/softmax_desc.cpp
  src/ops/softmax/softmax_parse.cpp
)
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
# One compiler per core (xargs exits non-zero if any fails), then the link.
rm -rf "$out/obj"
objs=()
for s in "${srcs[@]}"; do
  mkdir -p "$out/obj/$(dirname "$s")"
  objs+=("$out/obj/$s.o")
done
printf '%s\n' "${srcs[@]}" | xargs -P "$jobs" -I{} "$cxx" "${flags[@]}" -Iinclude -Isrc -I. -Itools -c {} \
  -o "$out/obj/{}.o" || exit 1
"$cxx" "${flags[@]}" "${objs[@]}" -o "$out/fuzz_batch" || exit 1
# Seeds: a few lines of each driver's syntax (the first byte picks the driver).
printf '\000--dir=FWD_D,FWD_B --stag=axb mb2ic16ih7oc32oh7kh3ph1n"a"\n--attr-post-ops=sum:0.5+relu g2ic4iw9oc4ow9kw3\n' > "$out/corpus/conv"
printf '\001--dir=FWD_D,BWD_DW --flags=GCHR --tag=aBx16b mb2ic16ih7_eps0.5\n--batch=self\n' > "$out/corpus/bnorm"
printf '\002--alg=LBR_GRU --direction=concat --tag=ntc:any:tnc l2t3mb4sic16n"x"\n--reset --l=2 l1t5sic8slc4\n' > "$out/corpus/rnn"
printf '\003--alg=avg_np mb2ic16id4ih6kd2kh3sh2ph1\n' > "$out/corpus/pool"
printf '\004--alg=gelu_erf --alpha=0.5 --inplace=true 2x16x3x3_n"e"\n--match=.*e.* 4x4\n' > "$out/corpus/eltwise"
printf '\005--axis=0,3 --tag=aBx16b --inplace=true 2x16x3x3_n"s"\n--reset --alg=SOFTMAX 64x1000\n' > "$out/corpus/softmax"
cd "$out"
# Fork mode runs a fuzzing process per core and would skip timeouts and out-of-memory inputs
# unless told not to. It stops at the first finding it reads from a job, but a job still running
# when the time is up ends unread: the files the jobs wrote decide.
touch .fuzz_start
rc=0
./fuzz_batch -fork="$jobs" -ignore_timeouts=0 -ignore_ooms=0 -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -print_final_stats=1 corpus || rc=$?
found="$(find . -maxdepth 1 -newer .fuzz_start \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
  -o -name 'oom-*' \) | sort)"
if [ -n "$found" ]; then
  echo "fuzz: findings in $out/:" $found
  exit 1
fi
exit $rc
