// SPDX-License-Identifier: Apache-2.0
// softmax_fwd: creation (validation, dispatch), execute (argument checks), the dispatch table.
#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "ops/softmax/softmax_impl.hpp"

namespace blockdnn {

namespace impl {

struct softmax_fwd_state_t {
    softmax_prb_t prb;
    const char *impl_name = "";
    std::unique_ptr<softmax_impl_t> impl;
    std::vector<std::string> fields;
};

std::string softmax_prb_t::str() const { return cat("axis:", desc.axis, " src:", src.str(), " dst:", dst.str()); }

namespace {
constexpr softmax_row_t impls[] = {
        {"ref", isa::scalar, create_any<create_softmax_fwd_ref>},
};
} // namespace

std::span<const softmax_row_t> softmax_fwd_impls() { return impls; }

} // namespace impl

using namespace impl;

namespace {
constexpr const char *op = "softmax_fwd";

// The desc of the tensor_desc form, and the rule only that form has: dst has src's dims.
softmax_desc desc_of(const tensor_desc &src, const tensor_desc &dst, int axis) {
    softmax_desc desc;
    desc.dims = src.dims();
    desc.axis = axis;
    desc.validate();
    if (dst.ndims() != src.ndims())
        fail(status::invalid_arguments, op, ": dst has ", dst.ndims(), " dims (", dst.str(), "), src has ", src.ndims(),
                " (", src.str(), ")");
    for (int k = 0; k < src.ndims(); ++k)
        if (dst.dim(k) != src.dim(k))
            fail(status::invalid_arguments, op, ": dst dims[", k, "] (", dst.dim_name(k), ") = ", dst.dim(k),
                    " must equal src's ", src.dim(k), " (src ", src.str(), ", dst ", dst.str(), ")");
    return desc;
}
} // namespace

softmax_fwd::softmax_fwd(const softmax_desc &desc, format_tag src_tag, format_tag dst_tag) {
    desc.validate();
    auto st = std::make_shared<softmax_fwd_state_t>();
    softmax_prb_t &p = st->prb;
    p.desc = desc;
    check_not_any(op, "src", src_tag);
    check_not_any(op, "dst", dst_tag);
    p.src = make_arg_desc(op, "src", desc.src_dims(), src_tag);
    p.dst = make_arg_desc(op, "dst", desc.dst_dims(), dst_tag);
    for (int k = 0; k < p.src.ndims(); ++k) st->fields.push_back(cat("dims[", k, "]"));
    st->impl_name = create_impl(softmax_fwd_impls(), p, op, p.str(), st->impl).name;
    st_ = std::move(st);
}

softmax_fwd::softmax_fwd(const tensor_desc &src, const tensor_desc &dst, int axis)
    : softmax_fwd(desc_of(src, dst, axis), src.tag(), dst.tag()) {}

void softmax_fwd::execute(const softmax_fwd_args &args) const {
    const tensor &src = args.src, &dst = args.dst;
    const softmax_prb_t &p = st_->prb;
    check_arg(op, "src", src, p.src, st_->fields);
    check_arg(op, "dst", dst, p.dst, st_->fields);
    if (!same_tensor(src, dst)) check_no_overlap(op, "dst", dst, "src", src);
    launch(
            {op, st_->impl_name, effective_isa(), st_}, {&src, &dst}, [&] { return p.str(); },
            [impl = st_->impl.get(), s = src.f32(), d = dst.f32()] {
                impl->execute({s, d});
            });
}

const char *softmax_fwd::impl_name() const { return st_->impl_name; }
const softmax_desc &softmax_fwd::desc() const { return st_->prb.desc; }
int softmax_fwd::axis() const { return st_->prb.desc.axis; }
const tensor_desc &softmax_fwd::src_desc() const { return st_->prb.src; }
const tensor_desc &softmax_fwd::dst_desc() const { return st_->prb.dst; }
std::string softmax_fwd::str() const { return st_->prb.str(); }

} // namespace blockdnn
