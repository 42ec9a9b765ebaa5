// SPDX-License-Identifier: Apache-2.0
// Reference batch normalization backward (Ioffe & Szegedy, arXiv:1502.03167, section 3):
// diff_src, diff_scale (dgamma) and diff_shift (dbeta) from diff_dst, in double, for any
// activation layout.
#pragma once

#include "blockdnn/tensor.hpp"

namespace blockdnn::impl {

/// A backward problem. All tensors have src's logical dims; each may have its own activation
/// layout. `dst` (the forward output) is read only with fuse_relu.
struct bnorm_bwd_ref_prb_t {
    tensor_desc src, diff_dst, diff_src, dst;
    float eps = 1e-5f;
    bool use_scale = false;    ///< gamma = scale[c] (otherwise 1)
    bool fuse_relu = false;    ///< the forward applied max(0, y): dy counts only where dst > 0
    bool global_stats = false; ///< mean and variance were fixed in the forward (inference form)
};

/// Computes, per channel c over its N = mb * spatial values (Ioffe & Szegedy's m):
///   dy'      = dy, or 0 where dst <= 0 (or NaN) with fuse_relu
///   dxhat    = dy' gamma
///   dvar     = sum(dxhat (x - mean)) * -1/2 (var + eps)^(-3/2)
///   dmean    = sum(dxhat) * -1/sqrt(var + eps) + dvar * sum(-2 (x - mean)) / N
///   diff_src = dxhat / sqrt(var + eps) + dvar * 2 (x - mean) / N + dmean / N
///   diff_scale = sum(dy' (x - mean) / sqrt(var + eps)),  diff_shift = sum(dy')
/// With global_stats mean and var are constants, so diff_src = dxhat / sqrt(var + eps).
/// If var + eps <= 0, 1/sqrt(var + eps) is taken as 0 (as in the forward). Sums and the
/// arithmetic are in double, each channel in one fixed order. mean, var and (with use_scale)
/// scale are c floats; diff_scale / diff_shift are written when not null. Blocked diff_src has
/// its padding channels written with zeros.
void bnorm_bwd_ref(const bnorm_bwd_ref_prb_t &p, const float *src, const float *mean, const float *var,
        const float *scale, const float *dst, const float *diff_dst, float *diff_src, float *diff_scale,
        float *diff_shift);

} // namespace blockdnn::impl
