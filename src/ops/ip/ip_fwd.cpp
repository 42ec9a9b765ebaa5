// SPDX-License-Identifier: Apache-2.0
// inner_product_fwd: creation (dispatch), execute (argument checks) and the dispatch table
// (the desc's rules and text are in ip_desc.cpp).
#include <array>

#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "core/spatial.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "ops/ip/ip_impl.hpp"
#include "ops/op_state.hpp"

namespace blockdnn {

namespace impl {

using ip_fwd_state_t = weighted_op_state_t<ip_prb_t, ip_impl_t>;

std::string ip_prb_t::str() const {
    std::string s = cat("src:", to_string(src.tag()), " wei:", to_string(wei.tag()));
    if (bia.ndims()) s += " bia:x";
    s += cat(" dst:", to_string(dst.tag()), " ", desc.str());
    if (!po.empty()) s += cat(" post_ops:", po.str());
    return s;
}

namespace {
constexpr ip_row_t impls[] = {
        {"gemm:avx512_core", isa::avx512_core, create_ip_fwd_jit<isa::avx512_core>},
        {"gemm:avx2", isa::avx2, create_ip_fwd_jit<isa::avx2>},
        {"ref", isa::scalar, create_any<create_ip_fwd_ref>},
};
} // namespace

std::span<const ip_row_t> ip_fwd_impls() { return impls; }

} // namespace impl

using namespace impl;

namespace {

constexpr const char *op = "inner_product_fwd";

// The names of each argument's dims per number of spatial dims (0 to 3; src and wei share
// the spatial ones), built once: every creation's state views them.
struct field_names_t {
    std::vector<std::string> src, wei, dst;
};
const field_names_t &field_names(int nsp) {
    static const std::array<field_names_t, 4> names = [] {
        std::array<field_names_t, 4> a;
        for (int n = 0; n <= 3; ++n)
            a[n] = {dim_fields({"mb", "ic"}, "i", n), dim_fields({"oc", "ic"}, "i", n), {"mb", "oc"}};
        return a;
    }();
    return names[nsp];
}

std::shared_ptr<ip_fwd_state_t> create_state(const inner_product_desc &desc, format_tag src_tag, format_tag wei_tag,
        format_tag dst_tag, const post_ops &po, bool wei_held = false) {
    desc.validate();
    check_tag(op, "src", src_tag, layout_family::activation, desc.ndims);
    check_tag(op, "wei", wei_tag, layout_family::weights, desc.ndims);
    if (is_grouped_weights_tag(wei_tag))
        fail(status::invalid_arguments, op, ": wei layout ", to_string(wei_tag), " has groups; inner product has none");
    check_tag(op, "dst", dst_tag, layout_family::activation, 2);
    ip_prb_t p;
    p.desc = desc;
    p.po = po;
    p.wei_held = wei_held;
    p.src = make_arg_desc(op, "src", desc.src_dims(), src_tag);
    p.wei = make_arg_desc(op, "wei", desc.wei_dims(), wei_tag);
    if (desc.with_bias) p.bia = make_arg_desc(op, "bia", desc.bia_dims(), format_tag::x);
    p.dst = make_arg_desc(op, "dst", desc.dst_dims(), dst_tag);
    auto st = create_op_state<ip_fwd_state_t>(op, ip_fwd_impls(), p);
    const field_names_t &names = field_names(desc.ndims - 2);
    st->src_fields = names.src;
    st->wei_fields = names.wei;
    st->dst_fields = names.dst;
    return st;
}

// wei and bia are the tensors behind the pointers: the caller's, or the op's own.
// `keep` is the shared pointer to st.
void run(const ip_fwd_state_t &st, const std::shared_ptr<const op_state_base_t> &keep, const tensor &src,
        const tensor &wei, const tensor &bia, const tensor &dst) {
    const float *b = st.prb.desc.with_bias ? bia.f32() : nullptr;
    launch(
            {op, st.impl_name, effective_isa(), keep}, {&src, &wei, &bia, &dst}, [&] { return st.prb.str(); },
            [impl = st.impl.get(), s = src.f32(), w = wei.f32(), b, d = dst.f32()] {
                impl->execute({s, w, b, d});
            });
}

std::shared_ptr<ip_fwd_state_t> create_state_with_weights(const inner_product_desc &desc, format_tag src_tag,
        const tensor &wei, const tensor &bia, format_tag dst_tag, const post_ops &po) {
    if (wei.empty()) fail(status::invalid_arguments, op, ": wei tensor has no memory");
    std::shared_ptr<ip_fwd_state_t> st = create_state(desc, src_tag, wei.desc().tag(), dst_tag, po, true);
    // Copied once into the layout the implementation reads, so the given one does not decide
    // the implementation.
    hold_weights_at_creation(op, *st, wei, bia, st->impl->preferred_wei_tag());
    return st;
}

} // namespace

inner_product_fwd::inner_product_fwd(
        const inner_product_desc &desc, format_tag src_tag, format_tag wei_tag, format_tag dst_tag, const post_ops &po)
    : primitive(create_state(desc, src_tag, wei_tag, dst_tag, po)) {}

inner_product_fwd::inner_product_fwd(const inner_product_desc &desc, format_tag src_tag, const tensor &wei,
        const tensor &bia, format_tag dst_tag, const post_ops &po)
    : primitive(create_state_with_weights(desc, src_tag, wei, bia, dst_tag, po)) {}

bool inner_product_fwd::holds_weights() const { return !state<ip_fwd_state_t>().wei.empty(); }

void inner_product_fwd::execute(const inner_product_fwd_args &args) const {
    const ip_fwd_state_t &st = state<ip_fwd_state_t>();
    const bool held = check_weighted_args(op, st, args.src, args.wei, args.bia, args.dst);
    run(st, shared_state(), args.src, held ? st.wei : args.wei, held ? st.bia : args.bia, args.dst);
}

const inner_product_desc &inner_product_fwd::desc() const { return state<ip_fwd_state_t>().prb.desc; }
const post_ops &inner_product_fwd::attr_post_ops() const { return state<ip_fwd_state_t>().prb.po; }
const tensor_desc &inner_product_fwd::src_desc() const { return state<ip_fwd_state_t>().prb.src; }
const tensor_desc &inner_product_fwd::wei_desc() const { return state<ip_fwd_state_t>().prb.wei; }
const tensor_desc &inner_product_fwd::bia_desc() const { return state<ip_fwd_state_t>().prb.bia; }
const tensor_desc &inner_product_fwd::dst_desc() const { return state<ip_fwd_state_t>().prb.dst; }

} // namespace blockdnn
