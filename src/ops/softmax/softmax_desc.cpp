// SPDX-License-Identifier: Apache-2.0
// softmax_desc: validation and benchdnn text form (apart from the op, as the other descs).
#include "blockdnn/softmax.hpp"
#include "core/utils.hpp"

namespace blockdnn {

using namespace impl;

namespace {

constexpr const char *op = "softmax_fwd";

} // namespace

void softmax_desc::validate() const {
    const int nd = static_cast<int>(dims.size());
    if (nd == 0 || nd > max_ndims)
        fail(status::invalid_arguments, op, ": dims has ", nd, " entries", nd ? cat(" (", dims_text(dims), ")") : "",
                ", must have 1 to ", max_ndims);
    for (int k = 0; k < nd; ++k)
        if (dims[k] <= 0) fail(status::invalid_arguments, op, ": dims[", k, "] = ", dims[k], " must be positive");
    if (axis < 0 || axis >= nd)
        fail(status::invalid_arguments, op, ": axis = ", axis, " is outside [0, ", nd, ") for dims ", dims_text(dims));
}

std::string softmax_desc::str() const { return cat("--axis=", axis, " ", dims_text(dims)); }

} // namespace blockdnn
