// SPDX-License-Identifier: Apache-2.0
// Batch normalization forward's public side: the table, the problem, the checks of each
// execution's tensors (before anything is written), dispatch, and the running-statistics update.
#include <cmath>
#include <vector>

#include "ops/bnorm/bnorm_impl.hpp"
#include "ops/op_state.hpp"
#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "core/verbose.hpp"
#include "tensor/layout.hpp"

namespace blockdnn::impl {

namespace {

constexpr const char *op = "bnorm_fwd";

constexpr bnorm_row_t impls[] = {
        {"jit:avx512_core", isa::avx512_core, create_bnorm_fwd_jit<isa::avx512_core>},
        {"jit:avx2", isa::avx2, create_bnorm_fwd_jit<isa::avx2>},
        {"ref", isa::scalar, create_any<create_bnorm_fwd_ref>},
};

bnorm_prb_t make_prb(const bnorm_desc &in) {
    bnorm_prb_t p;
    p.desc = in;
    bnorm_desc &d = p.desc;
    d.validate();
    if (d.dst.ndims() == 0) d.dst = d.src;
    p.mb = d.src.dim(0);
    p.c = d.src.dim(1);
    p.sp = 1;
    for (int k = 2; k < d.src.ndims(); ++k) p.sp *= d.src.dim(k);
    p.training = d.mode == bnorm_mode::training;
    p.use_scale = has(d.flags, bnorm_flags::use_scale);
    p.use_shift = has(d.flags, bnorm_flags::use_shift);
    p.fuse_relu = has(d.flags, bnorm_flags::fuse_relu);
    return p;
}

// A per-channel tensor: memory, dims {c}, layout x, f32.
float *check_stat(const tensor &t, const char *field, dim_t c, const char *why) {
    if (t.empty()) fail(status::invalid_arguments, op, ": ", field, " is required (", why, ") but has no memory");
    const tensor_desc &d = t.desc();
    if (d.ndims() != 1 || d.dim(0) != c)
        fail(status::invalid_arguments, op, ": ", field, " has dims ", d.str(), ", expected {c} = ", c);
    if (d.tag() != format_tag::x)
        fail(status::invalid_arguments, op, ": ", field, " layout ", to_string(d.tag()), " must be x");
    return t.f32();
}

} // namespace

void check_bnorm_tensor(
        const char *op, const tensor &t, const char *field, const tensor_desc &expected, const char *why) {
    if (t.empty())
        fail(status::invalid_arguments, op, ": ", field, why ? " is required (" : " has no memory", why ? why : "",
                why ? ") but has no memory" : "");
    if (t.desc() != expected)
        fail(status::invalid_arguments, op, ": ", field, " is ", t.desc().str(), ", the op was created for ",
                expected.str());
}

std::string bnorm_flags_str(bool use_scale, bool use_shift, bool fuse_relu) {
    std::string flags;
    if (use_scale) flags += "scale+";
    if (use_shift) flags += "shift+";
    if (fuse_relu) flags += "relu+";
    if (flags.empty()) flags = "none+";
    flags.pop_back();
    return flags;
}

std::string to_string(const bnorm_prb_t &p) {
    return cat(to_string(p.desc.mode), ":", p.desc.src.str(), ":", to_string(p.desc.dst.tag()), ":eps", p.desc.epsilon,
            ":flags=", bnorm_flags_str(p.use_scale, p.use_shift, p.fuse_relu));
}

std::span<const bnorm_row_t> bnorm_fwd_impls() { return impls; }

} // namespace blockdnn::impl

