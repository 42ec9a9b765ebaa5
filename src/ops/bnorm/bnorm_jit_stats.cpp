// SPDX-License-Identifier: Apache-2.0
// The driver's per-lane arithmetic (see bnorm_jit_stats.hpp): one body per function, inlined
// into wrappers compiled for AVX-512 and for AVX2 (GCC target attributes), so the lane loops
// vectorize at the width of the kernels they serve.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <immintrin.h>

#include "ops/bnorm/bnorm_jit_stats.hpp"

namespace blockdnn::impl {

double bnorm_inv_std(double var, double eps) {
    const double denom = std::sqrt(var + eps);
    return denom > 0 ? 1.0 / denom : 0.0; // also 0 for a negative variance (NaN denom)
}

namespace {

// |x| <= DBL_MAX: false for inf and NaN. A comparison, so lane loops using it vectorize.
[[gnu::always_inline]] inline bool finite(double x) { return std::fabs(x) <= std::numeric_limits<double>::max(); }

// c ? a : b, without a branch: GCC keeps a ?: on doubles as a branch here, and the lane loop
// then does not vectorize.
[[gnu::always_inline]] inline double pick(bool c, double a, double b) {
    const std::uint64_t m = -static_cast<std::uint64_t>(c);
    return std::bit_cast<double>((std::bit_cast<std::uint64_t>(a) & m) | (std::bit_cast<std::uint64_t>(b) & ~m));
}

// Chan et al.'s update of lane l with a chunk of `count` values, mean mean_b and M2 m2_b;
// w_a = n_a / n, w_b = count / n and w_m2 = n_a count / n for the new count n. The mean is
// mean_a + delta w_b, which keeps a constant channel's mean exact (the weighted sum
// mean_a w_a + mean_b w_b is off by an ulp or two, enough to move dst when eps = 0). Where
// delta is not finite (either mean is inf), it is that weighted sum instead, which carries
// the inf as the naive sum does (inf, or NaN for infinities of both signs) where delta would
// give inf - inf = NaN. M2 is NaN then already, from the chunk that held the inf.
[[gnu::always_inline]] inline void chan_update(
        bnorm_moments_t &acc, int l, double mean_b, double m2_b, double w_a, double w_b, double w_m2) {
    const double mean_a = acc.mean[l], delta = mean_b - mean_a;
    acc.mean[l] = pick(finite(delta), mean_a + delta * w_b, mean_a * w_a + mean_b * w_b);
    acc.m2[l] += m2_b + delta * delta * w_m2;
}

[[gnu::always_inline]] inline void fold_body(bnorm_moments_t &acc, int lanes, const float *m, const float *inv_k,
        const float *s1, const float *s2, double count) {
    const double inv_count = 1.0 / count, n = acc.n + count;
    const double w_a = acc.n / n, w_b = count / n, w_m2 = acc.n * count / n;
    for (int l = 0; l < lanes; ++l) {
        const double ik = inv_k[l], d1 = s1[l], ml = m[l];
        // Rounding in S2 can put it a hair below S1^2 / count (max(x, 0) keeps a NaN x). An
        // inf or NaN in the chunk makes m (the float sum of x / count) inf or NaN, which is
        // then the chunk's mean, and its M2 NaN; the scaled sums carry nothing more. (Data
        // within an ulp or so of FLT_MAX can round m past it too: that mean is then inf.)
        const bool ok = finite(ml);
        const double mean_b = ml + d1 * ik * inv_count, m2_b = std::max(s2[l] - d1 * d1 * inv_count, 0.0) * ik * ik;
        chan_update(
                acc, l, pick(ok, mean_b, ml), pick(ok, m2_b, std::numeric_limits<double>::quiet_NaN()), w_a, w_b, w_m2);
    }
    acc.n = n;
}

[[gnu::always_inline]] inline void fold_f64_body(
        bnorm_moments_t &acc, int lanes, const double *k, const double *s1, const double *s2, double count) {
    const double inv_count = 1.0 / count, n = acc.n + count;
    const double w_a = acc.n / n, w_b = count / n, w_m2 = acc.n * count / n;
    for (int l = 0; l < lanes; ++l)
        chan_update(acc, l, k[l] + s1[l] * inv_count, std::max(s2[l] - s1[l] * s1[l] * inv_count, 0.0), w_a, w_b, w_m2);
    acc.n = n;
}

[[gnu::always_inline]] inline bool fwd_prm_body(
        const bnorm_moments_t &acc, int n, int stride, const float *scale, const float *shift, float *prm) {
    const double inv_n = 1.0 / acc.n;
    int out_of_range = 0; // bitwise, so the loop stays branch-free and vectorizes
    for (int l = 0; l < n; ++l) {
        const double mean = acc.mean[l];
        const float hi = static_cast<float>(mean);
        prm[l] = hi;
        prm[stride + l] = static_cast<float>(mean - hi);
        const float v = static_cast<float>(acc.m2[l] * inv_n);
        prm[2 * stride + l] = v;
        out_of_range |= bnorm_var_out_of_range(v, acc.m2[l]);
    }
    for (int l = 0; l < n; ++l) prm[3 * stride + l] = scale ? scale[l] : 1.f;
    for (int l = 0; l < n; ++l) prm[4 * stride + l] = shift ? shift[l] : 0.f;
    return out_of_range != 0;
}

// The backward parameters once inv_std is known (see bnorm_lane_fns_t::bwd_prm). The
// conditions sit outside the lane loops so that they vectorize; the four prm rows are
// restrict pointers, which holds because n <= stride and prm is the driver's own buffer.
[[gnu::always_inline]] inline void bwd_prm_body(float *prm, int stride, int n, const bnorm_bwd_sums_t &s, double count,
        const float *mean, const float *inv_std, const float *gamma, bool full, float *diff_scale, float *diff_shift) {
    const double inv_n = 1.0 / count;
    alignas(64) float g[bnorm_max_lanes];
    if (gamma) std::copy(gamma, gamma + n, g);
    else std::fill(g, g + n, 1.f);
    float *__restrict p_mean = prm, *__restrict p_a = prm + stride, *__restrict p_b = prm + 2 * stride,
                      *__restrict p_c = prm + 3 * stride;
    for (int l = 0; l < n; ++l) p_mean[l] = mean[l];
    if (full) {
        for (int l = 0; l < n; ++l) {
            const double is = inv_std[l], a = g[l] * is;
            // B = 2 dvar / N and C = dmean / N, written without divisions.
            const double b = -a * is * is * s.dy_xm[l] * inv_n;
            p_a[l] = static_cast<float>(a);
            p_b[l] = static_cast<float>(b);
            p_c[l] = static_cast<float>((-a * s.dy[l] - b * s.xm[l]) * inv_n);
        }
    } else {
        for (int l = 0; l < n; ++l) {
            p_a[l] = static_cast<float>(g[l] * static_cast<double>(inv_std[l]));
            p_b[l] = 0.f;
            p_c[l] = 0.f;
        }
    }
    if (diff_scale)
        for (int l = 0; l < n; ++l) diff_scale[l] = static_cast<float>(s.dy_xm[l] * inv_std[l]);
    if (diff_shift)
        for (int l = 0; l < n; ++l) diff_shift[l] = static_cast<float>(s.dy[l]);
}

// ---- AVX-512 ----

__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma"))) void fold_avx512(bnorm_moments_t &acc, int lanes,
        const float *m, const float *inv_k, const float *s1, const float *s2, double count) {
    fold_body(acc, lanes, m, inv_k, s1, s2, count);
}

__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma"))) void fold_f64_avx512(
        bnorm_moments_t &acc, int lanes, const double *k, const double *s1, const double *s2, double count) {
    fold_f64_body(acc, lanes, k, s1, s2, count);
}

