// SPDX-License-Identifier: Apache-2.0
// conv_desc: validation rules, output-size inference, benchdnn text form, tensor dims.
#include <algorithm>
#include <array>

#include "blockdnn/conv.hpp"
#include "core/spatial.hpp"
#include "core/utils.hpp"

namespace blockdnn {

using namespace impl;

double conv_desc::flops() const {
    validate();
    // Whether a tap reads inside the input depends on each spatial dim alone, so the pairs
    // (output position, tap) that do are the product of the per-dim counts. Per tap k, the
    // outputs o with 0 <= o * s - p + k * (dl + 1) < i form one range.
    auto floor_div = [](dim_t a, dim_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
    double pairs = 1;
    for (const spatial_t &sp : spatial_groups(*this)) {
        dim_t n = 0;
        for (dim_t k = 0; k < sp.k; ++k) {
            const dim_t off = k * (sp.dl + 1) - sp.p; // i = o * s + off
            const dim_t lo = std::max<dim_t>(0, -floor_div(off, sp.s));
            const dim_t hi = std::min(sp.o - 1, floor_div(sp.i - 1 - off, sp.s));
            n += std::max<dim_t>(0, hi - lo + 1);
        }
        pairs *= static_cast<double>(n);
    }
    return 2.0 * static_cast<double>(mb) * static_cast<double>(oc) * static_cast<double>(ic / g) * pairs;
}

conv_desc &conv_desc::infer_dst_dims() {
    std::array<spatial_t, 3> gs = spatial_groups(*this);
    dim_t *outs[3] = {&od, &oh, &ow};
    for (int k = 3 - (ndims - 2); k < 3 && ndims >= 3 && ndims <= 5; ++k) {
        if (gs[k].s < 1)
            fail(status::invalid_arguments, "conv_fwd: ", gs[k].name("s"), " = ", gs[k].s, " must be >= 1");
        check_kernel_fits("conv_fwd", gs[k]);
        *outs[k] = gs[k].out_size();
    }
    return *this;
}

void conv_desc::validate() const {
    const char *op = "conv_fwd";
    if (ndims < 3 || ndims > 5)
        fail(status::invalid_arguments, op, ": ndims = ", ndims, " must be 3 (1-D), 4 (2-D) or 5 (3-D)");
    const std::pair<const char *, dim_t> counts[] = {{"mb", mb}, {"g", g}, {"ic", ic}, {"oc", oc}};
    for (const auto &[name, v] : counts) {
        if (v <= 0) fail(status::invalid_arguments, op, ": ", name, " = ", v, " must be positive");
        check_field_range(op, name, v);
    }
    if (ic % g != 0) fail(status::invalid_arguments, op, ": g = ", g, " does not divide ic = ", ic);
    if (oc % g != 0) fail(status::invalid_arguments, op, ": g = ", g, " does not divide oc = ", oc);
    const std::array<spatial_t, 3> gs = spatial_groups(*this);
    for (int k = 0; k < 3; ++k) {
        if (k < 5 - ndims) check_unused_spatial(op, gs[k], ndims);
        else check_spatial(op, gs[k]);
    }
}

std::string conv_desc::str() const {
    std::string s;
    if (g != 1) s += cat("g", g);
    return s + cat("mb", mb, "ic", ic) + spatial_text(spatial_groups(*this), ndims, cat("oc", oc));
}

dims_t conv_desc::src_dims() const { return spatial_dims({mb, ic}, {id, ih, iw}, ndims); }

dims_t conv_desc::wei_dims(bool grouped) const {
    if (grouped) return spatial_dims({g, oc / g, ic / g}, {kd, kh, kw}, ndims);
    return spatial_dims({oc, ic}, {kd, kh, kw}, ndims);
}

dims_t conv_desc::dst_dims() const { return spatial_dims({mb, oc}, {od, oh, ow}, ndims); }

} // namespace blockdnn
