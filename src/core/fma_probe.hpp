// SPDX-License-Identifier: Apache-2.0
// The FMA probe: what the blocking heuristics need of the core and cpuinfo does not say, measured
// by short JIT loops. Per vector width the CPU has, an FMA's latency in cycles and how many FMAs
// start per cycle. The machine model runs it once (machine_model()); testing/fma_peak.hpp times
// the same loop for the % of peak of benches and tests.
#pragma once

#include <string>

#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"

namespace blockdnn::impl {

/// void f(long iters): iters x fmas_per_iter() vfmadd231ps on zmm or ymm registers, into n_acc
/// independent accumulators, each updated `unroll` times per iteration: with one accumulator a
/// dependent chain (latency), with many as many FMAs in flight as the pipes can take
/// (throughput). Every register it reads is set first, to normal numbers that stay normal: a
/// register holding a denormal would time microcode assists on cores that take them on denormal
/// operands, not the FMA pipes. Xbyak's exceptions (no code memory) leave the constructor.
class fma_loop_t : public Xbyak::CodeGenerator {
public:
    /// All accumulators (n_acc = 0) is the whole register file but the two multiplicands, 30
    /// zmm or 14 ymm. The loop runs at FMA throughput when at least latency x pipes FMAs are in
    /// flight; FMA latency has been 4 or 5 cycles and FMA pipes at most 2, so 10 at most: 14
    /// covers it.
    explicit fma_loop_t(bool zmm, int n_acc = 0, int unroll = 1);
    void (*fn() const)(long) { return getCode<void (*)(long)>(); }
    /// The vector registers it uses (reads and writes): [0, n_vregs()).
    int n_vregs() const { return n_acc_ + 2; }
    long fmas_per_iter() const { return static_cast<long>(n_acc_) * unroll_; }
    double flops_per_iter() const { return 2.0 * (zmm_ ? 16 : 8) * static_cast<double>(fmas_per_iter()); }

private:
    bool zmm_;
    int n_acc_ = 0;
    int unroll_ = 1;
};

/// CPU time of the calling thread: on a machine shared with other processes, wall time counts
/// the time slices they take; this does not. NaN if the clock cannot be read.
double thread_cpu_seconds();

/// What the probe measured of one vector width (ymm or zmm); raw, not rounded.
struct fma_width_probe_t {
    bool measured = false;     ///< false: the CPU lacks the width, or the probe could not run
    double latency = 0;        ///< cycles from an FMA's inputs to its result
    double fmas_per_cycle = 0; ///< FMAs started per cycle with enough independent accumulators
};

/// The probe's result. make_machine_model turns it into the model's FMA units, rounding and
/// checking it.
struct fma_probe_t {
    fma_width_probe_t ymm, zmm;
    double seconds = 0; ///< wall time the probe took, JIT included
};

/// Measures the FMAs of every width `level` has: ymm from avx2 up, zmm with avx512_core. Cycles
/// are counted against a chain of dependent integer adds, one cycle each on every x86 core (the
/// TSC ticks at a fixed rate, not the core clock); each figure is the median of a few rounds of
/// runs of some 100,000 cycles, so the whole probe takes a few milliseconds at most. Never
/// throws: a width it could not measure comes back unmeasured.
fma_probe_t probe_fma(isa level);

/// "ymm lat 4.02 2.00/cycle, zmm lat 4.01 1.99/cycle, 1.3 ms" (a width not measured: "ymm -"):
/// the raw figures, beside the model's rounded ones in the verbose machine line.
std::string to_string(const fma_probe_t &p);

} // namespace blockdnn::impl
