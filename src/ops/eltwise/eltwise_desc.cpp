// SPDX-License-Identifier: Apache-2.0
// The eltwise problem, the one desc of the op: eltwise_desc's validation (each rule naming
// field and value) and benchdnn text form, and the internal problem built from it.
#include <charconv>
#include <cmath>

#include "core/utils.hpp"
#include "ops/eltwise/eltwise_impl.hpp"
#include "tensor/op_check.hpp"

namespace blockdnn {

using namespace impl;

namespace {

constexpr const char *op = "eltwise_fwd";

// The shortest text that reads back to f ("0", "-1.5", "0.1").
std::string float_text(float f) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, f);
    return std::string(buf, r.ptr);
}

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
    return cat("--alg=", to_string(alg), " --alpha=", float_text(alpha), " --beta=", float_text(beta), " ",
            dims_text(dims));
}

} // namespace blockdnn

namespace blockdnn::impl {

std::string eltwise_prb_t::str() const {
    return cat("alg:", to_string(alg), " alpha:", alpha, " beta:", beta, " ", desc.str());
}

void check_eltwise_prb(const eltwise_prb_t &p) { p.op_desc().validate(); }

eltwise_prb_t make_eltwise_prb(const eltwise_desc &desc, format_tag src_tag, format_tag dst_tag) {
    desc.validate();
    check_not_any(op, "src", src_tag);
    check_not_any(op, "dst", dst_tag);
    if (dst_tag != src_tag)
        fail(status::invalid_arguments, op, ": dst_tag = ", to_string(dst_tag),
                " differs from src_tag = ", to_string(src_tag), "; src and dst share one layout");
    return {desc.alg, desc.alpha, desc.beta, make_arg_desc(op, "src", desc.src_dims(), src_tag)};
}

} // namespace blockdnn::impl
