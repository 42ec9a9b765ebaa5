// SPDX-License-Identifier: Apache-2.0
// softmax_fwd: creation (validation, dispatch), execute (argument checks), the dispatch table.
#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "ops/op_state.hpp"
#include "ops/softmax/softmax_impl.hpp"

namespace blockdnn {

namespace impl {

using softmax_fwd_state_t = op_state_t<softmax_prb_t, softmax_impl_t>;

std::string softmax_prb_t::str() const { return cat("axis:", desc.axis, " src:", src.str(), " dst:", dst.str()); }

namespace {
constexpr softmax_row_t impls[] = {
        {"jit:avx512_core", isa::avx512_core, create_softmax_fwd_jit<isa::avx512_core>},
        {"jit:avx2", isa::avx2, create_softmax_fwd_jit<isa::avx2>},
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

std::shared_ptr<softmax_fwd_state_t> create_state(const softmax_desc &desc, format_tag src_tag, format_tag dst_tag) {
    desc.validate();
    softmax_prb_t p;
    p.desc = desc;
    check_not_any(op, "src", src_tag);
    check_not_any(op, "dst", dst_tag);
    p.src = make_arg_desc(op, "src", desc.src_dims(), src_tag);
    p.dst = make_arg_desc(op, "dst", desc.dst_dims(), dst_tag);
    return create_op_state<softmax_fwd_state_t>(op, softmax_fwd_impls(), p);
}
} // namespace

softmax_fwd::softmax_fwd(const softmax_desc &desc, format_tag src_tag, format_tag dst_tag)
    : primitive(create_state(desc, src_tag, dst_tag)) {}

softmax_fwd::softmax_fwd(const tensor_desc &src, const tensor_desc &dst, int axis)
    : softmax_fwd(desc_of(src, dst, axis), src.tag(), dst.tag()) {}

void softmax_fwd::execute(const softmax_fwd_args &args) const {
    const tensor &src = args.src, &dst = args.dst;
    const softmax_fwd_state_t &st = state<softmax_fwd_state_t>();
    const softmax_prb_t &p = st.prb;
    check_arg(op, "src", src, p.src);
    check_arg(op, "dst", dst, p.dst);
    if (!same_tensor(src, dst)) check_no_overlap(op, "dst", dst, "src", src);
    launch(
            {op, st.impl_name, effective_isa(), shared_state()}, {&src, &dst}, [&] { return p.str(); },
            [impl = st.impl.get(), s = src.f32(), d = dst.f32()] {
                impl->execute({s, d});
            });
}

const softmax_desc &softmax_fwd::desc() const { return state<softmax_fwd_state_t>().prb.desc; }
int softmax_fwd::axis() const { return desc().axis; }
const tensor_desc &softmax_fwd::src_desc() const { return state<softmax_fwd_state_t>().prb.src; }
const tensor_desc &softmax_fwd::dst_desc() const { return state<softmax_fwd_state_t>().prb.dst; }

} // namespace blockdnn
