// SPDX-License-Identifier: Apache-2.0
// conv_fwd: the table, creation (validation, tensor descriptors, dispatch) and execute
// (argument checks).
#include <array>

#include "tensor/launch.hpp"
#include "tensor/layout.hpp"
#include "tensor/op_check.hpp"
#include "core/spatial.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "ops/conv/conv_impl.hpp"
#include "ops/conv/conv_jit.hpp"
#include "ops/op_state.hpp"

namespace blockdnn {

namespace impl {

namespace {

using k = conv_kernel_kind;
constexpr isa avx512 = isa::avx512_core, avx2 = isa::avx2;

// Per ISA: the kernels for special shapes (depthwise, plain-src first layers, channels-last
// 1x1 as a GEMM), then the general direct one, then the kernels again with plain src or dst
// (or one of two layouts that differ) reordered around them. Each takes exactly what its init_conf takes. Groups too narrow for
// all of those run merged into wider ones, by the rows above, after them all: an AVX2 kernel
// that takes the groups as they are beats an AVX-512 one doing a merge's extra FMAs. "ref"
// last takes every problem.
constexpr conv_row_t impls[] = {
        {"jit:avx512_core:dw", avx512, create_conv_fwd_jit<avx512, k::depthwise>},
        {"jit:avx512_core:first", avx512, create_conv_fwd_jit<avx512, k::first>},
        {"jit:avx512_core:gemm_1x1", avx512, create_conv_fwd_gemm_1x1<avx512>},
        {"jit:avx512_core", avx512, create_conv_fwd_jit<avx512, k::direct>},
        {"jit:avx512_core:plain", avx512, create_conv_fwd_plain<avx512>},
        {"jit:avx2:dw", avx2, create_conv_fwd_jit<avx2, k::depthwise>},
        {"jit:avx2:first", avx2, create_conv_fwd_jit<avx2, k::first>},
        {"jit:avx2:gemm_1x1", avx2, create_conv_fwd_gemm_1x1<avx2>},
        {"jit:avx2", avx2, create_conv_fwd_jit<avx2, k::direct>},
        {"jit:avx2:plain", avx2, create_conv_fwd_plain<avx2>},
        {"jit:regroup", avx2, create_conv_fwd_regroup},
        {"ref", isa::scalar, create_any<create_conv_fwd_ref>},
};

} // namespace

std::span<const conv_row_t> conv_fwd_impls() { return impls; }

using conv_fwd_state_t = weighted_op_state_t<conv_prb_t, conv_impl_t>;

std::string conv_prb_t::str() const {
    auto tag = [](bool any, const tensor_desc &d) { return to_string(any ? format_tag::any : d.tag()); };
    std::string s = cat("src:", tag(src_any, src), " wei:", tag(wei_any, wei));
    if (bia.ndims()) s += " bia:x";
    s += cat(" dst:", tag(dst_any, dst), " ", desc.str());
    if (!po.empty()) s += cat(" post_ops:", po.str());
    return s;
}

conv_prb_t with_layouts(const conv_prb_t &prb, format_tag src, format_tag wei, format_tag dst) {
    conv_prb_t p = prb;
    const conv_desc &d = prb.desc;
    if (p.src_any) p.src = make_arg_desc("conv_fwd", "src", d.src_dims(), src);
    if (p.wei_any) p.wei = make_arg_desc("conv_fwd", "wei", d.wei_dims(p.grouped_wei), wei);
    if (p.dst_any) p.dst = make_arg_desc("conv_fwd", "dst", d.dst_dims(), dst);
    p.src_any = p.wei_any = p.dst_any = false;
    return p;
}

format_tag conv_plain_act_tag(int ndims) { return plain_act_tag(ndims); }

} // namespace impl

using namespace impl;

namespace {
constexpr const char *op = "conv_fwd";

// The names of each argument's dims, for check_arg()'s messages.
struct field_names_t {
    std::vector<std::string> src, wei, wei_grouped, dst;
};

// Per number of spatial dims (1 to 3), built once: every creation's state views them.
const field_names_t &field_names(int nsp) {
    static const std::array<field_names_t, 3> names = [] {
        std::array<field_names_t, 3> a;
        for (int n = 1; n <= 3; ++n)
            a[n - 1] = {dim_fields({"mb", "ic"}, "i", n), dim_fields({"oc", "ic"}, "k", n),
                    dim_fields({"g", "oc/g", "ic/g"}, "k", n), dim_fields({"mb", "oc"}, "o", n)};
        return a;
    }();
    return names[nsp - 1];
}

std::shared_ptr<conv_fwd_state_t> create_state(const conv_desc &desc, format_tag src_tag, format_tag wei_tag,
        format_tag dst_tag, const post_ops &po, bool wei_held = false) {
    desc.validate();
    const bool src_any = src_tag == format_tag::any, wei_any = wei_tag == format_tag::any,
               dst_any = dst_tag == format_tag::any;
    if (!src_any) check_tag(op, "src", src_tag, layout_family::activation, desc.ndims);
    if (!dst_any) check_tag(op, "dst", dst_tag, layout_family::activation, desc.ndims);
    // Weights left to the implementation are grouped exactly when the problem has groups.
    const bool grouped = wei_any ? desc.g > 1 : is_grouped_weights_tag(wei_tag);
    if (!wei_any) check_tag(op, "wei", wei_tag, layout_family::weights, desc.ndims + (grouped ? 1 : 0));
    if (desc.g > 1 && !grouped)
        fail(status::invalid_arguments, op, ": g = ", desc.g, " needs a grouped weights layout (goihw family), got ",
                to_string(wei_tag));

    conv_prb_t p;
    p.desc = desc;
    p.grouped_wei = grouped;
    p.wei_held = wei_held;
    p.po = po;
    p.src_any = src_any;
    p.wei_any = wei_any;
    p.dst_any = dst_any;
    if (!src_any) p.src = make_arg_desc(op, "src", desc.src_dims(), src_tag);
    if (!wei_any) p.wei = make_arg_desc(op, "wei", desc.wei_dims(grouped), wei_tag);
    if (desc.with_bias) p.bia = make_arg_desc(op, "bia", desc.bia_dims(), format_tag::x);
    if (!dst_any) p.dst = make_arg_desc(op, "dst", desc.dst_dims(), dst_tag);
    const bool any = p.any();
    std::shared_ptr<conv_fwd_state_t> st = create_op_state<conv_fwd_state_t>(op, conv_fwd_impls(), std::move(p));
    if (any) st->prb = st->impl->prb(); // the layouts the row picked
    const field_names_t &names = field_names(desc.ndims - 2);
    st->src_fields = names.src;
    st->wei_fields = grouped ? names.wei_grouped : names.wei;
    st->dst_fields = names.dst;
    return st;
}

std::shared_ptr<conv_fwd_state_t> create_state_with_weights(const conv_desc &desc, format_tag src_tag,
        const tensor &wei, const tensor &bia, format_tag dst_tag, const post_ops &po) {
    if (wei.empty()) fail(status::invalid_arguments, op, ": wei tensor has no memory");
    std::shared_ptr<conv_fwd_state_t> st = create_state(desc, src_tag, wei.desc().tag(), dst_tag, po, true);
    // Held in the layout the implementation reads best (it takes every layout with the same
    // conf and kernels), copied into that layout once.
    hold_weights_at_creation(op, *st, wei, bia, st->impl->preferred_wei_tag());
    return st;
}

// wei and bia are the tensors behind the pointers: the caller's, or the op's own. `keep` is
// the shared pointer to st.
void run(const conv_fwd_state_t &st, const std::shared_ptr<const op_state_base_t> &keep, const tensor &src,
        const tensor &wei, const tensor &bia, const tensor &dst) {
    const conv_args_t args {src.f32(), wei.f32(), st.prb.desc.with_bias ? bia.f32() : nullptr, dst.f32()};
    launch(
            {op, st.impl_name, effective_isa(), keep}, {&src, &wei, &bia, &dst}, [&] { return st.prb.str(); },
            [impl = st.impl.get(), args] { impl->execute(args); });
}

} // namespace

conv_fwd::conv_fwd(
        const conv_desc &desc, format_tag src_tag, format_tag wei_tag, format_tag dst_tag, const post_ops &po)
    : primitive(create_state(desc, src_tag, wei_tag, dst_tag, po)) {}

conv_fwd::conv_fwd(const conv_desc &desc, format_tag src_tag, const tensor &wei, const tensor &bia, format_tag dst_tag,
        const post_ops &po)
    : primitive(create_state_with_weights(desc, src_tag, wei, bia, dst_tag, po)) {}

bool conv_fwd::holds_weights() const { return !state<conv_fwd_state_t>().wei.empty(); }

void conv_fwd::execute(const conv_fwd_args &args) const {
    const conv_fwd_state_t &st = state<conv_fwd_state_t>();
    const bool held = check_weighted_args(op, st, args.src, args.wei, args.bia, args.dst);
    run(st, shared_state(), args.src, held ? st.wei : args.wei, held ? st.bia : args.bia, args.dst);
}

const conv_desc &conv_fwd::desc() const { return state<conv_fwd_state_t>().prb.desc; }
const post_ops &conv_fwd::attr_post_ops() const { return state<conv_fwd_state_t>().prb.po; }
const tensor_desc &conv_fwd::src_desc() const { return state<conv_fwd_state_t>().prb.src; }
const tensor_desc &conv_fwd::wei_desc() const { return state<conv_fwd_state_t>().prb.wei; }
const tensor_desc &conv_fwd::bia_desc() const { return state<conv_fwd_state_t>().prb.bia; }
const tensor_desc &conv_fwd::dst_desc() const { return state<conv_fwd_state_t>().prb.dst; }

} // namespace blockdnn
