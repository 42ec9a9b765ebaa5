// SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <ctime>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/fma_probe.hpp"
#include "core/utils.hpp"

namespace blockdnn::impl {

namespace {

// The cycle yardstick: void f(long iters) runs iters x adds_per_iter dependent register adds.
// An add's result is ready the next cycle on every x86 core, and a register operand (not an
// immediate) keeps renamers that fold small constant adds from shortening the chain.
class add_chain_t : public Xbyak::CodeGenerator {
public:
    static constexpr int adds_per_iter = 16;
    add_chain_t() : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow) {
        xor_(eax, eax);
        mov(edx, 1);
        Xbyak::Label l;
        L(l);
        for (int i = 0; i < adds_per_iter; ++i) add(rax, rdx);
        dec(rdi);
        jnz(l);
        ret();
        readyRE();
    }
    void (*fn() const)(long) { return getCode<void (*)(long)>(); }
};

// FMAs per iteration of a latency chain: enough that the loop's own instructions are a small
// part of what the front end issues while the chain waits.
constexpr int chain_unroll = 16;
// Each run lasts about this many cycles (at the latency and pipes most cores have): long against
// the clock's resolution, short against a scheduler tick, which would land in one run in ten
// at most.
constexpr double run_cycles = 1e5;
// Rounds of runs; each figure is the median of its rounds, so that rounds a neighbour disturbed
// (a time slice, a clock change, a sibling thread on the core's pipes) count for nothing as
// long as they are fewer than half.
constexpr int probe_rounds = 7;
// Before the runs of a width count, its FMAs run this long: the core powers up its upper
// vector lanes on its first wide FMAs, and a core that clocks down for wide FMAs settles at the
// clock it holds for them.
constexpr double warm_up_seconds = 300e-6;
constexpr int max_warm_up_runs = 1000;
// The loops' iteration counts assume an FMA latency of 4 and 2 pipes; a core that differs runs
// them somewhat longer or shorter.
constexpr double latency_guess = 4, pipes_guess = 2;

// Thread CPU seconds of one call of f(iters).
double time_run(void (*f)(long), long iters) {
    const double t0 = thread_cpu_seconds();
    f(iters);
    return thread_cpu_seconds() - t0;
}

double median(std::array<double, probe_rounds> v) {
    std::nth_element(v.begin(), v.begin() + probe_rounds / 2, v.end());
    return v[probe_rounds / 2];
}

long iters_for(double cycles_per_iter) { return std::max(1l, std::lround(run_cycles / cycles_per_iter)); }

// One width's latency and FMAs per cycle, against the add chain. Each round times the add chain
// just before the width's loops, and counts their cycles in its own: the core's clock may change
// between rounds (a core that clocks down for wide FMAs keeps that clock for a while after
// them, which a yardstick timed beside another width's loops would miss). Xbyak throws when it
// gets no code memory.
fma_width_probe_t measure(bool zmm) {
    const add_chain_t adds;
    const fma_loop_t chain_loop(zmm, 1, chain_unroll), pipes_loop(zmm);
    const double chain_fmas = static_cast<double>(chain_loop.fmas_per_iter());
    const double pipes_fmas = static_cast<double>(pipes_loop.fmas_per_iter());
    const long adds_iters = iters_for(add_chain_t::adds_per_iter);
    const long chain_iters = iters_for(latency_guess * chain_fmas);
    const long pipes_iters = iters_for(pipes_fmas / pipes_guess);

    // Bounded by runs too: a thread clock that does not advance (or fails: NaN) ends it.
    const double t_warm = thread_cpu_seconds();
    for (int i = 0; i < max_warm_up_runs && thread_cpu_seconds() - t_warm < warm_up_seconds; ++i)
        pipes_loop.fn()(pipes_iters);
    std::array<double, probe_rounds> latency {}, fmas_per_cycle {};
    for (int r = 0; r < probe_rounds; ++r) {
        const double cycle_s =
                time_run(adds.fn(), adds_iters) / (static_cast<double>(adds_iters) * add_chain_t::adds_per_iter);
        latency[r] = time_run(chain_loop.fn(), chain_iters) / cycle_s / (static_cast<double>(chain_iters) * chain_fmas);
        fmas_per_cycle[r] =
                static_cast<double>(pipes_iters) * pipes_fmas * cycle_s / time_run(pipes_loop.fn(), pipes_iters);
    }

    fma_width_probe_t w;
    w.latency = median(latency);
    w.fmas_per_cycle = median(fmas_per_cycle);
    w.measured = std::isfinite(w.latency) && std::isfinite(w.fmas_per_cycle) && w.latency > 0 && w.fmas_per_cycle > 0;
    return w;
}

} // namespace

fma_loop_t::fma_loop_t(bool zmm, int n_acc, int unroll)
    : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow), zmm_(zmm), unroll_(std::max(1, unroll)) {
    const int n_regs = zmm ? 32 : 16;
    n_acc_ = n_acc > 0 ? std::min(n_acc, n_regs - 2) : n_regs - 2;
    const int a = n_acc_, b = n_acc_ + 1;
    // acc += 1.0f * 2^-25: a quarter of an ulp of 1.0, which rounds back to 1.0, so the
    // accumulators hold 1.0 for any number of iterations.
    auto set = [&](int r, float v) {
        mov(eax, std::bit_cast<unsigned>(v));
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
    for (int u = 0; u < unroll_; ++u)
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

double thread_cpu_seconds() {
    timespec ts {};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return std::nan("");
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

fma_probe_t probe_fma(isa level) {
    const auto t0 = std::chrono::steady_clock::now();
    fma_probe_t p;
    if (level >= isa::avx2) {
        try {
            p.ymm = measure(false);
            if (level >= isa::avx512_core) p.zmm = measure(true);
        } catch (...) {
            p.ymm = p.zmm = fma_width_probe_t {};
        }
    }
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return p;
}

std::string to_string(const fma_probe_t &p) {
    auto width = [](const char *name, const fma_width_probe_t &w) {
        if (!w.measured) return cat(name, " -");
        char s[64];
        std::snprintf(s, sizeof s, "%s lat %.2f %.2f/cycle", name, w.latency, w.fmas_per_cycle);
        return std::string(s);
    };
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f ms", p.seconds * 1e3);
    return cat(width("ymm", p.ymm), ", ", width("zmm", p.zmm), ", ", ms);
}

} // namespace blockdnn::impl