namespace blockdnn {

using namespace impl;

namespace {
using bnorm_fwd_state_t = op_state_t<bnorm_prb_t, bnorm_impl_t>;
}

const char *to_string(bnorm_mode m) { return m == bnorm_mode::training ? "training" : "inference"; }

bnorm_fwd::bnorm_fwd(const bnorm_desc &desc)
    : primitive(create_op_state<bnorm_fwd_state_t>(op, bnorm_fwd_impls(), make_prb(desc))) {}

const bnorm_desc &bnorm_fwd::desc() const { return state<bnorm_fwd_state_t>().prb.desc; }

tensor_desc bnorm_fwd::stat_desc() const { return tensor_desc({desc().src.dim(1)}, format_tag::x); }

void bnorm_fwd::execute(const bnorm_fwd_args &a) const {
    const bnorm_fwd_state_t &st = state<bnorm_fwd_state_t>();
    const bnorm_desc &d = st.prb.desc;
    const dim_t c = d.src.dim(1);
    const bool training = d.mode == bnorm_mode::training;
    check_bnorm_tensor(op, a.src, "src", d.src);
    check_bnorm_tensor(op, a.dst, "dst", d.dst);
    if (a.dst.data() == a.src.data() && d.dst != d.src)
        fail(status::invalid_arguments, op, ": dst shares src's memory but its layout ", to_string(d.dst.tag()),
                " differs from src's ", to_string(d.src.tag()), " (in place needs one layout)");
    bnorm_args_t mem;
    mem.src = a.src.f32();
    mem.dst = a.dst.f32();
    const bool own_stats = training && a.mean.empty() && a.variance.empty(); // scratch when run
    if (!own_stats) {
        const char *why = training ? "training writes mean and variance together" : "inference reads it";
        mem.mean = check_stat(a.mean, "mean", c, why);
        mem.variance = check_stat(a.variance, "variance", c, why);
    }
    const bool use_scale = has(d.flags, bnorm_flags::use_scale), use_shift = has(d.flags, bnorm_flags::use_shift);
    if (use_scale) mem.scale = check_stat(a.scale, "scale", c, "use_scale is set");
    if (use_shift) mem.shift = check_stat(a.shift, "shift", c, "use_shift is set");
    // Nothing written may overlap anything else of the call, except dst being src itself.
    const tensor none, &scale = use_scale ? a.scale : none, &shift = use_shift ? a.shift : none;
    if (training)
        check_outputs_alone(op, {{"dst", a.dst}, {"mean", a.mean}, {"variance", a.variance}},
                {{"src", a.src}, {"scale", scale}, {"shift", shift}}, {&a.src});
    else
        check_outputs_alone(op, {{"dst", a.dst}},
                {{"src", a.src}, {"mean", a.mean}, {"variance", a.variance}, {"scale", scale}, {"shift", shift}},
                {&a.src});

    launch(
            {op, st.impl_name, effective_isa(), shared_state()}, {&a.src, &a.dst, &a.mean, &a.variance, &scale, &shift},
            [&] { return to_string(st.prb); },
            [impl = st.impl.get(), mem, c = own_stats ? c : 0] {
                bnorm_args_t m = mem;
                std::vector<float> scratch(static_cast<std::size_t>(2 * c)); // training without caller statistics
                if (c > 0) m.mean = scratch.data(), m.variance = scratch.data() + c;
                impl->execute(m);
            });
}

void bnorm_update_running_stats(const tensor &mean, const tensor &variance, dim_t count, float momentum, bool unbiased,
        const tensor &running_mean, const tensor &running_var) {
    // The checks in the denormals mode, and the caller's MXCSR (flags too) as it was on return.
    const mxcsr_scope fp(get_denormals_mode());
    constexpr const char *fn = "bnorm_update_running_stats";
    const tensor *ts[] = {&mean, &variance, &running_mean, &running_var};
    const char *names[] = {"mean", "variance", "running_mean", "running_var"};
    for (int k = 0; k < 4; ++k) {
        if (ts[k]->empty()) fail(status::invalid_arguments, fn, ": ", names[k], " has no memory");
        const tensor_desc &d = ts[k]->desc();
        if (d.ndims() != 1 || d.tag() != format_tag::x || d.dims() != mean.desc().dims())
            fail(status::invalid_arguments, fn, ": ", names[k], " is ", d.str(), ", expected x:", mean.desc().dim(0),
                    " like mean");
    }
    check_outputs_alone(fn, {{"running_mean", running_mean}, {"running_var", running_var}},
            {{"mean", mean}, {"variance", variance}});
    if (!(momentum >= 0.f && momentum <= 1.f))
        fail(status::invalid_arguments, fn, ": momentum = ", momentum, " must be in [0, 1]");
    if (count < 1) fail(status::invalid_arguments, fn, ": count = ", count, " must be >= 1");
    if (unbiased && count == 1)
        fail(status::invalid_arguments, fn,
                ": count = 1 with unbiased: the unbiased variance of one value "
                "is undefined");
    const double k = unbiased ? static_cast<double>(count) / static_cast<double>(count - 1) : 1.0;
    const double m = momentum;
    // The work holds copies of mean and variance; launch keeps the outputs alive while it is queued.
    launch(
            {fn, nullptr, isa::scalar, nullptr}, {&running_mean, &running_var}, [] { return std::string(); },
            [=, rm = running_mean.f32(), rv = running_var.f32()] {
                for (dim_t c = 0; c < mean.desc().dim(0); ++c) {
                    rm[c] = static_cast<float>((1 - m) * rm[c] + m * mean.f32()[c]);
                    rv[c] = static_cast<float>((1 - m) * rv[c] + m * variance.f32()[c] * k);
                }
            });
}

} // namespace blockdnn
