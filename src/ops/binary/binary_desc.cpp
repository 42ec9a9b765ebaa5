// SPDX-License-Identifier: Apache-2.0
// binary_desc: validation and benchdnn text form (apart from the op, as the other descs).
#include "blockdnn/binary.hpp"
#include "core/spatial.hpp"
#include "core/utils.hpp"

namespace blockdnn {

using namespace impl;

namespace {

constexpr const char *op = "binary_fwd";

// "4 dims (2x19x3x5)", or "0 dims".
std::string rank_text(const dims_t &d) { return d.empty() ? "0 dims" : cat(d.size(), " dims (", dims_text(d), ")"); }

} // namespace

const char *to_string(binary_alg alg) {
    switch (alg) {
    case binary_alg::add: return "add";
    case binary_alg::mul: return "mul";
    }
    return "unknown";
}

void binary_desc::validate() const {
    if (alg != binary_alg::add && alg != binary_alg::mul)
        fail(status::invalid_arguments, op, ": alg = ", static_cast<int>(alg), " is not a binary_alg");
    const int nd = static_cast<int>(src0_dims.size());
    if (nd == 0 || nd > max_ndims)
        fail(status::invalid_arguments, op, ": src0_dims has ", rank_text(src0_dims), ", must have 1 to ", max_ndims);
    if (static_cast<int>(src1_dims.size()) != nd)
        fail(status::invalid_arguments, op, ": src1_dims has ", rank_text(src1_dims), ", src0_dims has ",
                rank_text(src0_dims), "; prepend 1s to broadcast a lower rank");
    for (int k = 0; k < nd; ++k) {
        if (src0_dims[k] <= 0)
            fail(status::invalid_arguments, op, ": src0_dims[", k, "] = ", src0_dims[k], " must be positive");
        // The field's name is built only for the message: every creation validates its desc.
        if (!field_in_range(src0_dims[k])) check_field_range(op, cat("src0_dims[", k, "]"), src0_dims[k]);
        if (src1_dims[k] <= 0)
            fail(status::invalid_arguments, op, ": src1_dims[", k, "] = ", src1_dims[k], " must be positive");
        if (src1_dims[k] != 1 && src1_dims[k] != src0_dims[k])
            fail(status::invalid_arguments, op, ": src1_dims[", k, "] = ", src1_dims[k],
                    " must be 1 (broadcast) or src0's ", src0_dims[k], " (src0 ", dims_text(src0_dims), ", src1 ",
                    dims_text(src1_dims), ")");
    }
}

std::string binary_desc::str() const {
    return cat("--alg=", to_string(alg), " ", dims_text(src0_dims), ":", dims_text(src1_dims));
}

} // namespace blockdnn
