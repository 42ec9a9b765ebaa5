// SPDX-License-Identifier: Apache-2.0
// binary_fwd: creation (validation, dispatch), execute (argument checks), the dispatch table.
#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "ops/binary/binary_impl.hpp"
#include "ops/op_state.hpp"

namespace blockdnn {

namespace impl {

using binary_fwd_state_t = op_state_t<binary_prb_t, binary_impl_t>;

std::string binary_prb_t::str() const {
    std::string s = cat("alg:", to_string(desc.alg), " src0:", src0.str(), " src1:", src1.str(), " dst:", dst.str());
    if (!po.empty()) s += cat(" post_ops:", po.str());
    return s;
}

namespace {
constexpr binary_row_t impls[] = {
        {"jit:avx512_core", isa::avx512_core, create_binary_fwd_jit<isa::avx512_core>},
        {"jit:avx2", isa::avx2, create_binary_fwd_jit<isa::avx2>},
        {"ref", isa::scalar, create_any<create_binary_fwd_ref>},
};
} // namespace

std::span<const binary_row_t> binary_fwd_impls() { return impls; }

} // namespace impl

using namespace impl;

namespace {
constexpr const char *op = "binary_fwd";

// The desc of the tensor_desc form, and the rule only that form has: dst has src0's dims.
binary_desc desc_of(binary_alg alg, const tensor_desc &src0, const tensor_desc &src1, const tensor_desc &dst) {
    const binary_desc desc {alg, src0.dims(), src1.dims()};
    desc.validate();
    if (dst.ndims() != src0.ndims())
        fail(status::invalid_arguments, op, ": dst has ", dst.ndims(), " dims (", dst.str(), "), src0 has ",
                src0.ndims(), " (", src0.str(), ")");
    for (int k = 0; k < src0.ndims(); ++k)
        if (dst.dim(k) != src0.dim(k))
            fail(status::invalid_arguments, op, ": dst dims[", k, "] (", dst.dim_name(k), ") = ", dst.dim(k),
                    " must equal src0's ", src0.dim(k), " (src0 ", src0.str(), ", dst ", dst.str(), ")");
    return desc;
}

std::shared_ptr<binary_fwd_state_t> create_state(
        const binary_desc &desc, format_tag src0_tag, format_tag src1_tag, format_tag dst_tag, const post_ops &po) {
    desc.validate();
    binary_prb_t p;
    p.desc = desc;
    check_not_any(op, "src0", src0_tag);
    check_not_any(op, "src1", src1_tag);
    check_not_any(op, "dst", dst_tag);
    p.src0 = make_arg_desc(op, "src0", desc.src0_dims, src0_tag);
    p.src1 = make_arg_desc(op, "src1", desc.src1_dims, src1_tag);
    p.dst = make_arg_desc(op, "dst", desc.dst_dims(), dst_tag);
    p.po = po;
    return create_op_state<binary_fwd_state_t>(op, binary_fwd_impls(), p);
}
} // namespace

binary_fwd::binary_fwd(
        const binary_desc &desc, format_tag src0_tag, format_tag src1_tag, format_tag dst_tag, const post_ops &po)
    : primitive(create_state(desc, src0_tag, src1_tag, dst_tag, po)) {}

binary_fwd::binary_fwd(
        binary_alg alg, const tensor_desc &src0, const tensor_desc &src1, const tensor_desc &dst, const post_ops &po)
    : binary_fwd(desc_of(alg, src0, src1, dst), src0.tag(), src1.tag(), dst.tag(), po) {}

void binary_fwd::execute(const binary_fwd_args &args) const {
    const tensor &src0 = args.src0, &src1 = args.src1, &dst = args.dst;
    const binary_fwd_state_t &st = state<binary_fwd_state_t>();
    const binary_prb_t &p = st.prb;
    check_arg(op, "src0", src0, p.src0);
    check_arg(op, "src1", src1, p.src1);
    check_arg(op, "dst", dst, p.dst);
    if (!same_tensor(dst, src0)) check_no_overlap(op, "dst", dst, "src0", src0);
    check_no_overlap(op, "dst", dst, "src1", src1);
    launch(
            {op, st.impl_name, effective_isa(), shared_state()}, {&src0, &src1, &dst}, [&] { return p.str(); },
            [impl = st.impl.get(), s0 = src0.f32(), s1 = src1.f32(), d = dst.f32()] {
                impl->execute({s0, s1, d});
            });
}

const binary_desc &binary_fwd::desc() const { return state<binary_fwd_state_t>().prb.desc; }
binary_alg binary_fwd::alg() const { return desc().alg; }
const post_ops &binary_fwd::attr_post_ops() const { return state<binary_fwd_state_t>().prb.po; }
const tensor_desc &binary_fwd::src0_desc() const { return state<binary_fwd_state_t>().prb.src0; }
const tensor_desc &binary_fwd::src1_desc() const { return state<binary_fwd_state_t>().prb.src1; }
const tensor_desc &binary_fwd::dst_desc() const { return state<binary_fwd_state_t>().prb.dst; }

} // namespace blockdnn
