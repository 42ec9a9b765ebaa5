// SPDX-License-Identifier: Apache-2.0
// The eltwise injector: code that applies y = f(x; alpha, beta) in place to vector registers
// of a host kernel: the standalone eltwise kernel, conv's eltwise post-ops and the RNN cell's
// activations.
#pragma once

#include <cstddef>
#include <vector>

#include "blockdnn/eltwise_alg.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_generator.hpp"

namespace blockdnn::impl {

/// Appends eltwise code into `host`. The host owns every register; it lends the injector the
/// vector registers [tmp_first, tmp_first + n_tmp) and, on AVX-512, the opmask `k_tmp`, all of
/// which compute() may clobber. Constants go into the host's RIP-relative pool, so no
/// general-purpose register is used.
///
/// compute() processes its value registers step by step across all of them (every step is
/// emitted for value 0, 1, ... before the next step), so independent values overlap in the
/// pipeline; each value needs n_vtemps(alg) temporaries of its own.
///
/// Numerics (both ISAs give the same results, lane for lane):
/// - exp: x clamped to [-87.5, 88.76], n = round(x log2 e), r = x - n ln2 (ln2 split in two,
///   Cody & Waite), exp(r) by its Taylor polynomial of degree 7, times 2^n (vscalefps on
///   AVX-512; two exact power-of-two factors on AVX2). Results below FLT_MIN flush to 0.
/// - expm1 (elu, tanh): same reduction, expm1(x) = 2 (2^(n-1) expm1(r) + 2^(n-1) - 1/2), which
///   keeps full relative accuracy near 0.
/// - tanh(x) = sign(x) e / (e + 2) with e = expm1(min(2|x|, 20)).
/// - sigmoid(x) = 1 / (1 + exp(-x)); swish = x / (1 + exp(-alpha x));
///   gelu_tanh = x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3))) (= 0.5 x (1 + tanh(...))).
/// - gelu_erf = x Phi(x), Phi from erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2), P of degree 9
///   (Numerical Recipes in C, 2nd ed., section 6.2, erfcc: fractional error < 1.2e-7), with -z^2
///   carried as an exact sum of two floats; x is clamped to [-14, 14] inside Phi.
/// - log: x = m 2^e with m in [sqrt(1/2), sqrt(2)) (denormal x scaled by 2^23 first);
///   log m = 2 atanh(s), s = (m-1)/(m+1), by its series to s^9; log x = e ln2 + log m;
///   log(0) = -inf, log(x<0) = NaN, log(inf) = inf.
/// - NaN in gives NaN out for every alg (clamps are written so that NaN passes).
template <isa level>
class jit_eltwise_injector_t {
public:
    using Vmm = typename isa_traits_t<level>::Vmm;

    /// Temporaries compute() needs per value register for `alg`.
    static int n_vtemps(eltwise_alg alg);

    jit_eltwise_injector_t(jit_generator_t &host, eltwise_alg alg, float alpha, float beta, int tmp_first, int n_tmp,
            Xbyak::Opmask k_tmp = Xbyak::Opmask(7));

    /// Applies f in place to the vector registers with indices `vals`. Needs
    /// vals.size() * n_vtemps(alg) <= n_tmp; throws std::logic_error otherwise (caught by
    /// jit_generator_t::create as a runtime_error).
    void compute(const std::vector<int> &vals);
    /// Same, for registers [first, first + n).
    void compute(int first, int n);

private:
    Vmm val(int i) const { return Vmm(vals_[i]); }
    Vmm tmp(int i, int j) const; // temporary j of value i
    // One register role of an algorithm as a function of the value index: the value itself
    // (value()) or its temporary j (temp(j)). The building blocks take such functions.
    struct reg_fn_t {
        const jit_eltwise_injector_t *self;
        int j; // -1: the value
        Vmm operator()(int i) const { return j < 0 ? self->val(i) : self->tmp(i, j); }
    };
    reg_fn_t value() const { return {this, -1}; }
    reg_fn_t temp(int j) const { return {this, j}; }
    template <typename F>
    void each(F &&f) {
        for (int i = 0; i < static_cast<int>(vals_.size()); ++i) f(i);
    }

    // Building blocks. Register arguments are functions of the value index.
    template <typename X, typename T>
    void clamp(X x, T t, float lo, float hi);
    template <typename X, typename N>
    void exp_reduce(X x, N n);
    // acc = the polynomial with coefficients p (highest degree first) at x, by Horner's rule.
    template <typename A, typename X, std::size_t N>
    void horner(A acc, X x, const float (&p)[N]);
    template <typename R, typename Q>
    void exp_poly_inner(R r, Q q);
    template <typename X, typename N, typename P>
    void scale_by_pow2(X x, N n, P p);
    template <typename X, typename M>
    void flush_to_zero(X x, M m);
    template <typename X, typename N, typename P>
    void exp_body(X x, N n, P p);
    template <typename X, typename N, typename Q>
    void expm1_body(X x, N n, Q q);
    // x = s / (1 + exp(x)), x clamped to exp's range first (n, p: exp_body's temporaries).
    template <typename X, typename N, typename P, typename S>
    void div_one_plus_exp(X x, N n, P p, S s);
    // dst = (mask of value i) ? src : dst, with mask set by the last cmp_mask(i, ...).
    template <typename M>
    void cmp_mask(int i, M mask_vmm, const Vmm &a, const Xbyak::Operand &b, int pred);
    template <typename M>
    void blend(int i, M mask_vmm, const Vmm &dst, const Xbyak::Operand &src);
    // dst = (the sign bit of s is set) ? a : dst, lane by lane.
    void blend_by_sign(const Vmm &dst, const Vmm &a, const Vmm &s);

    void relu();
    void linear();
    void clip();
    void exp();
    void sigmoid();
    void swish();
    void gelu_tanh();
    void elu();
    void tanh();
    void log();
    void gelu_erf();

    jit_generator_t &h_;
    eltwise_alg alg_;
    float alpha_, beta_;
    int tmp_first_, n_tmp_;
    Xbyak::Opmask k_;
    std::vector<int> vals_;
};

} // namespace blockdnn::impl