__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma"))) bool fwd_prm_avx512(
        const bnorm_moments_t &acc, int n, int stride, const float *scale, const float *shift, float *prm) {
    return fwd_prm_body(acc, n, stride, scale, shift, prm);
}

__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma"))) void bwd_prm_avx512(float *prm, int stride,
        int n, const bnorm_bwd_sums_t &s, double count, const float *mean, const float *var, float eps,
        const float *gamma, bool full, float *diff_scale, float *diff_shift) {
    alignas(64) float inv_std[bnorm_max_lanes];
    const __m512 e = _mm512_set1_ps(eps), one = _mm512_set1_ps(1.f);
    for (int l = 0; l < n; l += 16) {
        const __mmask16 k = static_cast<__mmask16>(n - l >= 16 ? 0xffff : (1u << (n - l)) - 1);
        const __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(k, var + l), e);
        const __mmask16 pos = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ); // 0 unless var + eps > 0
        // The masked forms with an explicit source: GCC 12 warns about _mm512_sqrt_ps's undefined one.
        const __m512 root = _mm512_mask_sqrt_ps(one, static_cast<__mmask16>(0xffff), v);
        _mm512_store_ps(inv_std + l, _mm512_maskz_div_ps(pos, one, root));
    }
    bwd_prm_body(prm, stride, n, s, count, mean, inv_std, gamma, full, diff_scale, diff_shift);
}

