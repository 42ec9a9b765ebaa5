// SPDX-License-Identifier: Apache-2.0
// benchdnn's batch normalization problem descriptor (mbXicX_idXihXiwX_epsF_nNAME), shared by
// tests, benchmarks and kernelgen.
#pragma once

#include <string>

#include "blockdnn/types.hpp"

namespace blockdnn::impl {

/// A parsed descriptor. Rules (oneDNN tests/benchdnn/bnorm/bnorm_aux.cpp): mb defaults to 2;
/// ic is required; a missing spatial size is copied from the higher one (id -> ih -> iw, so
/// ih56 means 56x56 and id4 means 4x4x4); the problem is 3-D with id, 2-D with ih, 1-D with
/// only iw and 0-D (mb x ic) with none; eps defaults to 1/16; n names it (to the end).
struct bnorm_shape_t {
    dim_t mb = 2, ic = 0, id = 1, ih = 1, iw = 1;
    int ndims = 2; ///< 2 (nc), 3 (ncw), 4 (nchw) or 5 (ncdhw)
    float eps = 1.f / 16;
    std::string name;

    /// Logical dims (mb, ic, [[id,] ih,] iw).
    dims_t dims() const;
    /// Canonical text without the name: "mb2ic64ih56", "mb1ic19id4ih6iw6", "mb2ic23".
    std::string str() const;
};

/// Parses a descriptor; '_' separators and a quoted or bare name are allowed. Throws
/// blockdnn::error (invalid_arguments) naming the text and the bad key or value.
bnorm_shape_t parse_bnorm_shape(const std::string &text);

} // namespace blockdnn::impl
