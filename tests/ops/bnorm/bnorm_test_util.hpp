// SPDX-License-Identifier: Apache-2.0
// Batch normalization test helpers: a naive forward in double (the oracle of the JIT forward
// tests), seeded data for a problem, and a tolerant comparison that names the first mismatch.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/test_util.hpp"
#include "testing/fill.hpp"

namespace bnorm_test {

using namespace blockdnn;

/// Naive batch normalization forward, per channel in double, through tensor_desc offsets.
/// Training computes mean and biased variance (two passes) into mean/var; inference reads
/// them. dst = gamma (x - mean) / sqrt(var + eps) + beta, max(0, .) with relu; 1/sqrt of a
/// non-positive var + eps is taken as 0. Blocked dst padding is written with zeros.
inline void naive_fwd(const tensor_desc &d, const float *src, float *dst, std::vector<float> &mean,
        std::vector<float> &var, bool training, const float *scale, const float *shift, float eps, bool relu) {
    const dim_t C = d.dim(1);
    std::vector<double> sum(C, 0.0), sq(C, 0.0), mu(C), v(C);
    const double n = static_cast<double>(d.nelems() / C);
    if (training) {
        for_each_index(d, [&](const dim_t *idx) { sum[idx[1]] += src[d.offset(idx)]; });
        for (dim_t c = 0; c < C; ++c) mu[c] = sum[c] / n;
        for_each_index(d, [&](const dim_t *idx) {
            const double x = src[d.offset(idx)] - mu[idx[1]];
            sq[idx[1]] += x * x;
        });
        for (dim_t c = 0; c < C; ++c) {
            v[c] = sq[c] / n;
            mean[c] = static_cast<float>(mu[c]);
            var[c] = static_cast<float>(v[c]);
        }
    } else {
        for (dim_t c = 0; c < C; ++c) mu[c] = mean[c], v[c] = var[c];
    }
    if (d.is_blocked()) std::fill(dst, dst + d.nelems_padded(), 0.f);
    for_each_index(d, [&](const dim_t *idx) {
        const dim_t c = idx[1];
        const double denom = std::sqrt(v[c] + eps);
        const double inv_std = denom > 0 ? 1.0 / denom : 0.0;
        double y = (scale ? scale[c] : 1.0) * ((src[d.offset(idx)] - mu[c]) * inv_std) + (shift ? shift[c] : 0.0);
        if (relu && y < 0) y = 0;
        dst[d.offset(idx)] = static_cast<float>(y);
    });
}

/// Seeded values in [lo, hi) for a vector.
inline std::vector<float> random_vec(std::size_t n, unsigned seed, float lo, float hi) {
    return bdtest::seeded_values(n, seed, lo, hi);
}

/// Expects |got - want| <= atol + rtol |want| elementwise over the logical elements of d
/// (NaN must meet NaN). Reports the first few mismatches with their logical index.
inline void expect_near(
        const tensor_desc &d, const float *got, const float *want, double atol, double rtol, const std::string &what) {
    int bad = 0;
    for_each_index(d, [&](const dim_t *idx) {
        const dim_t o = d.offset(idx);
        const double g = got[o], w = want[o];
        const bool ok = g == w || (std::isnan(g) && std::isnan(w)) || std::fabs(g - w) <= atol + rtol * std::fabs(w);
        if (!ok && bad++ < 5) {
            std::string at;
            for (int k = 0; k < d.ndims(); ++k) {
                if (k) at += ',';
                at += std::to_string(idx[k]);
            }
            ADD_FAILURE() << what << " at (" << at << "): got " << g << ", want " << w;
        }
    });
    EXPECT_EQ(bad, 0) << what << ": " << bad << " mismatches";
}

/// The same for per-channel vectors.
inline void expect_near(const std::vector<float> &got, const std::vector<float> &want, double atol, double rtol,
        const std::string &what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    int bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double g = got[i], w = want[i];
        const bool ok = g == w || (std::isnan(g) && std::isnan(w)) || std::fabs(g - w) <= atol + rtol * std::fabs(w);
        if (!ok && bad++ < 5) ADD_FAILURE() << what << "[" << i << "]: got " << g << ", want " << w;
    }
    EXPECT_EQ(bad, 0) << what << ": " << bad << " mismatches";
}

/// Blocked layouts: every element of t's memory outside its logical elements (the padding
/// channels) is 0.
inline void expect_zero_padding(const tensor &t, const std::string &what) {
    const tensor_desc &d = t.desc();
    if (!d.is_blocked()) return;
    std::vector<char> logical(static_cast<std::size_t>(d.nelems_padded()), 0);
    for_each_index(d, [&](const dim_t *idx) { logical[d.offset(idx)] = 1; });
    dim_t bad = 0;
    for (dim_t k = 0; k < d.nelems_padded(); ++k) bad += !logical[k] && t.f32()[k] != 0.f;
    EXPECT_EQ(bad, 0) << what << ": padding elements not zero";
}

/// Every activation layout batch normalization takes, for dims of `ndims` (2 to 5).
inline std::vector<format_tag> layouts_for(int ndims) {
    switch (ndims) {
    case 2: return {format_tag::nc};
    case 3: return {format_tag::ncw, format_tag::nwc, format_tag::nCw8c, format_tag::nCw16c};
    case 4: return {format_tag::nchw, format_tag::nhwc, format_tag::nChw8c, format_tag::nChw16c};
    default: return {format_tag::ncdhw, format_tag::ndhwc, format_tag::nCdhw8c, format_tag::nCdhw16c};
    }
}

/// "mb2ic17ih5iw3" style descriptor of dims (benchdnn bnorm keys; id/ih/iw as present).
inline std::string dims_str(const dims_t &d) {
    std::string s = "mb" + std::to_string(d[0]) + "ic" + std::to_string(d[1]);
    const char *keys[3] = {"id", "ih", "iw"};
    const int nsp = static_cast<int>(d.size()) - 2;
    for (int k = 0; k < nsp; ++k) s += keys[3 - nsp + k] + std::to_string(d[2 + k]);
    return s;
}

} // namespace bnorm_test
