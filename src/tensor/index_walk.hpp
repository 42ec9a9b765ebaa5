// SPDX-License-Identifier: Apache-2.0
// The references' walk over every index of a tensor, logical or padded: dim 0 split across the
// thread pool, the other dims in row-major order. The body maps the index through
// tensor_desc::offset, so one walk serves any layout.
#pragma once

#include "blockdnn/types.hpp"
#include "sched/parallel.hpp"

namespace blockdnn::impl {

/// Calls f(idx) for every index of the box dims[0] x ... x dims[nd - 1] (idx[k] < dims[k],
/// nd = dims.size() >= 1), the i0 of dim 0 split by parallel_for with grain 1, the last dim
/// fastest under each i0.
template <typename F>
void parallel_for_each_index(const dims_t &dims, const F &f) {
    const int nd = static_cast<int>(dims.size());
    dim_t inner = 1; // indices below dim 0
    for (int k = 1; k < nd; ++k) inner *= dims[k];
    parallel_for(dims[0], 1, [&](dim_t b, dim_t e) {
        dim_t idx[max_ndims] = {};
        for (dim_t i0 = b; i0 < e; ++i0) {
            idx[0] = i0;
            for (int k = 1; k < nd; ++k) idx[k] = 0;
            for (dim_t j = 0; j < inner; ++j) {
                f(static_cast<const dim_t *>(idx));
                for (int k = nd - 1; k > 0; --k) { // odometer over dims 1..nd-1
                    if (++idx[k] < dims[k]) break;
                    idx[k] = 0;
                }
            }
        }
    });
}

} // namespace blockdnn::impl
