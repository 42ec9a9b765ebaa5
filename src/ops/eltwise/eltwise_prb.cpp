// SPDX-License-Identifier: Apache-2.0
// The internal eltwise problem: built from a validated eltwise_desc and the layouts, its rules
// and its text for verbose lines and errors.
#include "core/utils.hpp"
#include "ops/eltwise/eltwise_impl.hpp"
#include "tensor/op_check.hpp"

namespace blockdnn::impl {

namespace {

constexpr const char *op = "eltwise_fwd";

} // namespace

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
