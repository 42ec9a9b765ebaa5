// SPDX-License-Identifier: Apache-2.0
// What the benchmarks share: the single-core FMA peak of an ISA, measured once with a JIT loop
// of independent FMAs, and the GFLOPS / pct_peak counters.
#pragma once

#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"

#ifdef BLOCKDNN_BENCH_ONEDNN
#include <dnnl.h>
#endif

namespace bench {

// 24 independent accumulators: more than FMA latency x FMA pipes (4 x 2), fewer than 32 zmm
// (and on AVX2 12 of the 16 ymm), so the loop runs at FMA throughput.
class fma_loop_t : public Xbyak::CodeGenerator {
public:
    fma_loop_t(bool zmm, int n_acc) : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow) {
        // rdi = iterations; each iteration does n_acc FMAs of one vector.
        Xbyak::Label l;
        for (int i = 0; i < n_acc + 2; ++i) vxorps(Xbyak::Xmm(i), Xbyak::Xmm(i), Xbyak::Xmm(i));
        L(l);
        for (int i = 0; i < n_acc; ++i) {
            if (zmm) vfmadd231ps(Xbyak::Zmm(i), Xbyak::Zmm(n_acc), Xbyak::Zmm(n_acc + 1));
            else vfmadd231ps(Xbyak::Ymm(i), Xbyak::Ymm(n_acc), Xbyak::Ymm(n_acc + 1));
        }
        dec(rdi);
        jnz(l);
        vzeroupper();
        ret();
        readyRE();
    }
};

/// CPU time of the calling thread: on a machine shared with builds, wall time counts the
/// time slices other processes take; this does not.
inline double thread_cpu_seconds() {
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Single-core f32 FMA peak of `level` in GFLOP/s (best of five runs of 20 to 50 ms, in thread CPU time), measured once.
inline double fma_peak_gflops(blockdnn::isa level) {
    static std::map<blockdnn::isa, double> cache;
    if (auto it = cache.find(level); it != cache.end()) return it->second;
    const bool zmm = level == blockdnn::isa::avx512_core;
    const int n_acc = zmm ? 24 : 12, simd_w = zmm ? 16 : 8;
    fma_loop_t loop(zmm, n_acc);
    auto f = loop.getCode<void (*)(long)>();
    const long iters = 2'000'000;
    f(iters / 10); // warm up: clocks ramp, upper vector state powers on
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
        const double t0 = thread_cpu_seconds();
        f(iters);
        const double s = thread_cpu_seconds() - t0;
        best = std::max(best, 2.0 * simd_w * n_acc * static_cast<double>(iters) / s * 1e-9);
    }
    return cache[level] = best;
}

/// Sets GFLOPS (a rate) and pct_peak (of the one-core FMA peak x threads) counters.
inline void set_flop_counters(benchmark::State &state, double flops_per_iter, blockdnn::isa level, int nthr) {
    state.counters["GFLOPS"] = benchmark::Counter(flops_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    // Filled in after the run by dividing by the elapsed time: GFLOPS / (peak x threads).
    const double peak = fma_peak_gflops(level) * nthr;
    state.counters["pct_peak"] = benchmark::Counter(flops_per_iter * 1e-9 / peak * 100.0,
            benchmark::Counter::kIsIterationInvariantRate);
}

/// Adds a "min" aggregate to a row, for --benchmark_repetitions=N: on a machine shared with
/// other work, the fastest repetition is the one least disturbed.
inline benchmark::internal::Benchmark *with_min(benchmark::internal::Benchmark *b) {
    return b->ComputeStatistics("min", [](const std::vector<double> &v) {
        return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
    });
}

/// Records the measured peaks in the benchmark context (JSON and console header).
inline void add_peak_context() {
    for (blockdnn::isa level : {blockdnn::isa::avx512_core, blockdnn::isa::avx2})
        if (blockdnn::detected_isa() >= level)
            benchmark::AddCustomContext(std::string("fma_peak_gflops_") + blockdnn::to_string(level),
                    std::to_string(fma_peak_gflops(level)));
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

} // namespace bench