// ---- AVX2 ----

__attribute__((target("avx2,fma"))) void fold_avx2(bnorm_moments_t &acc, int lanes, const float *m, const float *inv_k,
        const float *s1, const float *s2, double count) {
    fold_body(acc, lanes, m, inv_k, s1, s2, count);
}

__attribute__((target("avx2,fma"))) void fold_f64_avx2(
        bnorm_moments_t &acc, int lanes, const double *k, const double *s1, const double *s2, double count) {
    fold_f64_body(acc, lanes, k, s1, s2, count);
}

__attribute__((target("avx2,fma"))) bool fwd_prm_avx2(
        const bnorm_moments_t &acc, int n, int stride, const float *scale, const float *shift, float *prm) {
    return fwd_prm_body(acc, n, stride, scale, shift, prm);
}

__attribute__((target("avx2,fma"))) void bwd_prm_avx2(float *prm, int stride, int n, const bnorm_bwd_sums_t &s,
        double count, const float *mean, const float *var, float eps, const float *gamma, bool full, float *diff_scale,
        float *diff_shift) {
    alignas(32) float inv_std[bnorm_max_lanes];
    const __m256 e = _mm256_set1_ps(eps), one = _mm256_set1_ps(1.f), zero = _mm256_setzero_ps();
    int l = 0;
    for (; l + 8 <= n; l += 8) {
        const __m256 v = _mm256_add_ps(_mm256_loadu_ps(var + l), e);
        const __m256 r = _mm256_div_ps(one, _mm256_sqrt_ps(v));
        _mm256_store_ps(inv_std + l, _mm256_and_ps(r, _mm256_cmp_ps(v, zero, _CMP_GT_OQ)));
    }
    for (; l < n; ++l) {
        const float v = var[l] + eps;
        inv_std[l] = v > 0 ? 1.f / std::sqrt(v) : 0.f;
    }
    bwd_prm_body(prm, stride, n, s, count, mean, inv_std, gamma, full, diff_scale, diff_shift);
}

const bnorm_lane_fns_t fns_avx512 = {fold_avx512, fold_f64_avx512, fwd_prm_avx512, bwd_prm_avx512};
const bnorm_lane_fns_t fns_avx2 = {fold_avx2, fold_f64_avx2, fwd_prm_avx2, bwd_prm_avx2};

} // namespace

const bnorm_lane_fns_t &bnorm_lane_fns(isa level) { return level == isa::avx512_core ? fns_avx512 : fns_avx2; }

} // namespace blockdnn::impl
