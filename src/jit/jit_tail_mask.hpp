// SPDX-License-Identifier: Apache-2.0
// The tail mask of a kernel whose last vector is partial, set once before the loops, and the
// loads and stores through it: an opmask on AVX-512, all-ones dwords in a vector register on
// AVX2 (vmaskmovps).
#pragma once

#include <cstdint>

#include <xbyak/xbyak.h>

#include "jit/jit_generator.hpp"

namespace blockdnn::impl {

/// Emits into `g` the mask of the first `lanes` lanes (0 < lanes < 16): with `opmask`, into
/// `k` through the 32-bit scratch `tmp`; else into vector `mask` (lanes < 8), from the pool.
template <typename Vmm>
void emit_tail_mask(
        jit_generator_t &g, bool opmask, int lanes, const Xbyak::Opmask &k, const Vmm &mask, const Xbyak::Reg32 &tmp) {
    if (opmask) {
        g.mov(tmp, (1u << lanes) - 1);
        g.kmovw(k, tmp);
    } else {
        std::uint32_t m[8];
        for (int i = 0; i < 8; ++i) m[i] = i < lanes ? 0xffffffffu : 0u;
        g.vmovups(mask, g.pool_data(m, sizeof m));
    }
}

/// v = a; when `tail`, only the lanes under the tail mask (the others zeroed).
template <bool opmask, typename Vmm>
void emit_load_tail(
        jit_generator_t &g, const Vmm &v, const Xbyak::Address &a, bool tail, const Xbyak::Opmask &k, const Vmm &mask) {
    if (!tail) g.vmovups(v, a);
    else if constexpr (opmask) g.vmovups(v | k | Xbyak::util::T_z, a);
    else g.vmaskmovps(v, mask, a);
}

/// a = v; when `tail`, only the lanes under the tail mask (memory past them untouched).
template <bool opmask, typename Vmm>
void emit_store_tail(
        jit_generator_t &g, const Xbyak::Address &a, const Vmm &v, bool tail, const Xbyak::Opmask &k, const Vmm &mask) {
    if (!tail) g.vmovups(a, v);
    else if constexpr (opmask) g.vmovups(a | k, v);
    else g.vmaskmovps(a, mask, v);
}

} // namespace blockdnn::impl
