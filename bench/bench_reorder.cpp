// SPDX-License-Identifier: Apache-2.0
// Reorder throughput per ISA, beside memcpy of the same bytes in the same binary.
// Rows: reorder/<isa>/<src>-><dst>/<shape> (nchw <-> nChw16c / nChw8c, oihw -> OIhw*, and
// nchw <-> nhwc) and memcpy/<shape>; the bytes/s counter counts
// bytes read plus bytes written (src size + dst size), the same for memcpy, so the ratio of the
// two counters is the fraction of copy bandwidth a reorder reaches. One thread.
#include <cstring>
#include <string>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "blockdnn/blockdnn.hpp"

using namespace blockdnn;

namespace {

struct shape_t {
    const char *name;
    dims_t dims;
    format_tag plain;
};

// ResNet-50 activations and weights (res2a_branch2b 3x3 64->64, res3a 3x3 128->128).
const shape_t shapes[] = {
        {"mb32ic64ih56", {32, 64, 56, 56}, format_tag::nchw},
        {"mb1ic256ih56", {1, 256, 56, 56}, format_tag::nchw},
        {"oc64ic64kh3", {64, 64, 3, 3}, format_tag::oihw},
        {"oc256ic256kh3", {256, 256, 3, 3}, format_tag::oihw},
};

void run_reorder(benchmark::State &state, isa level, tensor_desc sd, tensor_desc dd) {
    if (detected_isa() < level) {
        state.SkipWithError((std::string(to_string(level)) + " not available").c_str());
        return;
    }
    set_max_isa(level);
    const tensor src(sd), dst(dd);
    for (dim_t i = 0; i < sd.nelems_padded(); ++i) src.f32()[i] = static_cast<float>(i % 1000);
    state.SetLabel(reorder_impl_name(sd, dd));
    for (auto _ : state) {
        reorder(src, dst);
        benchmark::ClobberMemory();
    }
    state.counters["bytes"] = benchmark::Counter(static_cast<double>(sd.size_bytes() + dd.size_bytes()),
            benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
    reset_max_isa();
}

void run_memcpy(benchmark::State &state, std::size_t bytes) {
    const tensor_desc d({static_cast<dim_t>(bytes / 4)}, format_tag::x);
    const tensor src(d), dst(d);
    std::memset(src.data(), 1, bytes);
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), bytes);
        benchmark::ClobberMemory();
    }
    state.counters["bytes"] = benchmark::Counter(
            static_cast<double>(2 * bytes), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

void register_all() {
    for (const shape_t &s : shapes) {
        const tensor_desc plain(s.dims, s.plain);
        const bool act = s.plain == format_tag::nchw;
        benchmark::RegisterBenchmark((std::string("memcpy/") + s.name).c_str(), run_memcpy, plain.size_bytes())
                ->UseRealTime();
        for (isa level : {isa::avx2, isa::scalar}) { // channels-first <-> channels-last
            if (!act) break;
            const tensor_desc nhwc(s.dims, format_tag::nhwc);
            const std::string path = std::string("reorder/") + to_string(level) + "/";
            benchmark::RegisterBenchmark((path + "nchw->nhwc/" + s.name).c_str(), run_reorder, level, plain, nhwc)
                    ->UseRealTime();
            benchmark::RegisterBenchmark((path + "nhwc->nchw/" + s.name).c_str(), run_reorder, level, nhwc, plain)
                    ->UseRealTime();
        }
        for (isa level : {isa::avx512_core, isa::avx2, isa::scalar}) {
            for (int blk : {16, 8}) {
                const format_tag b = act ? (blk == 16 ? format_tag::nChw16c : format_tag::nChw8c)
                                         : (blk == 16 ? format_tag::OIhw16i16o : format_tag::OIhw8i8o);
                const tensor_desc blocked(s.dims, b);
                const std::string path = std::string("reorder/") + to_string(level) + "/";
                const std::string tags = std::string(to_string(s.plain)) + "->" + to_string(b);
                benchmark::RegisterBenchmark((path + tags + "/" + s.name).c_str(), run_reorder, level, plain, blocked)
                        ->UseRealTime();
                if (act) {
                    const std::string back = std::string(to_string(b)) + "->" + to_string(s.plain);
                    benchmark::RegisterBenchmark(
                            (path + back + "/" + s.name).c_str(), run_reorder, level, blocked, plain)
                            ->UseRealTime();
                }
            }
        }
    }
}

} // namespace

int main(int argc, char **argv) { return bench::bench_main(argc, argv, register_all); }
