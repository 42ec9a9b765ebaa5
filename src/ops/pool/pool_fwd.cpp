// SPDX-License-Identifier: Apache-2.0
// pool_fwd: creation (validation, dispatch), execute (argument checks), the dispatch table.
#include <array>

#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "ops/op_state.hpp"
#include "ops/pool/pool_impl.hpp"

namespace blockdnn {

namespace impl {

using pool_fwd_state_t = op_state_t<pool_prb_t, pool_impl_t>;

std::string pool_prb_t::str() const {
    return cat(
            "alg:", to_string(desc.alg), " src:", to_string(src.tag()), " dst:", to_string(dst.tag()), " ", desc.str());
}

namespace {
constexpr pool_row_t impls[] = {
        {"simd:scalar:max_blocked", isa::scalar, create_if<accept_pool_fwd_max_blocked, create_pool_fwd_max_blocked>},
        {"simd:scalar:avg_blocked", isa::scalar, create_if<accept_pool_fwd_avg_blocked, create_pool_fwd_avg_blocked>},
        {"simd:scalar:max_nxc", isa::scalar, create_if<accept_pool_fwd_max_nxc, create_pool_fwd_max_nxc>},
        {"simd:scalar:avg_nxc", isa::scalar, create_if<accept_pool_fwd_avg_nxc, create_pool_fwd_avg_nxc>},
        {"simd:scalar:reordered", isa::scalar, create_if<accept_pool_fwd_reordered, create_pool_fwd_reordered>},
        {"ref", isa::scalar, create_any<create_pool_fwd_ref>},
};
} // namespace

std::span<const pool_row_t> pool_fwd_impls() { return impls; }

} // namespace impl

using namespace impl;

namespace {
constexpr const char *op = "pool_fwd";

// The names of src's and dst's dims per number of spatial dims (1 to 3), built once: every
// creation's state views them.
struct field_names_t {
    std::vector<std::string> src, dst;
};
const field_names_t &field_names(int nsp) {
    static const std::array<field_names_t, 3> names = [] {
        std::array<field_names_t, 3> a;
        for (int n = 1; n <= 3; ++n) a[n - 1] = {dim_fields({"mb", "ic"}, "i", n), dim_fields({"mb", "ic"}, "o", n)};
        return a;
    }();
    return names[nsp - 1];
}

std::shared_ptr<pool_fwd_state_t> create_state(const pool_desc &desc, format_tag src_tag, format_tag dst_tag) {
    desc.validate();
    check_tag(op, "src", src_tag, layout_family::activation, desc.ndims);
    check_tag(op, "dst", dst_tag, layout_family::activation, desc.ndims);
    pool_prb_t p;
    p.desc = desc;
    p.src = make_arg_desc(op, "src", desc.src_dims(), src_tag);
    p.dst = make_arg_desc(op, "dst", desc.dst_dims(), dst_tag);
    auto st = create_op_state<pool_fwd_state_t>(op, pool_fwd_impls(), p);
    const field_names_t &names = field_names(desc.ndims - 2);
    st->src_fields = names.src;
    st->dst_fields = names.dst;
    return st;
}
} // namespace

pool_fwd::pool_fwd(const pool_desc &desc, format_tag src_tag, format_tag dst_tag)
    : primitive(create_state(desc, src_tag, dst_tag)) {}

void pool_fwd::execute(const pool_fwd_args &args) const {
    const tensor &src = args.src, &dst = args.dst;
    const pool_fwd_state_t &st = state<pool_fwd_state_t>();
    const pool_prb_t &p = st.prb;
    check_arg(op, "src", src, p.src, st.src_fields);
    check_arg(op, "dst", dst, p.dst, st.dst_fields);
    check_no_overlap(op, "dst", dst, "src", src);
    launch(
            {op, st.impl_name, effective_isa(), shared_state()}, {&src, &dst}, [&] { return p.str(); },
            [impl = st.impl.get(), s = src.f32(), d = dst.f32()] {
                impl->execute({s, d});
            });
}

const pool_desc &pool_fwd::desc() const { return state<pool_fwd_state_t>().prb.desc; }
const tensor_desc &pool_fwd::src_desc() const { return state<pool_fwd_state_t>().prb.src; }
const tensor_desc &pool_fwd::dst_desc() const { return state<pool_fwd_state_t>().prb.dst; }

} // namespace blockdnn
