// SPDX-License-Identifier: Apache-2.0
// The per-channel arithmetic of the JIT batch normalization driver, in double: combining the
// kernels' per-chunk statistics (Chan, Golub & LeVeque, "Updating formulae and a pairwise
// algorithm for computing sample variances", 1979) and the backward parameters (Ioffe &
// Szegedy, arXiv:1502.03167, section 3). Lanes are structure-of-arrays so the loops vectorize.
#pragma once

#include <algorithm>
#include <cstdint>

namespace blockdnn::impl {

/// Most lanes (channels) one unit of the driver has: nspc on avx512, 4 vectors of 16.
constexpr int bnorm_max_lanes = 64;

/// Running count, mean and M2 (sum of squared deviations) of a unit's lanes; every lane has
/// seen the same number of values.
struct bnorm_moments_t {
    double n = 0;
    double mean[bnorm_max_lanes] = {}, m2[bnorm_max_lanes] = {};
};

/// Folds one fwd_stats result into acc, lane by lane: (shift m, 1/k, S1 = sum(x k - m k),
/// S2 = sum((x k - m k)^2)) over `count` values per lane. The chunk's mean is m + S1 / (k count)
/// and its M2 (S2 - S1^2 / count) / k^2 (k is a power of two, so 1/k is exact); then
///   delta = mean_b - mean_a, mean = mean_a + delta n_b / n, M2 = M2_a + M2_b + delta^2 n_a n_b / n.
inline void bnorm_fold_chunk(bnorm_moments_t &acc, int lanes, const float *m, const float *inv_k, const float *s1,
        const float *s2, double count) {
    const double inv_count = 1.0 / count, n = acc.n + count;
    const double w_mean = count / n, w_m2 = acc.n * count / n;
    for (int l = 0; l < lanes; ++l) {
        const double ik = inv_k[l], d1 = s1[l];
        const double mean_b = m[l] + d1 * ik * inv_count;
        // Rounding in S2 can put it a hair below S1^2 / count.
        const double m2_b = std::max(0.0, s2[l] - d1 * d1 * inv_count) * ik * ik;
        const double delta = mean_b - acc.mean[l];
        acc.mean[l] += delta * w_mean;
        acc.m2[l] += m2_b + delta * delta * w_m2;
    }
    acc.n = n;
}

/// Backward sums of a unit's lanes: sum(dy'), sum(dy' (x - mean)), sum(x - mean).
struct bnorm_bwd_sums_t {
    double dy[bnorm_max_lanes] = {}, dy_xm[bnorm_max_lanes] = {}, xm[bnorm_max_lanes] = {};
};

/// 1 / sqrt(var + eps), or 0 when var + eps is not positive (or NaN): the normalized value of
/// a constant channel with eps = 0 is taken as 0 (dst = shift), not NaN.
double bnorm_inv_std(double var, double eps);

/// inv_std[l] = 1 / sqrt(var[l] + eps) for n lanes in float, 0 where var + eps is not positive
/// (or NaN). Four lanes at a time (SSE, baseline x86-64).
void bnorm_inv_std_f32(const float *var, int n, float eps, float *inv_std);

/// Backward parameters of n lanes (channels c0 .. c0 + n of the per-channel arrays, lanes
/// 0 .. n of sums): prm [mean, A, B, C] at prm[which * stride + l], and diff_scale /
/// diff_shift (offset like mean) if not null. `full` selects the training form (through the
/// batch statistics); otherwise diff_src = A dy' with A = gamma inv_std. With N = count:
///   dvar  = -1/2 gamma sum(dy' xm) inv_std^3
///   dmean = -gamma inv_std sum(dy') - 2 dvar sum(xm) / N
///   dx    = gamma inv_std dy' + 2 dvar xm / N + dmean / N  =  A dy' + B xm + C
/// gamma may be null (1).
void bnorm_bwd_prm(float *prm, int stride, int n, const bnorm_bwd_sums_t &s, double count, const float *mean,
        const float *var, float eps, const float *gamma, bool full, float *diff_scale, float *diff_shift);

} // namespace blockdnn::impl
