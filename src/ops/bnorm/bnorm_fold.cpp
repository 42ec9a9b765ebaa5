// SPDX-License-Identifier: Apache-2.0
// Folding an inference batch normalization into the convolution before it (the transformation
// torch.fx's fuse_conv_bn_eval applies and oneDNN users do by hand), in double.
#include <cmath>
#include <cstring>
#include <vector>

#include "blockdnn/bnorm.hpp"

#include "ops/bnorm/bnorm_jit_stats.hpp"
#include "tensor/launch.hpp"
#include "core/utils.hpp"
#include "tensor/layout.hpp"

namespace blockdnn {

using namespace impl;

namespace {

constexpr const char *fn = "bnorm_fold_into_conv";

void check_channel_vec(const tensor &t, const char *field, dim_t oc, bool required) {
    if (t.empty()) {
        if (required) fail(status::invalid_arguments, fn, ": ", field, " has no memory");
        return;
    }
    const tensor_desc &d = t.desc();
    if (d.ndims() != 1 || d.dim(0) != oc || d.tag() != format_tag::x || d.dt() != data_type::f32)
        fail(status::invalid_arguments, fn, ": ", field, " is ", d.str(), ", expected x:", oc, " (the conv's oc)");
}

// wei_out and bia_out from checked arguments.
void fold(const tensor &wei, const tensor &bia, const tensor &mean, const tensor &variance, const tensor &scale,
        const tensor &shift, float epsilon, const tensor &wei_out, const tensor &bia_out) {
    const tensor_desc &wd = wei.desc();
    const bool grouped = layout_info(wd.tag()).dim_letter[0] == 'g';
    const dim_t ocg = wd.dim(grouped ? 1 : 0), oc = grouped ? wd.dim(0) * ocg : ocg;
    // alpha = gamma / sqrt(var + eps) per output channel (0 when var + eps is not positive).
    std::vector<double> alpha(oc);
    for (dim_t o = 0; o < oc; ++o)
        alpha[o] = (scale.empty() ? 1.0 : scale.f32()[o]) * bnorm_inv_std(variance.f32()[o], epsilon);
    if (wei_out.data() != wei.data()) std::memset(wei_out.data(), 0, wd.size_bytes()); // blocked padding stays zero
    const float *w = wei.f32();
    float *wo = wei_out.f32();
    const int nd = wd.ndims();
    dim_t idx[max_ndims] = {};
    for (dim_t k = 0, n = wd.nelems(); k < n; ++k) {
        const dim_t o = grouped ? idx[0] * ocg + idx[1] : idx[0];
        const dim_t off = wd.offset(idx);
        wo[off] = static_cast<float>(w[off] * alpha[o]);
        for (int i = nd - 1; i >= 0; --i) {
            if (++idx[i] < wd.dim(i)) break;
            idx[i] = 0;
        }
    }
    for (dim_t o = 0; o < oc; ++o) {
        const double b = bia.empty() ? 0.0 : bia.f32()[o];
        bia_out.f32()[o] = static_cast<float>((b - mean.f32()[o]) * alpha[o] + (shift.empty() ? 0.0 : shift.f32()[o]));
    }
}

} // namespace

void bnorm_fold_into_conv(const tensor &wei, const tensor &bia, const tensor &mean, const tensor &variance,
        const tensor &scale, const tensor &shift, float epsilon, const tensor &wei_out, const tensor &bia_out) {
    // The checks in the denormals mode, and the caller's MXCSR (flags too) as it was on return.
    const mxcsr_scope fp(get_denormals_mode());
    if (wei.empty()) fail(status::invalid_arguments, fn, ": wei has no memory");
    const tensor_desc &wd = wei.desc();
    const layout_info_t &li = layout_info(wd.tag());
    if (li.family != layout_family::weights || wd.dt() != data_type::f32)
        fail(status::invalid_arguments, fn, ": wei layout ", to_string(wd.tag()), " is not an f32 weights layout");
    const bool grouped = li.dim_letter[0] == 'g';
    const dim_t ocg = wd.dim(grouped ? 1 : 0), oc = grouped ? wd.dim(0) * ocg : ocg;
    if (wei_out.empty() || wei_out.desc() != wd)
        fail(status::invalid_arguments, fn, ": wei_out ",
                wei_out.empty() ? "has no memory" : "is " + wei_out.desc().str(),
                wei_out.empty() ? "" : cat(", expected wei's ", wd.str()));
    check_channel_vec(bia, "bia", oc, false);
    check_channel_vec(mean, "mean", oc, true);
    check_channel_vec(variance, "variance", oc, true);
    check_channel_vec(scale, "scale", oc, false);
    check_channel_vec(shift, "shift", oc, false);
    check_channel_vec(bia_out, "bia_out", oc, true);
    if (!std::isfinite(epsilon) || epsilon < 0)
        fail(status::invalid_arguments, fn, ": epsilon = ", epsilon, " must be finite and >= 0");
    // The work holds copies of the tensors, which keep their memory alive while it is queued.
    launch(
            {fn, nullptr, isa::scalar, nullptr}, {}, [] { return std::string(); },
            [=] { fold(wei, bia, mean, variance, scale, shift, epsilon, wei_out, bia_out); });
}

} // namespace blockdnn
