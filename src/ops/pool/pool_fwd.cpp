// SPDX-License-Identifier: Apache-2.0
// pool_fwd: creation (validation, dispatch), execute (argument checks), the dispatch table.
#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "ops/pool/pool_impl.hpp"

namespace blockdnn {

namespace impl {

struct pool_fwd_state_t {
    pool_prb_t prb;
    const char *impl_name = "";
    std::unique_ptr<pool_impl_t> impl;
    std::vector<std::string> src_fields, dst_fields;
};

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
        {"ref", isa::scalar, create_any<create_pool_fwd_ref>},
};
} // namespace

std::span<const pool_row_t> pool_fwd_impls() { return impls; }

} // namespace impl

using namespace impl;

namespace {
constexpr const char *op = "pool_fwd";

std::vector<std::string> fields(const char *prefix, int nsp) {
    std::vector<std::string> v {"mb", "ic"};
    for (const std::string &s : spatial_fields(prefix, nsp)) v.push_back(s);
    return v;
}
} // namespace

pool_fwd::pool_fwd(const pool_desc &desc, format_tag src_tag, format_tag dst_tag) {
    desc.validate();
    check_tag(op, "src", src_tag, layout_family::activation, desc.ndims);
    check_tag(op, "dst", dst_tag, layout_family::activation, desc.ndims);
    auto st = std::make_shared<pool_fwd_state_t>();
    pool_prb_t &p = st->prb;
    p.desc = desc;
    p.src = make_arg_desc(op, "src", desc.src_dims(), src_tag);
    p.dst = make_arg_desc(op, "dst", desc.dst_dims(), dst_tag);
    st->src_fields = fields("i", desc.ndims - 2);
    st->dst_fields = fields("o", desc.ndims - 2);
    st->impl_name = create_impl(pool_fwd_impls(), p, op, p.str(), st->impl).name;
    st_ = std::move(st);
}

void pool_fwd::execute(const pool_fwd_args &args) const {
    const tensor &src = args.src, &dst = args.dst;
    const pool_prb_t &p = st_->prb;
    check_arg(op, "src", src, p.src, st_->src_fields);
    check_arg(op, "dst", dst, p.dst, st_->dst_fields);
    check_no_overlap(op, "dst", dst, "src", src);
    launch(
            {op, st_->impl_name, effective_isa(), st_}, {&src, &dst}, [&] { return p.str(); },
            [impl = st_->impl.get(), s = src.f32(), d = dst.f32()] {
                impl->execute({s, d});
            });
}

const char *pool_fwd::impl_name() const { return st_->impl_name; }
const pool_desc &pool_fwd::desc() const { return st_->prb.desc; }
const tensor_desc &pool_fwd::src_desc() const { return st_->prb.src; }
const tensor_desc &pool_fwd::dst_desc() const { return st_->prb.dst; }
std::string pool_fwd::str() const { return st_->prb.str(); }

} // namespace blockdnn
