// SPDX-License-Identifier: Apache-2.0
// Batch normalization backward's public side: validation of the descriptor and of each
// execution's tensors (before anything is written), dispatch, verbose lines.
#include <cmath>

#include "ops/bnorm/bnorm_impl.hpp"
#include "ops/op_state.hpp"
#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "core/verbose.hpp"
#include "tensor/layout.hpp"

namespace blockdnn::impl {

namespace {

constexpr const char *op = "bnorm_bwd";

constexpr bnorm_bwd_row_t impls[] = {
        {"jit:avx512_core", isa::avx512_core, create_bnorm_bwd_jit<isa::avx512_core>},
        {"jit:avx2", isa::avx2, create_bnorm_bwd_jit<isa::avx2>},
        {"ref", isa::scalar, create_any<create_bnorm_bwd_ref>},
};

bnorm_bwd_prb_t make_prb(const bnorm_bwd_desc &in) {
    bnorm_bwd_prb_t p;
    p.desc = in;
    bnorm_bwd_desc &d = p.desc;
    d.validate();
    if (d.diff_dst.ndims() == 0) d.diff_dst = d.src;
    if (d.diff_src.ndims() == 0) d.diff_src = d.src;
    p.mb = d.src.dim(0);
    p.c = d.src.dim(1);
    p.sp = d.src.nelems() / (p.mb * p.c);
    p.use_scale = has(d.flags, bnorm_flags::use_scale);
    p.use_shift = has(d.flags, bnorm_flags::use_shift);
    p.fuse_relu = has(d.flags, bnorm_flags::fuse_relu);
    return p;
}

/// check_bnorm_tensor under bnorm_bwd's name.
void check_tensor(const tensor &t, const char *field, const tensor_desc &expected, const char *why = nullptr) {
    check_bnorm_tensor(op, t, field, expected, why);
}

float *check_stat(const tensor &t, const char *field, const tensor_desc &stat, const char *why) {
    check_tensor(t, field, stat, why);
    return t.f32();
}

} // namespace

std::string to_string(const bnorm_bwd_prb_t &p) {
    return cat("bwd:", p.desc.src.str(), ":", to_string(p.desc.diff_dst.tag()), ":", to_string(p.desc.diff_src.tag()),
            ":eps", p.desc.epsilon, ":flags=", bnorm_flags_str(p.use_scale, p.use_shift, p.fuse_relu),
            p.desc.global_stats ? ":global" : "");
}

std::span<const bnorm_bwd_row_t> bnorm_bwd_impls() { return impls; }

} // namespace blockdnn::impl

namespace blockdnn {

using namespace impl;

namespace {
using bnorm_bwd_state_t = op_state_t<bnorm_bwd_prb_t, bnorm_bwd_impl_t>;
}

bnorm_bwd::bnorm_bwd(const bnorm_bwd_desc &desc)
    : primitive(create_op_state<bnorm_bwd_state_t>(op, bnorm_bwd_impls(), make_prb(desc))) {}

const bnorm_bwd_desc &bnorm_bwd::desc() const { return state<bnorm_bwd_state_t>().prb.desc; }

void bnorm_bwd::execute(const bnorm_bwd_args &a) const {
    const bnorm_bwd_state_t &st = state<bnorm_bwd_state_t>();
    const bnorm_bwd_desc &d = st.prb.desc;
    const tensor_desc stat({d.src.dim(1)}, format_tag::x);
    check_tensor(a.src, "src", d.src);
    check_tensor(a.diff_dst, "diff_dst", d.diff_dst);
    check_tensor(a.diff_src, "diff_src", d.diff_src);
    if (a.diff_src.data() == a.src.data())
        fail(status::invalid_arguments, op, ": diff_src shares src's memory (src is read after diff_src is written)");
    if (a.diff_src.data() == a.diff_dst.data() && d.diff_src != d.diff_dst)
        fail(status::invalid_arguments, op, ": diff_src shares diff_dst's memory but its layout ",
                to_string(d.diff_src.tag()), " differs from diff_dst's ", to_string(d.diff_dst.tag()),
                " (in place needs one layout)");
    bnorm_bwd_args_t mem;
    mem.src = a.src.f32();
    mem.diff_dst = a.diff_dst.f32();
    mem.diff_src = a.diff_src.f32();
    mem.mean = check_stat(a.mean, "mean", stat, "backward reads the forward's statistics");
    mem.variance = check_stat(a.variance, "variance", stat, "backward reads the forward's statistics");
    if (has(d.flags, bnorm_flags::use_scale)) {
        mem.scale = check_stat(a.scale, "scale", stat, "use_scale is set");
        check_tensor(a.diff_scale, "diff_scale", stat, "use_scale is set");
        mem.diff_scale = a.diff_scale.f32();
    }
    if (has(d.flags, bnorm_flags::use_shift)) {
        check_tensor(a.diff_shift, "diff_shift", stat, "use_shift is set");
        mem.diff_shift = a.diff_shift.f32();
    }
    if (has(d.flags, bnorm_flags::fuse_relu)) {
        check_tensor(a.dst, "dst", d.diff_dst, "fuse_relu is set: the forward's dst is the relu mask");
        mem.dst_fwd = a.dst.f32();
    }

    // Nothing written may overlap anything else of the call, except diff_src being diff_dst.
    const tensor none, &scale = mem.scale ? a.scale : none, &dst = mem.dst_fwd ? a.dst : none;
    const tensor &diff_scale = mem.diff_scale ? a.diff_scale : none, &diff_shift = mem.diff_shift ? a.diff_shift : none;
    check_outputs_alone(op, {{"diff_src", a.diff_src}, {"diff_scale", diff_scale}, {"diff_shift", diff_shift}},
            {{"diff_dst", a.diff_dst}, {"src", a.src}, {"mean", a.mean}, {"variance", a.variance}, {"scale", scale},
                    {"dst", dst}},
            {&a.diff_dst});

    launch(
            {op, st.impl_name, effective_isa(), shared_state()},
            {&a.src, &a.diff_dst, &a.diff_src, &a.mean, &a.variance, &a.scale, &a.diff_scale, &a.diff_shift, &a.dst},
            [&] { return to_string(st.prb); }, [impl = st.impl.get(), mem] { impl->execute(mem); });
}

} // namespace blockdnn
