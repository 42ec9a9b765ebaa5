// SPDX-License-Identifier: Apache-2.0
// pool_desc: validation, output-size inference, global pooling, benchdnn text form.
#include <array>

#include "blockdnn/pool.hpp"
#include "core/spatial.hpp"
#include "core/utils.hpp"

namespace blockdnn {

using namespace impl;

namespace {

constexpr const char *op = "pool_fwd";

} // namespace

const char *to_string(pool_alg alg) {
    switch (alg) {
    case pool_alg::max: return "max";
    case pool_alg::avg_include_pad: return "avg_include_pad";
    case pool_alg::avg_exclude_pad: return "avg_exclude_pad";
    }
    return "unknown";
}

pool_desc pool_desc::global(pool_alg alg, const dims_t &src_dims) {
    const int nd = static_cast<int>(src_dims.size());
    if (nd < 3 || nd > 5)
        fail(status::invalid_arguments, op,
                ": global pooling needs src dims {mb, ic, spatial...} with 3 to 5 "
                "entries, got ",
                nd);
    pool_desc d;
    d.alg = alg;
    d.ndims = nd;
    d.mb = src_dims[0];
    d.ic = src_dims[1];
    dim_t *in[3] = {&d.id, &d.ih, &d.iw}, *k[3] = {&d.kd, &d.kh, &d.kw};
    for (int s = 0; s < nd - 2; ++s) *in[3 - (nd - 2) + s] = *k[3 - (nd - 2) + s] = src_dims[2 + s];
    return d;
}

pool_desc &pool_desc::infer_dst_dims() {
    std::array<spatial_t, 3> gs = spatial_groups(*this);
    dim_t *outs[3] = {&od, &oh, &ow};
    for (int k = 3 - (ndims - 2); k < 3 && ndims >= 3 && ndims <= 5; ++k) {
        if (gs[k].s < 1) fail(status::invalid_arguments, op, ": ", gs[k].name("s"), " = ", gs[k].s, " must be >= 1");
        check_kernel_fits(op, gs[k]);
        *outs[k] = gs[k].out_size();
    }
    return *this;
}

void pool_desc::validate() const {
    if (ndims < 3 || ndims > 5)
        fail(status::invalid_arguments, op, ": ndims = ", ndims, " must be 3 (1-D), 4 (2-D) or 5 (3-D)");
    if (alg != pool_alg::max && alg != pool_alg::avg_include_pad && alg != pool_alg::avg_exclude_pad)
        fail(status::invalid_arguments, op, ": alg = ", static_cast<int>(alg), " is not a pool_alg");
    for (const auto &[name, v] : {std::pair<const char *, dim_t> {"mb", mb}, {"ic", ic}}) {
        if (v <= 0) fail(status::invalid_arguments, op, ": ", name, " = ", v, " must be positive");
        check_field_range(op, name, v);
    }
    const std::array<spatial_t, 3> gs = spatial_groups(*this);
    for (int k = 0; k < 3; ++k) {
        if (k < 5 - ndims) {
            check_unused_spatial(op, gs[k], ndims);
        } else {
            check_spatial(op, gs[k]);
            check_windows_cover_input(op, gs[k]);
        }
    }
}

std::string pool_desc::str() const { return cat("mb", mb, "ic", ic) + spatial_text(spatial_groups(*this), ndims, ""); }

dims_t pool_desc::src_dims() const { return spatial_dims({mb, ic}, {id, ih, iw}, ndims); }
dims_t pool_desc::dst_dims() const { return spatial_dims({mb, ic}, {od, oh, ow}, ndims); }

} // namespace blockdnn
