// SPDX-License-Identifier: Apache-2.0
// Phase-1 activation pieces appended into a host kernel (until the foundation's eltwise
// injector lands): exp, sigmoid, tanh, relu on one vector register, AVX-512 and AVX2.
//
// Accuracy (f32 against double, over [-100, 100] densely and tiny |x|; test_rnn_jit's
// rnn_jit_act.accuracy measures it and holds these bounds, both ISAs):
//   exp(x):     x clamped to [-87.34, 88]; 2^n p(r), n = round(x / ln 2), r = x - n ln 2 with a
//               two-part ln 2 (Cody & Waite), p the degree-7 Taylor polynomial (truncation
//               < 6e-9 relative on |r| <= ln 2 / 2); within 2 ulp (measured 0.84).
//   sigmoid(x): 1 / (1 + exp(-x)), the reciprocal by rcp and one Newton step; within 4 ulp
//               (measured 3.0) where sigmoid(x) >= 2^-126, below that absolute error < 1.2e-38.
//   tanh(x):    |x| < 0.625: x + x^3 q(x^2), q a degree-4 reweighted least-squares fit made
//               for this file (< 1 ulp alone); else sign(x) (1 - 2 / (1 + exp(2|x|)));
//               within 3 ulp (measured 1.44).
#pragma once

#include <cstdint>
#include <cstring>

#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"
#include "jit/jit_kernel_base.hpp"

namespace blockdnn::impl {

template <isa level>
class jit_rnn_act_t {
public:
    using Vmm = typename jit_isa_traits_t<level>::Vmm;
    static constexpr bool is_avx512 = level == isa::avx512_core;

    /// `h` is the host generator; `table` the label at which the host places emit_table().
    /// `k_tmp` is an opmask the pieces may clobber (AVX-512 only).
    jit_rnn_act_t(Xbyak::CodeGenerator &h, const Xbyak::Label &table, const Xbyak::Opmask &k_tmp)
        : h_(h), table_(table), k_tmp_(k_tmp) {}

    /// x = exp(x). Clobbers t1, t2.
    void exp(const Vmm &x, const Vmm &t1, const Vmm &t2) {
        h_.vminps(x, x, c(exp_hi));
        h_.vmaxps(x, x, c(exp_lo));
        h_.vmulps(t1, x, c(log2e));
        round(t1);                              // n
        h_.vfnmadd231ps(x, t1, c(ln2_hi));      // r = x - n ln2_hi - n ln2_lo
        h_.vfnmadd231ps(x, t1, c(ln2_lo));
        h_.vmovups(t2, c(poly7));               // p(r), Horner from r^7 / 7! down to 1
        for (int k = poly6; k >= poly0; --k) h_.vfmadd213ps(t2, x, c(k));
        h_.vcvtps2dq(t1, t1);                   // 2^n: n added to the exponent field of p(r)
        h_.vpslld(t1, t1, 23);
        h_.vpaddd(x, t2, t1);
    }

    /// x = sigmoid(x). Clobbers t1, t2.
    void sigmoid(const Vmm &x, const Vmm &t1, const Vmm &t2) {
        h_.vxorps(x, x, c(sign_mask));          // -x
        exp(x, t1, t2);
        h_.vaddps(x, x, c(one));
        reciprocal(x, t1);
    }

    /// x = tanh(x). Clobbers t1, t2, t3 (AVX2: the small-|x| mask), t4 (x's input).
    void tanh(const Vmm &x, const Vmm &t1, const Vmm &t2, const Vmm &t3, const Vmm &t4) {
        h_.vmovaps(t4, x);
        // Large |x|: sign(x) (1 - 2 / (1 + exp(2|x|))), into x.
        h_.vandps(t1, x, c(sign_mask));
        h_.vxorps(x, x, t1);                    // |x|
        if constexpr (is_avx512) h_.vcmpps(k_tmp_, x, c(tanh_thr), 1 /* LT_OS */);
        else h_.vcmpps(t3, x, c(tanh_thr), 1 /* LT_OS */);
        h_.vaddps(x, x, x);
        exp(x, t1, t2);
        h_.vaddps(x, x, c(one));
        reciprocal(x, t1);
        h_.vaddps(x, x, x);                     // 2 / (1 + e)
        h_.vmovups(t1, c(one));
        h_.vsubps(x, t1, x);
        h_.vandps(t1, t4, c(sign_mask));
        h_.vorps(x, x, t1);
        // Small |x|: x + x^3 q(x^2), into t1; then pick per lane.
        h_.vmulps(t1, t4, t4);
        h_.vmovups(t2, c(tanh_q4));
        for (int k = tanh_q3; k >= tanh_q0; --k) h_.vfmadd213ps(t2, t1, c(k));
        h_.vmulps(t1, t1, t4);
        h_.vfmadd213ps(t1, t2, t4);
        if constexpr (is_avx512) h_.vblendmps(x | k_tmp_, x, t1);
        else h_.vblendvps(x, x, t1, t3);
    }

