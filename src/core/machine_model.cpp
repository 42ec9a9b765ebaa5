// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>

#include "core/fma_probe.hpp"
#include "core/machine_model.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"

namespace blockdnn::impl {

namespace {

// The override in force (nullptr: none). Acquire/release so that a reader on another thread
// sees the whole model the override was made with.
std::atomic<const machine_model_t *> override_model {nullptr};

std::string fma_str(const char *name, const fma_unit_t &u, bool say_width) {
    return cat(name, " fma lat", u.latency, " x", u.pipes, say_width ? (u.full_width ? " full" : " split") : "",
            u.measured ? " (measured)" : "");
}

bool sane_pipes(double pipes) { return pipes >= min_fma_pipes && pipes <= max_fma_pipes; }

bool near_whole(double x) { return std::abs(x - std::round(x)) <= max_probe_rounding; }

// `unit` with the measured latency and pipes, rounded, if the latency and both the FMAs per
// cycle and the pipes they count for (`pipes_per_fma` per FMA) are within the sane bounds;
// otherwise unchanged.
void take_measured(fma_unit_t &unit, const fma_width_probe_t &w, int pipes_per_fma, bool full_width) {
    if (!w.measured || !std::isfinite(w.latency) || !std::isfinite(w.fmas_per_cycle)) return;
    if (!near_whole(w.latency) || !near_whole(pipes_per_fma * w.fmas_per_cycle)) return;
    const double lat = std::round(w.latency), pipes = std::round(pipes_per_fma * w.fmas_per_cycle);
    if (lat < min_fma_latency || lat > max_fma_latency) return;
    if (!sane_pipes(std::round(w.fmas_per_cycle)) || !sane_pipes(pipes)) return;
    unit.latency = static_cast<int>(lat);
    unit.pipes = static_cast<int>(pipes);
    unit.full_width = full_width;
    unit.measured = true;
}

} // namespace

machine_model_t make_machine_model(const cpu_features &f, const fma_probe_t &p) {
    machine_model_t m;
    take_measured(m.avx2, p.ymm, 1, true);
    if (m.avx2.measured) {
        const bool full = p.zmm.fmas_per_cycle >= full_width_min_ratio * p.ymm.fmas_per_cycle;
        take_measured(m.avx512, p.zmm, full ? 1 : 2, full);
    }
    // The load numbers stay the reference core's.
    if (f.l1d_bytes > 0) m.l1d_bytes = f.l1d_bytes;
    if (f.l2_bytes > 0) m.l2_bytes = f.l2_bytes;
    if (f.l3_bytes > 0) m.l3_bytes = f.l3_bytes;
    m.cores = std::max(1, f.physical_cores);
    // The cores behind one L3 share it; a CPU with several L3s has as many such groups. The
    // count is of logical processors, so SMT siblings count as one core; rounding up errs
    // toward the smaller share.
    int sharing = m.cores;
    if (f.l3_processors > 0 && f.logical_processors > 0) {
        const long cores =
                (static_cast<long>(f.l3_processors) * m.cores + f.logical_processors - 1) / f.logical_processors;
        sharing = static_cast<int>(std::clamp<long>(cores, 1, m.cores));
    }
    m.l3_share_bytes = std::min(m.l3_bytes / sharing, l3_share_cap_bytes);
    return m;
}

isa probe_isa() { return std::min(effective_isa(), detected_isa()); }

const machine_model_t &machine_model() {
    if (const machine_model_t *o = override_model.load(std::memory_order_acquire)) return *o;
    static const machine_model_t model = [] {
        // Probe again while a width came out ambiguous or disturbed. No wider vectors than the
        // cap in force (a capped process runs no instruction above it); a width above the cap
        // keeps the reference unit.
        isa level = isa::scalar;
        try {
            level = probe_isa();
        } catch (const std::exception &) {
            // A bad BLOCKDNN_MAX_ISA: every op's dispatch reports it; the probe runs nothing.
        }
        fma_probe_t p;
        machine_model_t m;
        for (int i = 0; i < max_probes; ++i) {
            p = probe_fma(level);
            m = make_machine_model(cpu(), p);
            if ((level < isa::avx2 || m.avx2.measured) && (level < isa::avx512_core || m.avx512.measured)) break;
        }
        if (verbose_level() >= 1)
            verbose_print(cat("blockdnn_verbose,info,machine,", to_string(m), "; fma probe up to ", to_string(level),
                    ": ", to_string(p)));
        return m;
    }();
    return model;
}

machine_model_override_t::machine_model_override_t(const machine_model_t &m)
    : model_(m), prev_(override_model.exchange(&model_, std::memory_order_acq_rel)) {}

machine_model_override_t::~machine_model_override_t() { override_model.store(prev_, std::memory_order_release); }

std::string to_string(const machine_model_t &m) {
    return cat(fma_str("avx2", m.avx2, false), ", ", fma_str("avx512", m.avx512, true), ", loads ", m.load_ports, "x",
            m.load_port_bytes, "B, L2 ", m.l2_bytes_per_cycle, "B/cycle, L1d ", m.l1d_bytes >> 10, "K L2 ",
            m.l2_bytes >> 10, "K L3 ", m.l3_bytes >> 20, "M (", m.l3_share_bytes >> 10, "K/core), ", m.cores, " cores");
}

} // namespace blockdnn::impl
