// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <atomic>

#include "core/machine_model.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"

namespace blockdnn::impl {

namespace {

// The override in force (nullptr: none). Acquire/release so that a reader on another thread
// sees the whole model the override was made with.
std::atomic<const machine_model_t *> override_model {nullptr};

std::string fma_str(const char *name, const fma_unit_t &u) {
    return cat(name, " fma lat", u.latency, " x", u.pipes, u.full_width ? "" : " split");
}

} // namespace

machine_model_t make_machine_model(const cpu_features &f) {
    machine_model_t m;
    // The FMA and load numbers stay the reference core's until a probe measures them.
    if (f.l1d_bytes > 0) m.l1d_bytes = f.l1d_bytes;
    if (f.l2_bytes > 0) m.l2_bytes = f.l2_bytes;
    if (f.l3_bytes > 0) m.l3_bytes = f.l3_bytes;
    m.cores = std::max(1, f.physical_cores);
    m.l3_share_bytes = std::min(m.l3_bytes / m.cores, l3_share_cap_bytes);
    return m;
}

const machine_model_t &machine_model() {
    if (const machine_model_t *o = override_model.load(std::memory_order_acquire)) return *o;
    static const machine_model_t model = [] {
        const machine_model_t m = make_machine_model(cpu());
        if (verbose_level() >= 1) verbose_print(cat("blockdnn_verbose,info,machine,", to_string(m)));
        return m;
    }();
    return model;
}

machine_model_override_t::machine_model_override_t(const machine_model_t &m)
    : model_(m), prev_(override_model.exchange(&model_, std::memory_order_acq_rel)) {}

machine_model_override_t::~machine_model_override_t() { override_model.store(prev_, std::memory_order_release); }

std::string to_string(const machine_model_t &m) {
    return cat(fma_str("avx2", m.avx2), ", ", fma_str("avx512", m.avx512), ", loads ", m.load_ports, "x",
            m.load_port_bytes, "B, L2 ", m.l2_bytes_per_cycle, "B/cycle, L1d ", m.l1d_bytes >> 10, "K L2 ",
            m.l2_bytes >> 10, "K L3 ", m.l3_bytes >> 20, "M (", m.l3_share_bytes >> 10, "K/core), ", m.cores, " cores");
}

} // namespace blockdnn::impl
