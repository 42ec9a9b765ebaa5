// SPDX-License-Identifier: Apache-2.0
// Best-first implementation tables. Each op lists its implementations, best first; the first
// whose ISA level is usable (the CPU has it and the max-ISA cap allows it) and that accepts
// the problem wins. Reasons for skipping print under BLOCKDNN_VERBOSE=dispatch. The ops'
// one-pass tables (ops/op_table.hpp) share the ISA check and the verbose line.
#pragma once

#include <span>
#include <string>

#include "blockdnn/isa.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"

namespace blockdnn::impl {

/// One row of a dispatch table. `accept` returns true if the implementation can run `prb`,
/// or false with the reason in `why`; `run` is whatever the op calls to execute it (a function
/// pointer, or a factory of a kernel object).
template <typename prb_t, typename run_t>
struct impl_entry_t {
    const char *name; // "simd:avx512_core", "jit:avx2", "ref", ...
    isa level;        // lowest ISA level the implementation needs
    bool (*accept)(const prb_t &prb, std::string &why);
    run_t run;
};

/// True if an implementation needing `level` may run where the effective ISA is `cap`; else
/// false with the reason in `why`.
inline bool isa_usable(isa level, isa cap, std::string &why) {
    if (level <= cap) return true;
    why = cat("needs ", to_string(level), ", effective ISA is ", to_string(cap));
    return false;
}

/// The verbose line of a skipped implementation (BLOCKDNN_VERBOSE=dispatch).
inline void verbose_skipped(const char *op, const char *name, const std::string &prb_str, const std::string &why) {
    if (verbose_level() >= 2) verbose_print(cat("blockdnn_verbose,dispatch,", op, ",", name, ",", prb_str, ",", why));
}

/// The first usable entry that accepts prb. `op` and `prb_str` are for verbose lines.
/// Throws unimplemented if none does (tables end with a ref entry, so this means a bug).
template <typename prb_t, typename run_t>
const impl_entry_t<prb_t, run_t> &dispatch(std::span<const impl_entry_t<prb_t, run_t>> table, const prb_t &prb,
        const char *op, const std::string &prb_str) {
    const isa cap = effective_isa();
    for (const impl_entry_t<prb_t, run_t> &e : table) {
        std::string why;
        if (isa_usable(e.level, cap, why) && e.accept(prb, why)) return e;
        verbose_skipped(op, e.name, prb_str, why);
    }
    fail(status::unimplemented, op, ": no implementation accepts ", prb_str);
}

} // namespace blockdnn::impl
