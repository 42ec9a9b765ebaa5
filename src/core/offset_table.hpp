// SPDX-License-Identifier: Apache-2.0
// Per-dimension tables of tensor_desc::offset values, so reference kernels can address any
// layout through offset() without calling it once per element.
#pragma once

#include <vector>

#include "blockdnn/tensor.hpp"

namespace blockdnn::impl {

/// t[i] = desc.offset(index with i in dimension d and 0 elsewhere), for i < desc.dim(d).
///
/// In the blocking descriptor every term of offset() depends on one dimension only (outer:
/// (i_d / blk_d) * stride_d; inner: (i_d % b) times the sizes of the blocks inside it), and
/// offset(0, ..., 0) = 0, so offset(idx) = sum_d dim_offsets(desc, d)[idx[d]] for every layout.
/// The tables give exactly the addresses offset() gives; tests/test_ref_common.cpp checks
/// that identity for every format tag.
inline std::vector<dim_t> dim_offsets(const tensor_desc &desc, int d) {
    std::vector<dim_t> t(static_cast<std::size_t>(desc.dim(d)));
    dim_t idx[max_ndims] = {};
    for (dim_t i = 0; i < desc.dim(d); ++i) {
        idx[d] = i;
        t[static_cast<std::size_t>(i)] = desc.offset(idx);
    }
    return t;
}

/// Tables of an activation tensor (n, c, [d,] [h,] w) with its spatial dims normalised to
/// (d, h, w): a spatial dim the tensor lacks gets the one-entry table {0}, so 1-D, 2-D and 3-D
/// problems share one loop nest. Also serves weights ([g,] o, i, spatial...) through `lead`.
struct spatial_offsets_t {
    std::vector<std::vector<dim_t>> lead; // the non-spatial dims, in order
    std::vector<dim_t> d, h, w;

    /// `nlead` leading dims (2 for activations, 2 or 3 for weights), then ndims - nlead spatial dims.
    spatial_offsets_t(const tensor_desc &desc, int nlead) {
        for (int k = 0; k < nlead; ++k) lead.push_back(dim_offsets(desc, k));
        std::vector<dim_t> *sp[3] = {&d, &h, &w};
        const int nsp = desc.ndims() - nlead;
        for (int k = 0; k < 3; ++k) {
            const int dim = nlead + k - (3 - nsp);
            *sp[k] = k < 3 - nsp ? std::vector<dim_t> {0} : dim_offsets(desc, dim);
        }
    }
};

} // namespace blockdnn::impl
