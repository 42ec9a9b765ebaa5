// SPDX-License-Identifier: Apache-2.0
// The reference application of a post-op chain to one result element.
#pragma once

#include "blockdnn/post_ops.hpp"

namespace blockdnn::impl {

/// Applies po to the op's result r (bias already added), in order, in f32; old_dst is dst's
/// value before the op ran (read only when the chain holds a sum).
inline float apply_post_ops_ref(const post_ops &po, float r, float old_dst) {
    for (const post_op &e : po.entries()) {
        if (e.what == post_op::kind::sum) r = r + e.scale * old_dst;
        else r = eltwise_ref(e.alg, r, e.alpha, e.beta);
    }
    return r;
}

} // namespace blockdnn::impl
