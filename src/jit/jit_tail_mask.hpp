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

/// Emits into `g` the mask of the first `lanes` lanes, lanes (0 to simd_w) in rcx, known only at
/// run time: with `opmask`, into `k` as (1 << lanes) - 1 (shl counts in cl); else into vector
/// `mask`, simd_w lanes of a pool table of simd_w all-ones then simd_w zeros, starting `lanes`
/// lanes before the zeros. Clobbers rcx and `tmp`.
template <int simd_w, typename Vmm>
void emit_tail_mask_of_rcx(
        jit_generator_t &g, bool opmask, const Xbyak::Opmask &k, const Vmm &mask, const Xbyak::Reg64 &tmp) {
    if (opmask) {
        g.mov(tmp.cvt32(), 1);
        g.shl(tmp.cvt32(), g.cl);
        g.sub(tmp.cvt32(), 1);
        g.kmovw(k, tmp.cvt32());
        return;
    }
    std::uint32_t table[2 * simd_w];
    for (int i = 0; i < 2 * simd_w; ++i) table[i] = i < simd_w ? 0xffffffffu : 0u;
    g.lea(tmp, g.pool_data(table, sizeof table));
    g.neg(g.rcx);
    g.vmovups(mask, g.ptr[tmp + g.rcx * 4 + simd_w * 4]);
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

/// The loop a vector kernel runs over `count` floats (a register, decremented to 0): body(ur,
/// false) while ur vectors remain, then body(1, false) while one does, then body(1, true) for
/// the masked tail if any float is left; step(n_vecs) follows each unmasked body and moves the
/// kernel's pointers past its vectors.
template <typename Body, typename Step>
void emit_vector_loop(jit_generator_t &g, const Xbyak::Reg64 &count, int ur, int simd_w, Body body, Step step) {
    Xbyak::Label ur_loop, one_loop, tail, done;
    g.L(ur_loop);
    g.cmp(count, ur * simd_w);
    g.jl(one_loop, Xbyak::CodeGenerator::T_NEAR);
    body(ur, false);
    step(ur);
    g.sub(count, ur * simd_w);
    g.jmp(ur_loop, Xbyak::CodeGenerator::T_NEAR);
    g.L(one_loop);
    if (ur > 1) {
        g.cmp(count, simd_w);
        g.jl(tail, Xbyak::CodeGenerator::T_NEAR);
        body(1, false);
        step(1);
        g.sub(count, simd_w);
        g.jmp(one_loop, Xbyak::CodeGenerator::T_NEAR);
    }
    g.L(tail);
    g.test(count, count);
    g.jz(done, Xbyak::CodeGenerator::T_NEAR);
    body(1, true);
    g.L(done);
}

} // namespace blockdnn::impl
