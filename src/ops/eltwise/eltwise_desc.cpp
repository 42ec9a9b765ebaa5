// SPDX-License-Identifier: Apache-2.0
// The eltwise problem, the one desc of the op: eltwise_desc's validation (each rule naming
// field and value) and benchdnn text form. The internal problem built from it is in
// eltwise_prb.cpp, so that the descriptor alone links without the tensor checks.
#include <cmath>

#include "blockdnn/eltwise.hpp"
#include "core/utils.hpp"

namespace blockdnn {

using namespace impl;

namespace {

constexpr const char *op = "eltwise_fwd";

} // namespace

void eltwise_desc::validate() const {
    const int a = static_cast<int>(alg);
    if (a < static_cast<int>(eltwise_alg::relu) || a > static_cast<int>(eltwise_alg::linear))
        fail(status::invalid_arguments, op, ": alg = ", a, " is not an eltwise_alg");
    const int nd = static_cast<int>(dims.size());
    if (nd == 0)
        fail(status::invalid_arguments, op, ": desc is empty (dims has 0 entries), must have 1 to ", max_ndims);
    if (nd > max_ndims)
        fail(status::invalid_arguments, op, ": dims has ", nd, " entries (", dims_text(dims), "), must have 1 to ",
                max_ndims);
    for (int k = 0; k < nd; ++k)
        if (dims[k] <= 0) fail(status::invalid_arguments, op, ": dims[", k, "] = ", dims[k], " must be positive");
    if (!std::isfinite(alpha)) fail(status::invalid_arguments, op, ": alpha = ", alpha, " is not finite");
    if (!std::isfinite(beta)) fail(status::invalid_arguments, op, ": beta = ", beta, " is not finite");
    if (alg == eltwise_alg::clip && alpha > beta)
        fail(status::invalid_arguments, op, ": clip lower bound alpha = ", alpha, " exceeds upper bound beta = ", beta);
}

std::string eltwise_desc::str() const {
    return cat(
            "--alg=", to_string(alg), " --alpha=", float_str(alpha), " --beta=", float_str(beta), " ", dims_text(dims));
}

} // namespace blockdnn