    /// x = x > 0 ? x : alpha x, alpha at slot relu_alpha (set by emit_table).
    void relu(const Vmm &x, const Vmm &t1, const Vmm &t2) {
        if constexpr (is_avx512) {
            h_.vpxord(t1, t1, t1);
            h_.vcmpps(k_tmp_, x, t1, 1 /* LT_OS */);
            h_.vmulps(x | k_tmp_, x, c(relu_alpha));
        } else {
            h_.vmulps(t1, x, c(relu_alpha));
            h_.vxorps(t2, t2, t2);
            h_.vcmpltps(t2, x, t2);
            h_.vblendvps(x, x, t1, t2);
        }
    }

    /// Constant `slot` as a full vector operand (every slot is 64 bytes, so it reads the same for
    /// zmm and ymm, and AVX2 needs no broadcast).
    Xbyak::Address c(int slot) const { return h_.ptr[h_.rip + table_ + slot * 64]; }

    /// The constants, 64-byte aligned; the host calls this after its code, at `table`.
    void emit_table(float relu_alpha_value) {
        h_.align(64);
        h_.L(const_cast<Xbyak::Label &>(table_));
        for (int s = 0; s < n_slots; ++s) {
            std::uint32_t bits = slot_bits(s, relu_alpha_value);
            for (int i = 0; i < 16; ++i) h_.dd(bits);
        }
    }

    enum slot_t {
        one, sign_mask, exp_hi, exp_lo, log2e, ln2_hi, ln2_lo,
        poly0, poly1, poly2, poly3, poly4, poly5, poly6, poly7,
        tanh_thr, tanh_q0, tanh_q1, tanh_q2, tanh_q3, tanh_q4, relu_alpha, n_slots
    };

private:
    void round(const Vmm &x) {
        if constexpr (is_avx512) h_.vrndscaleps(x, x, 0);
        else h_.vroundps(x, x, 0);
    }
    // x = 1 / x: rcp (12 bits on AVX2, 14 on AVX-512) and one Newton step, y + y (1 - x y).
    void reciprocal(const Vmm &x, const Vmm &t) {
        if constexpr (is_avx512) h_.vrcp14ps(t, x);
        else h_.vrcpps(t, x);
        h_.vfnmadd213ps(x, t, c(one));          // 1 - x y
        h_.vfmadd132ps(x, t, t);                // y + y (1 - x y)
    }

    static std::uint32_t bits_of(float f) {
        std::uint32_t b;
        std::memcpy(&b, &f, 4);
        return b;
    }
    static std::uint32_t slot_bits(int s, float relu_alpha_value) {
        switch (s) {
        case one: return bits_of(1.f);
        case sign_mask: return 0x80000000u;
        case exp_hi: return bits_of(88.0f);
        case exp_lo: return bits_of(-87.336544f);
        case log2e: return bits_of(1.44269504f);
        case ln2_hi: return bits_of(0.693359375f);
        case ln2_lo: return bits_of(-2.12194440e-4f);
        case poly0: return bits_of(1.f);
        case poly1: return bits_of(1.f);
        case poly2: return bits_of(1.f / 2);
        case poly3: return bits_of(1.f / 6);
        case poly4: return bits_of(1.f / 24);
        case poly5: return bits_of(1.f / 120);
        case poly6: return bits_of(1.f / 720);
        case poly7: return bits_of(1.f / 5040);
        case tanh_thr: return bits_of(0.625f);
        // q(s) ~ (tanh(x) - x) / x^3 with s = x^2 on (0, 0.625], reweighted least squares.
        case tanh_q0: return bits_of(-0.3333328068256378f);
        case tanh_q1: return bits_of(0.13331441581249237f);
        case tanh_q2: return bits_of(-0.05373971536755562f);
        case tanh_q3: return bits_of(0.02063908614218235f);
        case tanh_q4: return bits_of(-0.005704986397176981f);
        case relu_alpha: return bits_of(relu_alpha_value);
        default: return 0;
        }
    }

    Xbyak::CodeGenerator &h_;
    const Xbyak::Label &table_;
    Xbyak::Opmask k_tmp_;
};

} // namespace blockdnn::impl
