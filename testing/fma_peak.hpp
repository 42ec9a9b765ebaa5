// SPDX-License-Identifier: Apache-2.0
// This core's FMA peak: the one probe that every % of peak (bench_conv, bench_common.hpp's
// counters, blockdnn-bench's machine report) divides by; tests/core/test_fma_peak.cpp checks it. A JIT
// loop of independent FMAs, timed in thread CPU time on first use, once on zmm and once on ymm
// (avx2 and every level below it share it).
#pragma once

#include <ctime>

#include <algorithm>
#include <bit>

#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"

namespace bdtest {

/// The probe's loop: void f(long iters) runs iters x flops_per_iter() FLOPs of vfmadd231ps on
/// zmm (avx512_core) or ymm (avx2) registers. Every register it reads is set first, to normal
/// numbers that stay normal: a register holding a denormal would time microcode assists on
/// cores that take them on denormal operands, not the FMA pipes.
class fma_loop_t : public Xbyak::CodeGenerator {
public:
    explicit fma_loop_t(bool zmm) : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow), zmm_(zmm) {
        // Accumulators: the whole register file but the two multiplicands, 30 zmm or 14 ymm.
        // The loop runs at FMA throughput when at least latency x pipes FMAs are in flight;
        // FMA latency has been 4 or 5 cycles and FMA pipes at most 2, so 10 at most: 14 covers it.
        const int n_regs = zmm ? 32 : 16;
        n_acc_ = n_regs - 2;
        const int a = n_acc_, b = n_acc_ + 1;
        // acc += 1.0f * 2^-25: a quarter of an ulp of 1.0, which rounds back to 1.0, so the
        // accumulators hold 1.0 for any number of iterations.
        auto set = [&](int r, float v) {
            mov(eax, bits(v));
            if (zmm) {
                vpbroadcastd(Xbyak::Zmm(r), eax);
            } else {
                vmovd(Xbyak::Xmm(r), eax);
                vbroadcastss(Xbyak::Ymm(r), Xbyak::Xmm(r));
            }
        };
        set(a, 1.0f);
        set(b, 0x1p-25f);
        for (int i = 0; i < n_acc_; ++i) {
            if (zmm) vmovaps(Xbyak::Zmm(i), Xbyak::Zmm(a));
            else vmovaps(Xbyak::Ymm(i), Xbyak::Ymm(a));
        }
        Xbyak::Label l;
        L(l);
        for (int i = 0; i < n_acc_; ++i) {
            if (zmm) vfmadd231ps(Xbyak::Zmm(i), Xbyak::Zmm(a), Xbyak::Zmm(b));
            else vfmadd231ps(Xbyak::Ymm(i), Xbyak::Ymm(a), Xbyak::Ymm(b));
        }
        dec(rdi);
        jnz(l);
        vzeroupper();
        ret();
        readyRE();
    }
    void (*fn() const)(long) { return getCode<void (*)(long)>(); }
    /// The vector registers it uses (reads and writes): [0, n_vregs()).
    int n_vregs() const { return n_acc_ + 2; }
    double flops_per_iter() const { return 2.0 * (zmm_ ? 16 : 8) * n_acc_; }

private:
    static unsigned bits(float v) { return std::bit_cast<unsigned>(v); }
    bool zmm_;
    int n_acc_ = 0;
};

/// CPU time of the calling thread: on a machine shared with builds, wall time counts the
/// time slices other processes take; this does not.
inline double thread_cpu_seconds() {
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

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
