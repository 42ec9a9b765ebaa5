// SPDX-License-Identifier: Apache-2.0
// What the benchmarks share: their main(), the single-core FMA peak of an ISA
// (testing/fma_peak.hpp's probe) and the GFLOPS / pct_peak counters.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "blockdnn/isa.hpp"
#include "testing/fma_peak.hpp"

#ifdef BLOCKDNN_BENCH_ONEDNN
// The oneDNN rows' needs: its C and C++ API, its threads (OpenMP's: omp_set_num_threads) and
// its tensors on blockdnn's allocator.
#include <dnnl.h>
#include <dnnl.hpp>
#include <omp.h>

#include "onednn_memory.hpp"
#endif

namespace bench {

using bdtest::fma_peak_flops;

/// Single-core f32 FMA peak of `level` in GFLOP/s: fma_peak.hpp's probe, measured once.
inline double fma_peak_gflops(blockdnn::isa level) { return fma_peak_flops(level) * 1e-9; }

/// Sets GFLOPS (a rate) and pct_peak (of the one-core FMA peak x threads) counters.
inline void set_flop_counters(benchmark::State &state, double flops_per_iter, blockdnn::isa level, int nthr) {
    state.counters["GFLOPS"] = benchmark::Counter(flops_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    // Filled in after the run by dividing by the elapsed time: GFLOPS / (peak x threads).
    const double peak = fma_peak_gflops(level) * nthr;
    state.counters["pct_peak"] =
            benchmark::Counter(flops_per_iter * 1e-9 / peak * 100.0, benchmark::Counter::kIsIterationInvariantRate);
}

/// Adds a "min" aggregate to a row, for --benchmark_repetitions=N: on a machine shared with
/// other work, the fastest repetition is the one least disturbed.
inline benchmark::internal::Benchmark *with_min(benchmark::internal::Benchmark *b) {
    return b->ComputeStatistics("min",
            [](const std::vector<double> &v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); });
}

/// Registers row `name` running fn(state, args...) on `nthr` threads, with the "min" aggregate.
/// One thread is timed in CPU time, robust to other processes on the machine; more in wall time.
template <class Fn, class... Args>
benchmark::internal::Benchmark *register_threaded_row(const std::string &name, int nthr, Fn fn, Args &&...args) {
    auto *b = benchmark::RegisterBenchmark(name.c_str(), fn, std::forward<Args>(args)...);
    with_min(b);
    if (nthr > 1) b->UseRealTime();
    return b;
}

/// Records the measured peaks in the benchmark context (JSON and console header).
inline void add_peak_context() {
    for (blockdnn::isa level : {blockdnn::isa::avx512_core, blockdnn::isa::avx2})
        if (blockdnn::detected_isa() >= level)
            benchmark::AddCustomContext(std::string("fma_peak_gflops_") + blockdnn::to_string(level),
                    std::to_string(fma_peak_gflops(level)));
}

/// A benchmark binary's main() around its own rows: registers them, hands argv to Google
/// Benchmark (exit status 1 on a flag it does not know), adds the binary's context lines, runs
/// the rows through `reporter` (null: the one --benchmark_format names) and shuts down.
inline int bench_main(int argc, char **argv, void (*register_rows)(), const std::function<void()> &add_context = {},
        benchmark::BenchmarkReporter *reporter = nullptr) {
    register_rows();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (add_context) add_context();
    benchmark::RunSpecifiedBenchmarks(reporter);
    benchmark::Shutdown();
    return 0;
}

#ifdef BLOCKDNN_BENCH_ONEDNN
/// oneDNN takes its ISA cap once per process (dnnl_set_max_cpu_isa before the first primitive,
/// or DNNL_MAX_CPU_ISA): the first oneDNN row fixes it. A row wanting another ISA is skipped
/// with the way to run it. False if the row must not run.
inline bool onednn_use_isa(benchmark::State &state, blockdnn::isa level) {
    if (blockdnn::detected_isa() < level) {
        state.SkipWithError((std::string(blockdnn::to_string(level)) + " not available").c_str());
        return false;
    }
    static const blockdnn::isa fixed = [&] {
        dnnl_set_max_cpu_isa(level == blockdnn::isa::avx512_core ? dnnl_cpu_isa_avx512_core : dnnl_cpu_isa_avx2);
        return level;
    }();
    // An environment cap applies whatever the call above asked.
    const dnnl_cpu_isa_t eff = dnnl_get_effective_cpu_isa();
    const bool eff_avx512 = (eff & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
    const blockdnn::isa got = eff_avx512 ? blockdnn::isa::avx512_core : blockdnn::isa::avx2;
    if (fixed != level || got != level) {
        state.SkipWithError("oneDNN's ISA is fixed per process: run these rows alone, e.g. "
                            "--benchmark_filter=/avx2/ (or DNNL_MAX_CPU_ISA=AVX2)");
        return false;
    }
    return true;
}
#endif

/// Skips the row with "<level> not available" when the CPU lacks `level`; true if skipped.
inline bool skip_if_missing(benchmark::State &state, blockdnn::isa level) {
    if (blockdnn::detected_isa() >= level) return false;
    state.SkipWithError((std::string(blockdnn::to_string(level)) + " not available").c_str());
    return true;
}

/// Caps dispatch at `level` while it lives (set_max_isa), then lifts the cap (reset_max_isa).
struct isa_cap_t {
    explicit isa_cap_t(blockdnn::isa level) { blockdnn::set_max_isa(level); }
    ~isa_cap_t() { blockdnn::reset_max_isa(); }
    isa_cap_t(const isa_cap_t &) = delete;
    isa_cap_t &operator=(const isa_cap_t &) = delete;
};

} // namespace bench
