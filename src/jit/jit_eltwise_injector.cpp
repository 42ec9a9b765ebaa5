// SPDX-License-Identifier: Apache-2.0
// The eltwise injector's code, per algorithm (numerics documented in the header).
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "jit/jit_eltwise_injector.hpp"

namespace blockdnn::impl {

namespace {

// vcmpps predicates (Intel SDM, CMPPS imm8).
constexpr int cmp_eq_oq = 0x00;
constexpr int cmp_lt_oq = 0x11;
constexpr int cmp_nlt_uq = 0x15;
constexpr int cmp_gt_oq = 0x1e;

constexpr float flt_min = std::numeric_limits<float>::min();
constexpr float f_inf = std::numeric_limits<float>::infinity();
constexpr std::uint32_t sign_mask = 0x80000000u, abs_mask = 0x7fffffffu;

// exp: clamp bounds. Above 88.76 every result overflows to +inf (ln FLT_MAX = 88.7228);
// below -87.5 every result is under FLT_MIN (ln FLT_MIN = -87.3365) and flushes to 0.
constexpr float exp_hi = 88.76f, exp_lo = -87.5f;
constexpr float log2e = 1.44269504088896341f;
// ln 2 = ln2_hi + ln2_lo; ln2_hi has 9 trailing zero bits, so n * ln2_hi is exact for |n| < 2^9.
constexpr float ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187e-06f;
// Taylor coefficients of (exp(r) - 1) / r = 1 + r/2! + r^2/3! + ... + r^6/7!, highest first.
constexpr float expm1_over_r[] = {1.f / 5040, 1.f / 720, 1.f / 120, 1.f / 24, 1.f / 6, 1.f / 2, 1.f};

// tanh: tanh(10) = 1 - 4e-9 rounds to 1, so 2|x| is clamped at 20 (keeps e / (e + 2) finite).
constexpr float tanh_2x_max = 20.f;

// gelu_tanh: -2 z = x (c0 + c1 x^2), z = sqrt(2/pi) (x + 0.044715 x^3).
constexpr double sqrt_2_over_pi = 0.79788456080286535588;
constexpr float gelu_c0 = static_cast<float>(-2 * sqrt_2_over_pi);
constexpr float gelu_c1 = static_cast<float>(-2 * sqrt_2_over_pi * 0.044715);

// gelu_erf: erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2); P's coefficients, t^9 first
// (Numerical Recipes in C, 2nd ed., section 6.2, erfcc).
constexpr float erfc_p[] = {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
        0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f};
// |x| beyond 14 gives Phi = 1 or a result below FLT_MIN, so x is clamped there inside Phi.
constexpr float gelu_erf_x_max = 14.f;
constexpr float half_over_sqrt2 = 0.35355339059327376f; // z / 2 = |x| / (2 sqrt 2)

// log: series of log(m) = 2 atanh(s) = 2 s + s^3 (2/3 + s^2 (2/5 + s^2 (2/7 + s^2 2/9))).
constexpr float log_p[] = {2.f / 9, 2.f / 7, 2.f / 5, 2.f / 3};
constexpr float sqrt2 = 1.41421356237309505f;
constexpr float two_pow_23 = 8388608.f;

} // namespace

template <isa level>
int jit_eltwise_injector_t<level>::n_vtemps(eltwise_alg alg) {
    switch (alg) {
    case eltwise_alg::relu:
    case eltwise_alg::linear:
    case eltwise_alg::clip: return 1;
    case eltwise_alg::exp:
    case eltwise_alg::sigmoid: return 2;
    case eltwise_alg::swish:
    case eltwise_alg::gelu_tanh:
    case eltwise_alg::elu:
    case eltwise_alg::tanh: return 3;
    case eltwise_alg::log:
    case eltwise_alg::gelu_erf: return 4;
    }
    return 4;
}

template <isa level>
jit_eltwise_injector_t<level>::jit_eltwise_injector_t(
        jit_generator_t &host, eltwise_alg alg, float alpha, float beta, int tmp_first, int n_tmp, Xbyak::Opmask k_tmp)
    : h_(host), alg_(alg), alpha_(alpha), beta_(beta), tmp_first_(tmp_first), n_tmp_(n_tmp), k_(k_tmp) {}

template <isa level>
typename jit_eltwise_injector_t<level>::Vmm jit_eltwise_injector_t<level>::tmp(int i, int j) const {
    const int nt = n_vtemps(alg_);
    if (j >= nt || (i + 1) * nt > n_tmp_)
        throw std::logic_error("eltwise injector: temporary " + std::to_string(i * nt + j) + " outside the "
                + std::to_string(n_tmp_) + " lent by the host");
    return Vmm(tmp_first_ + i * nt + j);
}

template <isa level>
void jit_eltwise_injector_t<level>::compute(int first, int n) {
    std::vector<int> v(n);
    for (int i = 0; i < n; ++i) v[i] = first + i;
    compute(v);
}

template <isa level>
void jit_eltwise_injector_t<level>::compute(const std::vector<int> &vals) {
    vals_ = vals;
    if (vals_.empty()) return;
    tmp(static_cast<int>(vals_.size()) - 1, n_vtemps(alg_) - 1); // checks the budget up front
    switch (alg_) {
    case eltwise_alg::relu: relu(); break;
    case eltwise_alg::linear: linear(); break;
    case eltwise_alg::clip: clip(); break;
    case eltwise_alg::exp: exp(); break;
    case eltwise_alg::sigmoid: sigmoid(); break;
    case eltwise_alg::swish: swish(); break;
    case eltwise_alg::gelu_tanh: gelu_tanh(); break;
    case eltwise_alg::elu: elu(); break;
    case eltwise_alg::tanh: tanh(); break;
    case eltwise_alg::log: log(); break;
    case eltwise_alg::gelu_erf: gelu_erf(); break;
    }
}

// ---- building blocks ----

template <isa level>
template <typename M>
void jit_eltwise_injector_t<level>::cmp_mask(int i, M mask_vmm, const Vmm &a, const Xbyak::Operand &b, int pred) {
    if constexpr (level == isa::avx512_core) h_.vcmpps(k_, a, b, pred);
    else h_.vcmpps(mask_vmm(i), a, b, pred);
}

template <isa level>
template <typename M>
void jit_eltwise_injector_t<level>::blend(int i, M mask_vmm, const Vmm &dst, const Xbyak::Operand &src) {
    if constexpr (level == isa::avx512_core) {
        if (src.isMEM()) h_.vmovups(dst | k_, static_cast<const Xbyak::Address &>(src));
        else h_.vmovaps(dst | k_, static_cast<const Vmm &>(src));
    } else {
        h_.vblendvps(dst, dst, src, mask_vmm(i));
    }
}

// x = min(max(x, lo), hi) with t as scratch. The constant is the first source so that a NaN x
// (the second source) is what maxps/minps return.
template <isa level>
void jit_eltwise_injector_t<level>::blend_by_sign(const Vmm &dst, const Vmm &a, const Vmm &s) {
    if constexpr (level == isa::avx512_core) {
        h_.vpmovd2m(k_, s);
        h_.vmovaps(dst | k_, a);
    } else {
        h_.vblendvps(dst, dst, a, s);
    }
}

template <isa level>
template <typename X, typename T>
void jit_eltwise_injector_t<level>::clamp(X x, T t, float lo, float hi) {
    each([&](int i) {
        h_.vmovups(t(i), h_.vconst(hi));
        h_.vminps(x(i), t(i), x(i));
    });
    each([&](int i) {
        h_.vmovups(t(i), h_.vconst(lo));
        h_.vmaxps(x(i), t(i), x(i));
    });
}

// n = round(x log2 e); x = x - n ln2 (two steps, so r is exact for the n we use).
template <isa level>
template <typename X, typename N>
void jit_eltwise_injector_t<level>::exp_reduce(X x, N n) {
    each([&](int i) { h_.vmulps(n(i), x(i), h_.vconst(log2e)); });
    each([&](int i) {
        if constexpr (level == isa::avx512_core) h_.vrndscaleps(n(i), n(i), 0); // nearest even
        else h_.vroundps(n(i), n(i), 0);
    });
    each([&](int i) { h_.vfnmadd231ps(x(i), n(i), h_.vconst(ln2_hi)); });
    each([&](int i) { h_.vfnmadd231ps(x(i), n(i), h_.vconst(ln2_lo)); });
}

template <isa level>
template <typename A, typename X, std::size_t N>
void jit_eltwise_injector_t<level>::horner(A acc, X x, const float (&p)[N]) {
    each([&](int i) { h_.vmovups(acc(i), h_.vconst(p[0])); });
    for (std::size_t k = 1; k < N; ++k) each([&](int i) { h_.vfmadd213ps(acc(i), x(i), h_.vconst(p[k])); });
}

// q = (exp(r) - 1) / r by Horner.
template <isa level>
template <typename R, typename Q>
void jit_eltwise_injector_t<level>::exp_poly_inner(R r, Q q) {
    horner(q, r, expm1_over_r);
}

// x = p * 2^n for integral n in [-150, 128]; p and n are clobbered on AVX2. On AVX2 the power
// is built as two factors 2^(n>>1) and 2^(n-(n>>1)), each a normal float, so the product
// rounds once into the denormal range or overflows to inf exactly like vscalefps.
template <isa level>
template <typename X, typename N, typename P>
void jit_eltwise_injector_t<level>::scale_by_pow2(X x, N n, P p) {
    if constexpr (level == isa::avx512_core) {
        each([&](int i) { h_.vscalefps(x(i), p(i), n(i)); });
    } else {
        each([&](int i) { h_.vcvtps2dq(n(i), n(i)); });
        each([&](int i) { h_.vpsrad(x(i), n(i), 1); });
        each([&](int i) { h_.vpsubd(n(i), n(i), x(i)); });
        each([&](int i) { h_.vpaddd(x(i), x(i), h_.vconst_u32(127)); });
        each([&](int i) { h_.vpaddd(n(i), n(i), h_.vconst_u32(127)); });
        each([&](int i) { h_.vpslld(x(i), x(i), 23); });
        each([&](int i) { h_.vpslld(n(i), n(i), 23); });
        each([&](int i) { h_.vmulps(p(i), p(i), x(i)); });
        each([&](int i) { h_.vmulps(x(i), p(i), n(i)); });
    }
}

// x = exp(x) for x already clamped to [exp_lo, exp_hi] (or NaN); results below FLT_MIN are 0.
template <isa level>
template <typename X, typename N, typename P>
void jit_eltwise_injector_t<level>::exp_body(X x, N n, P p) {
    exp_reduce(x, n);
    exp_poly_inner(x, p);
    each([&](int i) { h_.vfmadd213ps(p(i), x(i), h_.vconst(1.f)); }); // p = 1 + r q = exp(r)
    scale_by_pow2(x, n, p);
    flush_to_zero(x, n);
}

// x = 0 where 0 <= x < FLT_MIN (x is known non-negative); m is scratch (AVX2 mask). The
// unordered predicate keeps NaN.
template <isa level>
template <typename X, typename M>
void jit_eltwise_injector_t<level>::flush_to_zero(X x, M m) {
    each([&](int i) {
        if constexpr (level == isa::avx512_core) {
            h_.vcmpps(k_, x(i), h_.vconst(flt_min), cmp_nlt_uq);
            h_.vmovaps(x(i) | k_ | Xbyak::util::T_z, x(i));
        } else {
            h_.vcmpps(m(i), x(i), h_.vconst(flt_min), cmp_nlt_uq);
            h_.vandps(x(i), x(i), m(i));
        }
    });
}

// x = expm1(x) for x in [exp_lo, exp_hi] (or NaN): 2 (t q + t - 1/2), t = 2^(n-1), q = expm1(r).
// t is built from n's bits on both ISAs; n - 1 = -127 gives t = +0, which is right there.
template <isa level>
template <typename X, typename N, typename Q>
void jit_eltwise_injector_t<level>::expm1_body(X x, N n, Q q) {
    exp_reduce(x, n);
    exp_poly_inner(x, q);
    each([&](int i) { h_.vmulps(q(i), q(i), x(i)); });
    each([&](int i) { h_.vcvtps2dq(n(i), n(i)); });
    each([&](int i) { h_.vpaddd(n(i), n(i), h_.vconst_u32(126)); });
    each([&](int i) { h_.vpslld(n(i), n(i), 23); });
    each([&](int i) { h_.vsubps(x(i), n(i), h_.vconst(0.5f)); });
    each([&](int i) { h_.vfmadd231ps(x(i), n(i), q(i)); });
    each([&](int i) { h_.vaddps(x(i), x(i), x(i)); });
}

template <isa level>
template <typename X, typename N, typename P, typename S>
void jit_eltwise_injector_t<level>::div_one_plus_exp(X x, N n, P p, S s) {
    clamp(x, n, exp_lo, exp_hi);
    exp_body(x, n, p);
    each([&](int i) { h_.vaddps(x(i), x(i), h_.vconst(1.f)); });
    each([&](int i) { h_.vdivps(x(i), s(i), x(i)); });
}

// ---- algorithms ----

template <isa level>
void jit_eltwise_injector_t<level>::relu() {
    const reg_fn_t t = temp(0);
    if (alpha_ == 0.f) {
        // max(0, x) with x second, so NaN passes.
        each([&](int i) { h_.vxorps(t(i), t(i), t(i)); });
        each([&](int i) { h_.vmaxps(val(i), t(i), val(i)); });
        return;
    }
    each([&](int i) { h_.vmulps(t(i), val(i), h_.vconst(alpha_)); });
    // Select alpha x where x's sign bit is set (negative numbers and -0), as x > 0 ? x : alpha x.
    each([&](int i) { blend_by_sign(val(i), t(i), val(i)); });
}

template <isa level>
void jit_eltwise_injector_t<level>::linear() {
    const reg_fn_t t = temp(0);
    each([&](int i) { h_.vmovups(t(i), h_.vconst(alpha_)); });
    each([&](int i) { h_.vfmadd213ps(val(i), t(i), h_.vconst(beta_)); });
}

template <isa level>
void jit_eltwise_injector_t<level>::clip() {
    clamp(value(), temp(0), alpha_, beta_);
}

template <isa level>
void jit_eltwise_injector_t<level>::exp() {
    const reg_fn_t x = value(), n = temp(0), p = temp(1);
    clamp(x, n, exp_lo, exp_hi);
    exp_body(x, n, p);
}

template <isa level>
void jit_eltwise_injector_t<level>::sigmoid() {
    const reg_fn_t x = value(), n = temp(0), p = temp(1);
    each([&](int i) { h_.vxorps(x(i), x(i), h_.vconst_u32(sign_mask)); });
    clamp(x, n, exp_lo, exp_hi);
    exp_body(x, n, p);
    each([&](int i) { h_.vaddps(x(i), x(i), h_.vconst(1.f)); });
    each([&](int i) { h_.vmovups(n(i), h_.vconst(1.f)); });
    each([&](int i) { h_.vdivps(x(i), n(i), x(i)); });
}

template <isa level>
void jit_eltwise_injector_t<level>::swish() {
    const reg_fn_t x = value(), n = temp(0), p = temp(1), src = temp(2);
    each([&](int i) { h_.vmovaps(src(i), x(i)); });
    each([&](int i) { h_.vmulps(x(i), x(i), h_.vconst(-alpha_)); });
    div_one_plus_exp(x, n, p, src);
}

template <isa level>
void jit_eltwise_injector_t<level>::gelu_tanh() {
    const reg_fn_t x = value(), n = temp(0), p = temp(1), src = temp(2);
    each([&](int i) { h_.vmovaps(src(i), x(i)); });
    each([&](int i) { h_.vmulps(x(i), x(i), x(i)); });
    each([&](int i) { h_.vmovups(n(i), h_.vconst(gelu_c1)); });
    each([&](int i) { h_.vfmadd213ps(x(i), n(i), h_.vconst(gelu_c0)); });
    each([&](int i) { h_.vmulps(x(i), x(i), src(i)); }); // -2 z
    div_one_plus_exp(x, n, p, src);
}

template <isa level>
void jit_eltwise_injector_t<level>::elu() {
    const reg_fn_t x = value(), n = temp(0), q = temp(1), src = temp(2);
    each([&](int i) { h_.vmovaps(src(i), x(i)); });
    clamp(x, n, exp_lo, exp_hi);
    expm1_body(x, n, q);
    each([&](int i) { h_.vmulps(x(i), x(i), h_.vconst(alpha_)); });
    each([&](int i) {
        cmp_mask(i, n, src(i), h_.vconst(0.f), cmp_gt_oq);
        blend(i, n, x(i), src(i));
    });
}

template <isa level>
void jit_eltwise_injector_t<level>::tanh() {
    const reg_fn_t x = value(), n = temp(0), q = temp(1), sign = temp(2);
    each([&](int i) { h_.vandps(sign(i), x(i), h_.vconst_u32(sign_mask)); });
    each([&](int i) { h_.vandps(x(i), x(i), h_.vconst_u32(abs_mask)); });
    each([&](int i) { h_.vaddps(x(i), x(i), x(i)); });
    each([&](int i) {
        h_.vmovups(n(i), h_.vconst(tanh_2x_max));
        h_.vminps(x(i), n(i), x(i));
    });
    expm1_body(x, n, q);
    each([&](int i) { h_.vaddps(n(i), x(i), h_.vconst(2.f)); });
    each([&](int i) { h_.vdivps(x(i), x(i), n(i)); });
    each([&](int i) { h_.vorps(x(i), x(i), sign(i)); });
}

template <isa level>
void jit_eltwise_injector_t<level>::log() {
    const reg_fn_t x = value(), src = temp(0), e = temp(1), t = temp(2);
    const reg_fn_t m = temp(3); // AVX2 mask, later the polynomial
    each([&](int i) { h_.vmovaps(src(i), x(i)); });
    // Denormals (and 0, negatives: fixed below): x *= 2^23, e starts at -23; others e = 0.
    each([&](int i) {
        cmp_mask(i, m, x(i), h_.vconst(flt_min), cmp_lt_oq);
        if constexpr (level == isa::avx512_core) {
            h_.vmulps(x(i) | k_, x(i), h_.vconst(two_pow_23));
            h_.vxorps(e(i), e(i), e(i));
            h_.vmovups(e(i) | k_, h_.vconst(-23.f));
        } else {
            h_.vmulps(t(i), x(i), h_.vconst(two_pow_23));
            h_.vblendvps(x(i), x(i), t(i), m(i));
            h_.vandps(e(i), m(i), h_.vconst(-23.f));
        }
    });
    // e += biased exponent; x = mantissa in [1, 2).
    each([&](int i) { h_.vpsrld(t(i), x(i), 23); });
    each([&](int i) { h_.vcvtdq2ps(t(i), t(i)); });
    each([&](int i) { h_.vaddps(e(i), e(i), t(i)); });
    each([&](int i) { h_.vandps(x(i), x(i), h_.vconst_u32(0x007fffffu)); });
    each([&](int i) { h_.vorps(x(i), x(i), h_.vconst_u32(0x3f800000u)); });
    // m > sqrt 2: m /= 2, e += 1, so m is in [sqrt(1/2), sqrt 2) and |s| <= 0.1716.
    each([&](int i) {
        cmp_mask(i, m, x(i), h_.vconst(sqrt2), cmp_gt_oq);
        if constexpr (level == isa::avx512_core) {
            h_.vmulps(x(i) | k_, x(i), h_.vconst(0.5f));
            h_.vaddps(e(i) | k_, e(i), h_.vconst(1.f));
        } else {
            h_.vandps(t(i), m(i), h_.vconst(1.f));
            h_.vaddps(e(i), e(i), t(i));
            h_.vmulps(t(i), x(i), h_.vconst(0.5f));
            h_.vblendvps(x(i), x(i), t(i), m(i));
        }
    });
    each([&](int i) { h_.vsubps(e(i), e(i), h_.vconst(127.f)); });
    // s = (m - 1) / (m + 1); log m = 2 s + s (s^2 P(s^2)).
    each([&](int i) { h_.vaddps(t(i), x(i), h_.vconst(1.f)); });
    each([&](int i) { h_.vsubps(x(i), x(i), h_.vconst(1.f)); });
    each([&](int i) { h_.vdivps(x(i), x(i), t(i)); });
    each([&](int i) { h_.vmulps(t(i), x(i), x(i)); });
    horner(m, t, log_p);
    each([&](int i) { h_.vmulps(m(i), m(i), t(i)); });
    each([&](int i) { h_.vaddps(t(i), x(i), x(i)); });
    each([&](int i) { h_.vfmadd231ps(t(i), x(i), m(i)); });
    // log x = e ln2_hi + (e ln2_lo + log m).
    each([&](int i) { h_.vfmadd231ps(t(i), e(i), h_.vconst(ln2_lo)); });
    each([&](int i) { h_.vfmadd231ps(t(i), e(i), h_.vconst(ln2_hi)); });
    each([&](int i) { h_.vmovaps(x(i), t(i)); });
    // Special inputs, from the saved x: 0 -> -inf, negative -> NaN, +inf or NaN -> x.
    each([&](int i) {
        cmp_mask(i, m, src(i), h_.vconst(0.f), cmp_eq_oq);
        blend(i, m, x(i), h_.vconst(-f_inf));
        cmp_mask(i, m, src(i), h_.vconst(0.f), cmp_lt_oq);
        blend(i, m, x(i), h_.vconst(std::numeric_limits<float>::quiet_NaN()));
        cmp_mask(i, m, src(i), h_.vconst(f_inf), cmp_nlt_uq);
        blend(i, m, x(i), src(i));
    });
}

template <isa level>
void jit_eltwise_injector_t<level>::gelu_erf() {
    const reg_fn_t x = value();   // x clamped to [-14, 14], then t, then y
    const reg_fn_t src = temp(0); // x as given
    const reg_fn_t c = temp(1);   // scratch, P(t) + lo part of -z^2, Phi
    const reg_fn_t n = temp(2);   // lo part of -z^2, then n of the exp
    const reg_fn_t hi = temp(3);  // -z^2 rounded, then r, then exp, erfc/2
    each([&](int i) { h_.vmovaps(src(i), x(i)); });
    clamp(x, c, -gelu_erf_x_max, gelu_erf_x_max);
    // -z^2 = -x^2/2 = hi + lo exactly: hi = round((-x/2) x), lo = (-x/2) x - hi by one fma.
    each([&](int i) { h_.vmulps(n(i), x(i), h_.vconst(-0.5f)); });
    each([&](int i) { h_.vmulps(hi(i), n(i), x(i)); });
    each([&](int i) { h_.vfmsub213ps(n(i), x(i), hi(i)); });
    // t = 1 / (1 + z/2), z = |x| / sqrt 2.
    each([&](int i) { h_.vandps(x(i), x(i), h_.vconst_u32(abs_mask)); });
    each([&](int i) { h_.vmulps(x(i), x(i), h_.vconst(half_over_sqrt2)); });
    each([&](int i) { h_.vaddps(x(i), x(i), h_.vconst(1.f)); });
    each([&](int i) { h_.vmovups(c(i), h_.vconst(1.f)); });
    each([&](int i) { h_.vdivps(x(i), c(i), x(i)); });
    horner(c, x, erfc_p);
    each([&](int i) { h_.vaddps(c(i), c(i), n(i)); });
    // exp(hi + c): n from the rounded sum, r = hi - n ln2 + c.
    each([&](int i) { h_.vaddps(n(i), hi(i), c(i)); });
    each([&](int i) { h_.vmulps(n(i), n(i), h_.vconst(log2e)); });
    each([&](int i) {
        if constexpr (level == isa::avx512_core) h_.vrndscaleps(n(i), n(i), 0);
        else h_.vroundps(n(i), n(i), 0);
    });
    each([&](int i) { h_.vfnmadd231ps(hi(i), n(i), h_.vconst(ln2_hi)); });
    each([&](int i) { h_.vfnmadd231ps(hi(i), n(i), h_.vconst(ln2_lo)); });
    each([&](int i) { h_.vaddps(hi(i), hi(i), c(i)); });
    exp_poly_inner(hi, c);
    each([&](int i) { h_.vfmadd213ps(c(i), hi(i), h_.vconst(1.f)); });
    scale_by_pow2(hi, n, c);
    // erfc(z) / 2 = t exp(...) / 2, flushed below FLT_MIN so the far negative tail gives 0
    // rather than x * denormal; Phi = x < 0 ? erfc/2 : 1 - erfc/2.
    each([&](int i) { h_.vmulps(hi(i), hi(i), x(i)); });
    each([&](int i) { h_.vmulps(hi(i), hi(i), h_.vconst(0.5f)); });
    flush_to_zero(hi, n);
    each([&](int i) { h_.vmovups(c(i), h_.vconst(1.f)); });
    each([&](int i) { h_.vsubps(c(i), c(i), hi(i)); });
    each([&](int i) { blend_by_sign(c(i), hi(i), src(i)); });
    each([&](int i) { h_.vmulps(x(i), src(i), c(i)); });
}

template class jit_eltwise_injector_t<isa::avx512_core>;
template class jit_eltwise_injector_t<isa::avx2>;

} // namespace blockdnn::impl
