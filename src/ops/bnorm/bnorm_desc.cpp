// SPDX-License-Identifier: Apache-2.0
// The batch normalization descriptors' rules, forward and backward, and their benchdnn text.
#include <cmath>

#include "blockdnn/bnorm.hpp"
#include "core/utils.hpp"
#include "tensor/layout.hpp"

namespace blockdnn {

using impl::cat;
using impl::fail;

namespace {

// A descriptor's activation tensor `field`: not empty, an activation layout of 2 to 5 dims.
void check_act(const char *op, const tensor_desc &d, const char *field) {
    if (d.ndims() == 0) fail(status::invalid_arguments, op, ": ", field, " descriptor is empty");
    if (impl::layout_info(d.tag()).family != impl::layout_family::activation || d.ndims() < 2)
        fail(status::invalid_arguments, op, ": ", field, " layout ", to_string(d.tag()),
                " is not an activation layout with 2 to 5 dims (mb, c, [[id,] ih,] iw)");
}

// `field` (src when empty) is an activation tensor with src's dims and data type.
void check_like_src(const char *op, const tensor_desc &given, const tensor_desc &src, const char *field) {
    const tensor_desc &t = given.ndims() == 0 ? src : given;
    check_act(op, t, field);
    if (t.dims() != src.dims())
        fail(status::invalid_arguments, op, ": ", field, " dims ", t.str(), " differ from src dims ", src.str());
    if (t.dt() != src.dt())
        fail(status::invalid_arguments, op, ": ", field, " data type ", to_string(t.dt()), " differs from src's ",
                to_string(src.dt()));
}

// epsilon finite and >= 0; no flag bits but use_scale, use_shift and fuse_relu.
void check_eps_flags(const char *op, float epsilon, bnorm_flags flags) {
    if (!std::isfinite(epsilon) || epsilon < 0)
        fail(status::invalid_arguments, op, ": epsilon = ", epsilon, " must be finite and >= 0");
    const unsigned known =
            static_cast<unsigned>(bnorm_flags::use_scale | bnorm_flags::use_shift | bnorm_flags::fuse_relu);
    if (static_cast<unsigned>(flags) & ~known)
        fail(status::invalid_arguments, op, ": flags = 0x", std::hex, static_cast<unsigned>(flags),
                " has unknown bits");
}

// benchdnn's descriptor of src's dims and epsilon (its default, 1/16, left out).
std::string benchdnn_str(const tensor_desc &src, float epsilon) {
    const dims_t &d = src.dims();
    std::string s = d.size() < 2 ? std::string("ic0") : cat("mb", d[0], "ic", d[1]);
    if (d.size() == 5) s += cat("id", d[2], "ih", d[3], "iw", d[4]);
    else if (d.size() == 4) s += d[2] == d[3] ? cat("ih", d[2]) : cat("ih", d[2], "iw", d[3]);
    else if (d.size() == 3) s += cat("iw", d[2]);
    if (epsilon != 1.f / 16) s += cat("eps", epsilon);
    return s;
}

} // namespace

void bnorm_desc::validate() const {
    constexpr const char *op = "bnorm_fwd";
    check_act(op, src, "src");
    check_like_src(op, dst, src, "dst");
    check_eps_flags(op, epsilon, flags);
    if (mode != bnorm_mode::training && mode != bnorm_mode::inference)
        fail(status::invalid_arguments, op, ": mode = ", static_cast<int>(mode), " is not training or inference");
}

std::string bnorm_desc::str() const { return benchdnn_str(src, epsilon); }

void bnorm_bwd_desc::validate() const {
    constexpr const char *op = "bnorm_bwd";
    check_act(op, src, "src");
    check_like_src(op, diff_dst, src, "diff_dst");
    check_like_src(op, diff_src, src, "diff_src");
    check_eps_flags(op, epsilon, flags);
}

std::string bnorm_bwd_desc::str() const { return benchdnn_str(src, epsilon); }

} // namespace blockdnn
