// SPDX-License-Identifier: Apache-2.0
// Per-channel parameters of the JIT batch normalization kernels (see bnorm_jit_stats.hpp).
#include <cmath>

#include <immintrin.h>

#include "bnorm/bnorm_jit_stats.hpp"

namespace blockdnn::impl {

double bnorm_inv_std(double var, double eps) {
    const double denom = std::sqrt(var + eps);
    return denom > 0 ? 1.0 / denom : 0.0; // also 0 for a negative variance (NaN denom)
}

void bnorm_inv_std_f32(const float *var, int n, float eps, float *inv_std) {
    const __m128 e = _mm_set1_ps(eps), one = _mm_set1_ps(1.f), zero = _mm_setzero_ps();
    int l = 0;
    for (; l + 4 <= n; l += 4) {
        const __m128 v = _mm_add_ps(_mm_loadu_ps(var + l), e);
        const __m128 r = _mm_div_ps(one, _mm_sqrt_ps(v));
        _mm_storeu_ps(inv_std + l, _mm_and_ps(r, _mm_cmpgt_ps(v, zero))); // 0 unless var + eps > 0
    }
    for (; l < n; ++l) {
        const float v = var[l] + eps;
        inv_std[l] = v > 0 ? 1.f / std::sqrt(v) : 0.f;
    }
}

void bnorm_bwd_prm(float *prm, int stride, int n, const bnorm_bwd_sums_t &s, double count, const float *mean,
        const float *var, float eps, const float *gamma, bool full, float *diff_scale, float *diff_shift) {
    alignas(16) float inv_std[bnorm_max_lanes], g[bnorm_max_lanes];
    bnorm_inv_std_f32(var, n, eps, inv_std);
    for (int l = 0; l < n; ++l) g[l] = gamma ? gamma[l] : 1.f;
    const double inv_n = 1.0 / count;
    for (int l = 0; l < n; ++l) {
        const double is = inv_std[l], a = g[l] * is;
        prm[l] = mean[l];
        prm[stride + l] = static_cast<float>(a);
        // B = 2 dvar / N and C = dmean / N, written without divisions.
        const double b = full ? -a * is * is * s.dy_xm[l] * inv_n : 0.0;
        prm[2 * stride + l] = static_cast<float>(b);
        prm[3 * stride + l] = full ? static_cast<float>((-a * s.dy[l] - b * s.xm[l]) * inv_n) : 0.f;
    }
    if (diff_scale)
        for (int l = 0; l < n; ++l) diff_scale[l] = static_cast<float>(s.dy_xm[l] * inv_std[l]);
    if (diff_shift)
        for (int l = 0; l < n; ++l) diff_shift[l] = static_cast<float>(s.dy[l]);
}

} // namespace blockdnn::impl
