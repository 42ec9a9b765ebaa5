// SPDX-License-Identifier: Apache-2.0
// Per-channel parameters of the JIT batch normalization kernels (see bnorm_jit_stats.hpp).
#include <cmath>

#include "bnorm/bnorm_jit_stats.hpp"

namespace blockdnn::impl {

double bnorm_inv_std(double var, double eps) {
    const double denom = std::sqrt(var + eps);
    return denom > 0 ? 1.0 / denom : 0.0; // also 0 for a negative variance (NaN denom)
}

void bnorm_bwd_prm(float *prm, std::int64_t stride, double sum_dy, double sum_dy_xm, double sum_xm, double count,
        float mean, float var, double eps, float gamma, bool full, float *diff_scale, float *diff_shift) {
    const double inv_std = bnorm_inv_std(var, eps);
    const double g = gamma;
    prm[0] = mean;
    prm[stride] = static_cast<float>(g * inv_std);
    if (full) {
        const double dvar = -0.5 * g * sum_dy_xm * inv_std * inv_std * inv_std;
        const double dmean = -g * inv_std * sum_dy - 2.0 * dvar * sum_xm / count;
        prm[2 * stride] = static_cast<float>(2.0 * dvar / count);
        prm[3 * stride] = static_cast<float>(dmean / count);
    } else {
        prm[2 * stride] = prm[3 * stride] = 0.f;
    }
    if (diff_scale) *diff_scale = static_cast<float>(sum_dy_xm * inv_std);
    if (diff_shift) *diff_shift = static_cast<float>(sum_dy);
}

} // namespace blockdnn::impl
