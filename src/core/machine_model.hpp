// SPDX-License-Identifier: Apache-2.0
// The machine model: what the init_confs know of the core and the caches they block for. One
// copy for the whole library, filled once (machine_model()) from cpuinfo's caches (Linux's
// where cpuinfo reads none, core/cpu_caches.hpp) and a probe of the core's FMAs
// (core/fma_probe.hpp); tests pin it to fixed values (machine_model_override_t) so that
// blocking tests do not depend on the machine they run on.
#pragma once

#include <string>

#include "blockdnn/isa.hpp"

namespace blockdnn::impl {

/// The FMAs of one vector width (one ISA level).
struct fma_unit_t {
    int vlen_bytes = 32; ///< bytes per vector register of the level
    int latency = 4;     ///< cycles from an FMA's inputs to its result
    int pipes = 2;       ///< FMA pipes of the core
    /// An FMA of this width issues to one pipe. false: the core splits it over two narrower
    /// pipes, so it starts half as many per cycle (AVX-512 on some cores).
    bool full_width = true;
    bool measured = false; ///< the numbers above come from the probe, not the reference machine
};

/// The machine as the blocking heuristics see it. The defaults are the reference machine,
/// the one the heuristics were tuned on: what the tests pin and what stands in for anything
/// the CPU does not report or the probe could not measure.
struct machine_model_t {
    fma_unit_t avx2 {32, 4, 2, true};
    fma_unit_t avx512 {64, 4, 2, false};
    int load_ports = 2;          ///< vector loads per cycle
    int load_port_bytes = 32;    ///< bytes one load port moves per cycle (a wider load takes more)
    int l2_bytes_per_cycle = 16; ///< L2 to L1 bandwidth a core sustains beside its other misses

    long l1d_bytes = 32 << 10; ///< L1 data cache, per core
    long l2_bytes = 1 << 20;   ///< L2, per core
    /// The L1d and L2 sizes the GEMM blocking was tuned against: the reference machine's
    /// whatever this CPU reports. The GEMM cuts its reduction (kc) and row chunks for
    /// blocking_l2_bytes, so that its sums round alike on every machine (a reduction cut
    /// differently rounds differently); its panel width, which orders no sum, reads l1d_bytes.
    /// They become l1d_bytes and l2_bytes once the GEMM is measured against the CPU's own caches,
    /// as the convolution blocking was.
    long blocking_l1d_bytes = 32 << 10;
    long blocking_l2_bytes = 1 << 20;
    long l3_bytes = 32 << 20; ///< one last-level cache as a whole, as the CPU reports it
    /// The last-level cache one core may count on: l3_bytes over the cores that share that
    /// cache (all cores where cpu() cannot tell), at most l3_share_cap_bytes (a VM may report
    /// the host's whole L3 to a few cores).
    long l3_share_bytes = 4 << 20;
    int cores = 1; ///< physical cores

    /// The FMAs of `level` (avx2 for anything below avx512_core).
    const fma_unit_t &fma(isa level) const { return level == isa::avx512_core ? avx512 : avx2; }
};

/// The most last-level cache one core is counted to have to itself.
constexpr long l3_share_cap_bytes = 4 << 20;

/// The last-level cache a run on `nthr` threads may count on: a core's share per thread, at most
/// the cores' shares (threads past the cores share them).
inline long llc_bytes_for(const machine_model_t &m, int nthr) {
    return m.l3_share_bytes * (nthr < 1 ? 1 : nthr < m.cores ? nthr : m.cores);
}

/// The most cycles a measured FMA latency may take, and the least; the most and the least FMAs
/// per cycle a measured unit may start. Outside them a measurement was disturbed (neighbours on
/// a shared machine, a clock change between runs) and the reference unit stands in.
constexpr int min_fma_latency = 2, max_fma_latency = 8;
constexpr int min_fma_pipes = 1, max_fma_pipes = 4;
/// 512-bit FMAs run full width when they start at least this fraction of the 256-bit rate;
/// split over two 256-bit pipes they start half of it.
constexpr double full_width_min_ratio = 0.75;
/// A measured latency or pipe count farther than this from a whole number is ambiguous (a run
/// disturbed midway): rounding it could give one model in one process and another in the next,
/// so the unit is not taken and machine_model() probes again.
constexpr double max_probe_rounding = 0.25;
/// Probes machine_model() makes before it keeps the reference unit for an ambiguous width.
constexpr int max_probes = 3;

struct fma_probe_t;

/// This machine: the reference machine with what cpu() reports (caches, cores) and what the
/// probe measured of the FMAs. A measured width becomes its unit, rounded (latency, and
/// FMAs per cycle as pipes), when the result is within the bounds above; the 512-bit unit also
/// needs the 256-bit one, its yardstick for full_width, and counts the pipes of the core (twice
/// its FMAs per cycle when split). Anything else keeps the reference unit. Pure given `f`, `p`.
machine_model_t make_machine_model(const cpu_features &f, const fma_probe_t &p);

/// The widest FMAs machine_model() probes: the ISA cap in force, but never above what the CPU
/// has. A process that assumes a wider CPU (assume_cpu_isa, as kernelgen does to generate
/// AVX-512 kernels on an AVX2 machine) keeps the reference unit for the width it cannot run.
/// Throws as effective_isa() does.
isa probe_isa();

/// The model the init_confs read: made from cpu() and probe_fma() on first use (thread-safe;
/// BLOCKDNN_VERBOSE=1 prints it then, with the probe's raw figures), or the one a
/// machine_model_override_t holds while it lives.
const machine_model_t &machine_model();

/// While it lives, machine_model() returns `m` (for tests: blocking that does not depend on the
/// machine). Overrides nest; each restores the one before it. Create and destroy it while no
/// other thread creates ops.
class machine_model_override_t {
public:
    explicit machine_model_override_t(const machine_model_t &m);
    ~machine_model_override_t();
    machine_model_override_t(const machine_model_override_t &) = delete;
    machine_model_override_t &operator=(const machine_model_override_t &) = delete;

private:
    machine_model_t model_;
    const machine_model_t *prev_;
};

/// "avx2 fma lat4 x2 (measured), avx512 fma lat4 x2 full (measured), loads 2x32B, L2 16B/cycle,
/// L1d 48K L2 2048K L3 480M (4096K/core), 2 cores" (a unit without "(measured)" is the
/// reference's): for verbose output and blockdnn-bench's machine line.
std::string to_string(const machine_model_t &m);

} // namespace blockdnn::impl
