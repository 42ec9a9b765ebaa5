// SPDX-License-Identifier: Apache-2.0
// This core's FMA peak: the one probe that every % of peak (bench_conv, bench_common.hpp's
// counters, blockdnn-bench's machine report) divides by; tests/core/test_fma_peak.cpp checks it.
// The machine model's probe loop of independent FMAs (core/fma_probe.hpp), timed longer here, in
// thread CPU time on first use, once on zmm and once on ymm (avx2 and every level below it share
// it).
#pragma once

#include <algorithm>

#include "blockdnn/isa.hpp"
#include "core/fma_probe.hpp"

namespace bdtest {

/// The loop the peak times: the library's FMA probe loop (core/fma_probe.hpp) with every
/// register as an accumulator.
using blockdnn::impl::fma_loop_t;
using blockdnn::impl::thread_cpu_seconds;

/// FLOP/s of `loop` (a function of the iteration count doing flops_per_iter FLOPs per
/// iteration): the best of 7 runs of 2e8 FLOPs each, after a 10 ms warm-up in which clocks
/// ramp and the upper vector state powers on.
inline double time_fma_loop(void (*loop)(long), double flops_per_iter) {
    const long iters = static_cast<long>(2e8 / flops_per_iter) + 1;
    const double t_warm = thread_cpu_seconds();
    while (thread_cpu_seconds() - t_warm < 0.01) loop(iters);
    double best = 0;
    for (int rep = 0; rep < 7; ++rep) {
        const double t0 = thread_cpu_seconds();
        loop(iters);
        const double s = thread_cpu_seconds() - t0;
        if (s > 0) best = std::max(best, flops_per_iter * static_cast<double>(iters) / s);
    }
    return best;
}

/// One core's FLOP/s of f32 FMAs on zmm (avx512_core) or ymm (avx2, and any other level),
/// measured now. The caller checks that the CPU has the ISA.
inline double measure_fma_peak_flops(blockdnn::isa level) {
    const fma_loop_t loop(level == blockdnn::isa::avx512_core);
    return time_fma_loop(loop.fn(), loop.flops_per_iter());
}

/// measure_fma_peak_flops, measured once per process for each of zmm and ymm; 0 if the CPU
/// lacks the ISA (avx2 for any level below avx512_core).
inline double fma_peak_flops(blockdnn::isa level) {
    const blockdnn::isa needed = level == blockdnn::isa::avx512_core ? level : blockdnn::isa::avx2;
    if (blockdnn::detected_isa() < needed) return 0;
    if (level == blockdnn::isa::avx512_core) {
        static const double zmm = measure_fma_peak_flops(level);
        return zmm;
    }
    static const double ymm = measure_fma_peak_flops(blockdnn::isa::avx2);
    return ymm;
}

} // namespace bdtest
