// SPDX-License-Identifier: Apache-2.0
// The per-channel arithmetic of the JIT batch normalization driver, in double: combining the
// kernels' per-chunk statistics (Chan, Golub & LeVeque, "Updating formulae and a pairwise
// algorithm for computing sample variances", 1979) and the backward parameters (Ioffe &
// Szegedy, arXiv:1502.03167, section 3). Lanes are structure-of-arrays so the loops vectorize.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "blockdnn/isa.hpp"

namespace blockdnn::impl {

/// Most lanes (channels) one unit of the driver has: nspc on avx512, 4 vectors of 16; and what
/// bounds the channel blocks init_conf groups into one unit (blocked and ncsp).
constexpr int bnorm_max_lanes = 64;

/// Running count, mean and M2 (sum of squared deviations) of a unit's lanes; every lane has
/// seen the same number of values.
struct bnorm_moments_t {
    double n = 0;
    double mean[bnorm_max_lanes] = {}, m2[bnorm_max_lanes] = {};
    /// Empties the first `lanes` lanes (the ones a unit uses).
    void reset(int lanes) {
        n = 0;
        std::fill(mean, mean + lanes, 0.0);
        std::fill(m2, m2 + lanes, 0.0);
    }
};

/// The per-lane loops of the driver, one table per ISA: each is compiled for that ISA (GCC
/// target attributes), so the double-precision lane math vectorizes 8 wide on AVX-512 and 4
/// wide on AVX2; the driver uses the table of its kernels' ISA, which the CPU then has.
struct bnorm_lane_fns_t {
    /// Folds one fwd_stats result into acc, lane by lane: (shift m, 1/k, S1 = sum(x k - m k),
    /// S2 = sum((x k - m k)^2)) over `count` values per lane. The chunk's mean is
    /// m + S1 / (k count) and its M2 (S2 - S1^2 / count) / k^2 (k is a power of two, so 1/k is
    /// exact); then delta = mean_b - mean_a, mean = mean_a + delta n_b / n,
    /// M2 = M2_a + M2_b + delta^2 n_a n_b / n. A chunk holding inf or NaN has m inf or NaN:
    /// that is its mean, and its M2 is NaN; where delta is then not finite, the mean is
    /// (n_a mean_a + n_b mean_b) / n, so infinities reach it as in the naive sum.
    void (*fold)(bnorm_moments_t &acc, int lanes, const float *m, const float *inv_k, const float *s1, const float *s2,
            double count);
    /// The same for an f64_sums result (shift K, S1 = sum(x - K), S2 = sum((x - K)^2), in
    /// double): the chunk's mean is K + S1 / count and its M2 S2 - S1^2 / count.
    void (*fold_f64)(
            bnorm_moments_t &acc, int lanes, const double *k, const double *s1, const double *s2, double count);
    /// Forward parameters of n lanes from the moments: prm[w * stride + l] for w = mean_hi,
    /// mean_lo (mean - mean_hi), var (M2 / n, rounded to float), gamma (scale or 1), beta
    /// (shift or 0). Returns true if bnorm_var_out_of_range holds for some lane, which the
    /// caller then fixes; checked here, vectorized, so the caller's usual case is one branch.
    bool (*fwd_prm)(const bnorm_moments_t &acc, int n, int stride, const float *scale, const float *shift, float *prm);
    /// Backward parameters of n lanes (channels c0 .. c0 + n of the per-channel arrays, lanes
    /// 0 .. n of sums): prm [mean, A, B, C] at prm[which * stride + l], and diff_scale /
    /// diff_shift (offset like mean) if not null. `full` selects the training form (through the
    /// batch statistics); otherwise diff_src = A dy' with A = gamma inv_std. With N = count:
    ///   dvar  = -1/2 gamma sum(dy' xm) inv_std^3
    ///   dmean = -gamma inv_std sum(dy') - 2 dvar sum(xm) / N
    ///   dx    = gamma inv_std dy' + 2 dvar xm / N + dmean / N  =  A dy' + B xm + C
    /// gamma may be null (1). inv_std = 1 / sqrt(var + eps) in float, 0 if not positive.
    /// prm (4 * stride floats, stride >= n) overlaps none of the other arrays.
    void (*bwd_prm)(float *prm, int stride, int n, const struct bnorm_bwd_sums_t &s, double count, const float *mean,
            const float *var, float eps, const float *gamma, bool full, float *diff_scale, float *diff_shift);
};

/// The table for avx512_core or avx2 (the two ISAs with kernels).
const bnorm_lane_fns_t &bnorm_lane_fns(isa level);

/// Backward sums of a unit's lanes: sum(dy'), sum(dy' (x - mean)), sum(x - mean).
struct bnorm_bwd_sums_t {
    double dy[bnorm_max_lanes] = {}, dy_xm[bnorm_max_lanes] = {}, xm[bnorm_max_lanes] = {};
    /// Zeroes the first `lanes` lanes.
    void reset(int lanes) {
        std::fill(dy, dy + lanes, 0.0);
        std::fill(dy_xm, dy_xm + lanes, 0.0);
        std::fill(xm, xm + lanes, 0.0);
    }
};

/// True if a lane's variance v (M2 / n rounded to float) is one the normalization kernel's
/// float gamma / sqrt(var + eps) cannot take: inf or NaN, or a positive m2 rounded below the
/// smallest normal float. Branch-free (bitwise), so lane loops calling it vectorize.
inline bool bnorm_var_out_of_range(float v, double m2) {
    const bool big = !(v <= std::numeric_limits<float>::max()); // also NaN
    const bool tiny = (v < std::numeric_limits<float>::min()) & (m2 > 0);
    return big | tiny;
}

/// 1 / sqrt(var + eps), or 0 when var + eps is not positive (or NaN): the normalized value of
/// a constant channel with eps = 0 is taken as 0 (dst = shift), not NaN.
double bnorm_inv_std(double var, double eps);

} // namespace blockdnn::impl
