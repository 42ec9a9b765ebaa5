// SPDX-License-Identifier: Apache-2.0
// Phase-1 activation pieces appended into a host kernel (until the foundation's eltwise
// injector lands): exp, sigmoid, tanh, relu on one vector register, AVX-512 and AVX2.
//
// Accuracy (f32 against double, over [-100, 100] densely and tiny |x|; test_rnn_jit's
// rnn_jit_act.accuracy measures it and holds these bounds, both ISAs):
//   exp(x):     x clamped to [-87.34, 88]; 2^n (1 + r P(r)), n = round(x / ln 2), r = x - n ln 2
//               with a two-part ln 2 (Cody & Waite); r P(r) approximates expm1(r) on
//               |r| <= ln 2 / 2, P of degree 5 from a reweighted least-squares (minimax-like) fit
//               made for this file (1.3e-7 relative); within 2 ulp.
//   sigmoid(x): 1 / (1 + exp(-x)), the reciprocal by rcp and one Newton step; within 4 ulp
//               where sigmoid(x) >= 2^-126, below that absolute error < 1.2e-38.
//   tanh(x):    sign(x) e / (e + 2), e = expm1(2|x|) = 2^n r P(r) + (2^n - 1) (accurate near 0,
//               where 2^n - 1 = 0), 2|x| clamped to 40 (tanh = 1 in f32 well before); within
//               4 ulp. A NaN input gives +-1, not NaN.
// Each piece is one straight sequence (no blends), so AVX-512 and AVX2 run the same steps; on
// AVX-512, vscalefps forms 2^n (AVX2 adds n to the exponent field).
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
        reduce(x, t1, t2);                      // x = r, t1 = n, t2 = P(r)
        h_.vfmadd213ps(x, t2, c(one));          // 1 + r P(r)
        scale(x, t1, t2);                       // x 2^n
    }

    /// x = sigmoid(x). Clobbers t1, t2.
    void sigmoid(const Vmm &x, const Vmm &t1, const Vmm &t2) {
        h_.vxorps(x, x, c(sign_mask));          // -x
        exp(x, t1, t2);
        h_.vaddps(x, x, c(one));
        reciprocal(x, t1);
    }

    /// x = tanh(x). Clobbers t1, t2, t3, t4.
    void tanh(const Vmm &x, const Vmm &t1, const Vmm &t2, const Vmm &t3, const Vmm &t4) {
        h_.vandps(t3, x, c(sign_mask));         // sign(x), kept to the end
        h_.vxorps(x, x, t3);                    // |x|
        h_.vaddps(x, x, x);
        h_.vminps(x, x, c(tanh_hi));
        reduce(x, t1, t2);                      // x = r, t1 = n, t2 = P(r)
        h_.vmulps(t2, t2, x);                   // expm1(r)
        h_.vmovups(x, c(one));
        scale(x, t1, t4);                       // s = 2^n
        h_.vsubps(t4, x, c(one));               // s - 1 (exact)
        h_.vfmadd213ps(t2, x, t4);              // e = s expm1(r) + s - 1
        h_.vaddps(x, t2, c(two));
        reciprocal(x, t1);
        h_.vmulps(x, x, t2);                    // e / (e + 2)
        h_.vorps(x, x, t3);
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
        one, two, sign_mask, exp_hi, exp_lo, tanh_hi, log2e, ln2_hi, ln2_lo,
        p0, p1, p2, p3, p4, p5, relu_alpha, n_slots
    };

private:
    // Range reduction of x (already clamped): t1 = n = round(x / ln 2), x = r = x - n ln 2,
    // t2 = P(r) with r P(r) ~ expm1(r).
    void reduce(const Vmm &x, const Vmm &t1, const Vmm &t2) {
        h_.vmulps(t1, x, c(log2e));
        if constexpr (is_avx512) h_.vrndscaleps(t1, t1, 0);
        else h_.vroundps(t1, t1, 0);
        h_.vfnmadd231ps(x, t1, c(ln2_hi));
        h_.vfnmadd231ps(x, t1, c(ln2_lo));
        h_.vmovups(t2, c(p5));
        for (int k = p4; k >= p0; --k) h_.vfmadd213ps(t2, x, c(k));
    }
    // x = x 2^n for n = t1 (an integral float). AVX2 adds n to x's exponent field, which holds
    // for the x this file scales (1 + r P(r) in [0.7, 1.5], or 1). Clobbers t (AVX2).
    void scale(const Vmm &x, const Vmm &n, const Vmm &t) {
        if constexpr (is_avx512) {
            h_.vscalefps(x, x, n);
        } else {
            h_.vcvtps2dq(t, n);
            h_.vpslld(t, t, 23);
            h_.vpaddd(x, x, t);
        }
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
        case two: return bits_of(2.f);
        case sign_mask: return 0x80000000u;
        case exp_hi: return bits_of(88.0f);      // exp(88) < FLT_MAX, and n <= 127
        case exp_lo: return bits_of(-87.336544f); // n >= -126: 2^n stays normal
        case tanh_hi: return bits_of(40.f);      // 2|x| beyond this: tanh(x) = +-1 in f32
        case log2e: return bits_of(1.44269504f);
        case ln2_hi: return bits_of(0.693359375f); // 9 significant bits: n ln2_hi is exact
        case ln2_lo: return bits_of(-2.12194440e-4f);
        // P(r) ~ expm1(r) / r on |r| <= ln 2 / 2: reweighted least squares for the relative
        // error of r P(r), rounded to f32.
        case p0: return bits_of(1.0f);
        case p1: return bits_of(0.4999999701976776f);
        case p2: return bits_of(0.16666506230831146f);
        case p3: return bits_of(0.041667137295007706f);
        case p4: return bits_of(0.00836906861513853f);
        case p5: return bits_of(0.0013888872927054763f);
        case relu_alpha: return bits_of(relu_alpha_value);
        default: return 0;
        }
    }

    Xbyak::CodeGenerator &h_;
    const Xbyak::Label &table_;
    Xbyak::Opmask k_tmp_;
};

} // namespace blockdnn::impl
