// SPDX-License-Identifier: Apache-2.0
// This core's FMA peak, measured once with a JIT loop of independent FMAs (the % of peak
// counters of the benchmarks divide by it).
#pragma once

#include <ctime>

#include <algorithm>

#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"

namespace bench {

/// FLOP/s of one core running vfmadd231ps on zmm (avx512_core) or ymm (avx2) registers:
/// 16 independent accumulators, enough for any FMA latency x throughput product.
inline double fma_peak_flops(blockdnn::isa level) {
    struct loop_t : Xbyak::CodeGenerator {
        explicit loop_t(bool zmm) {
            constexpr int n_acc = 12;
            Xbyak::Label l;
            L(l);
            for (int r = 0; r < 4; ++r)
                for (int i = 0; i < n_acc; ++i) {
                    if (zmm) vfmadd231ps(Xbyak::Zmm(i), Xbyak::Zmm(14), Xbyak::Zmm(15));
                    else vfmadd231ps(Xbyak::Ymm(i), Xbyak::Ymm(14), Xbyak::Ymm(15));
                }
            dec(rdi);
            jnz(l);
            vzeroupper();
            ret();
        }
    };
    const bool zmm = level == blockdnn::isa::avx512_core;
    loop_t k(zmm);
    auto f = k.getCode<void (*)(long)>();
    constexpr long iters = 2000000;
    const double flops_per_iter = 4.0 * 12 * (zmm ? 16 : 8) * 2;
    double best = 0;
    f(iters / 10); // warm up the clock
    // Thread CPU time: on a shared machine, the time this thread actually ran.
    auto now = [] {
        timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
    };
    for (int rep = 0; rep < 5; ++rep) {
        const double t0 = now();
        f(iters);
        best = std::max(best, iters * flops_per_iter / (now() - t0));
    }
    return best;
}

} // namespace bench
