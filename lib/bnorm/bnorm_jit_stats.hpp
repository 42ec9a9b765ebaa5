// SPDX-License-Identifier: Apache-2.0
// The per-channel arithmetic of the JIT batch normalization driver, in double: combining the
// kernels' per-chunk statistics (Chan, Golub & LeVeque, "Updating formulae and a pairwise
// algorithm for computing sample variances", 1979) and turning statistics into the kernels'
// parameters, forward and backward (Ioffe & Szegedy, arXiv:1502.03167, Algorithm 1 and the
// back-propagation equations of section 3).
#pragma once

#include <cstdint>

namespace blockdnn::impl {

/// Running (count, mean, M2 = sum of squared deviations) of one channel.
struct bnorm_moments_t {
    double n = 0, mean = 0, m2 = 0;
};

/// Folds one fwd_stats result into acc: (shift m, scale k, S1 = sum(x k - m k),
/// S2 = sum((x k - m k)^2)) over `count` values. The chunk's mean is m + S1 / (k count) and its
/// M2 is (S2 - S1^2 / count) / k^2; chunks combine with
///   delta = mean_b - mean_a, mean = mean_a + delta n_b / n, M2 = M2_a + M2_b + delta^2 n_a n_b / n.
inline void bnorm_fold_chunk(bnorm_moments_t &acc, double m, double k, double s1, double s2, double count) {
    const double mean_b = m + s1 / (k * count);
    double m2_b = s2 - s1 * s1 / count;
    if (m2_b < 0) m2_b = 0; // rounding in S2 can put it a hair below S1^2 / count
    m2_b /= k * k;
    const double n = acc.n + count;
    const double delta = mean_b - acc.mean;
    acc.mean += delta * (count / n);
    acc.m2 += m2_b + delta * delta * (acc.n * count / n);
    acc.n = n;
}

/// 1 / sqrt(var + eps), or 0 when var + eps is not positive: the normalized value of a
/// constant channel with eps = 0 is taken as 0 (dst = shift), not NaN.
double bnorm_inv_std(double var, double eps);

/// Forward parameters of one lane for the fwd_norm kernel: prm[which * stride] for which =
/// mean_hi, mean_lo, alpha, beta (see jit_bnorm_fwd_norm_kernel.cpp), from the statistics
/// (mean, var), gamma and beta.
inline void bnorm_fwd_prm(float *prm, std::int64_t stride, double mean, double var, double eps, double gamma,
        float beta) {
    const float hi = static_cast<float>(mean);
    prm[0] = hi;
    prm[stride] = static_cast<float>(mean - hi);
    prm[2 * stride] = static_cast<float>(gamma * bnorm_inv_std(var, eps));
    prm[3 * stride] = beta;
}

/// Backward sums of one channel, accumulated in double.
struct bnorm_bwd_sums_t {
    double dy = 0, dy_xm = 0, xm = 0; ///< sum(dy'), sum(dy' (x - mean)), sum(x - mean)
};

/// Backward parameters of one channel: writes prm [mean, A, B, C] at prm[which * stride],
/// and diff_scale / diff_shift if those pointers are not null. `full` selects the training
/// form (through the batch statistics); otherwise diff_src = A dy with A = gamma inv_std.
///   dvar  = -1/2 gamma sum(dy' xm) inv_std^3
///   dmean = -gamma inv_std sum(dy') - 2 dvar sum(xm) / N
///   dx    = gamma inv_std dy' + 2 dvar xm / N + dmean / N  =  A dy' + B xm + C
void bnorm_bwd_prm(float *prm, std::int64_t stride, const bnorm_bwd_sums_t &s, double count, float mean,
        float var, double eps, float gamma, bool full, float *diff_scale, float *diff_shift);

} // namespace blockdnn::impl
