// SPDX-License-Identifier: Apache-2.0
// conv_conf_t helpers: layout strides, weights tags and printing.
#include <algorithm>
#include <iomanip>
#include <limits>
#include <sstream>

#include "core/utils.hpp"
#include "ops/conv/conv_conf.hpp"
#include "tensor/layout.hpp"

namespace blockdnn::impl {

const char *to_string(conv_kernel_kind k) {
    switch (k) {
    case conv_kernel_kind::direct: return "direct";
    case conv_kernel_kind::depthwise: return "depthwise";
    case conv_kernel_kind::first: return "first";
    }
    return "unknown";
}

format_tag direct_wei_tag(int ndims, bool grouped, int block) {
    using t = format_tag;
    if (block == 16) {
        if (ndims == 3) return grouped ? t::gOIw16i16o : t::OIw16i16o;
        if (ndims == 4) return grouped ? t::gOIhw16i16o : t::OIhw16i16o;
        return grouped ? t::gOIdhw16i16o : t::OIdhw16i16o;
    }
    if (ndims == 3) return grouped ? t::gOIw8i8o : t::OIw8i8o;
    if (ndims == 4) return grouped ? t::gOIhw8i8o : t::OIhw8i8o;
    return grouped ? t::gOIdhw8i8o : t::OIdhw8i8o;
}

format_tag dw_wei_tag(int ndims, int block) {
    using t = format_tag;
    if (block == 16) return ndims == 3 ? t::Goiw16g : ndims == 4 ? t::Goihw16g : t::Goidhw16g;
    return ndims == 3 ? t::Goiw8g : ndims == 4 ? t::Goihw8g : t::Goidhw8g;
}

// Dense strides of the layouts (tensor_desc computes the same; a test checks it). A plain
// src (first-layer kernel) has channels as planes; a blocked one holds blocks of channels as
// planes; a channels-last one holds all of a pixel's channels together, a block being a slice.
bool conv_conf_t::src_plain() const { return kind == conv_kernel_kind::first; }
bool conv_conf_t::act_nxc() const { return is_channels_last(src_tag); }
bool conv_conf_t::groups_share_src() const {
    constexpr dim_t line_floats = 64 / sizeof(float); // an x86-64 cache line
    return act_nxc() && g > 1 && kind != conv_kernel_kind::depthwise && (ic / g) % line_floats;
}
dim_t conv_conf_t::src_ic_stride() const { return src_plain() ? id * ih * iw : 1; }
dim_t conv_conf_t::src_w_stride() const { return src_plain() ? 1 : act_nxc() ? ic : ic_block; }
dim_t conv_conf_t::src_h_stride() const { return iw * src_w_stride(); }
dim_t conv_conf_t::src_d_stride() const { return ih * src_h_stride(); }
dim_t conv_conf_t::src_c_stride() const {
    return src_plain() ? ic_block * src_ic_stride() : act_nxc() ? ic_block : id * src_d_stride();
}
dim_t conv_conf_t::src_n_stride() const {
    if (src_plain()) return ic * src_ic_stride();
    return act_nxc() ? id * src_d_stride() : div_up(ic, ic_block) * src_c_stride();
}
dim_t conv_conf_t::dst_w_stride() const { return act_nxc() ? oc : oc_block; }
dim_t conv_conf_t::dst_h_stride() const { return ow * dst_w_stride(); }
dim_t conv_conf_t::dst_d_stride() const { return oh * dst_h_stride(); }
dim_t conv_conf_t::dst_c_stride() const { return act_nxc() ? oc_block : od * dst_d_stride(); }
dim_t conv_conf_t::dst_n_stride() const {
    return act_nxc() ? od * dst_d_stride() : div_up(oc, oc_block) * dst_c_stride();
}
// Depthwise weights hold one vector of channels per tap; the others a block of ic rows.
dim_t conv_conf_t::wei_kw_stride() const {
    return kind == conv_kernel_kind::depthwise ? oc_block : static_cast<dim_t>(ic_block) * oc_block;
}
dim_t conv_conf_t::wei_kh_stride() const { return kw * wei_kw_stride(); }
dim_t conv_conf_t::wei_kd_stride() const { return kh * wei_kh_stride(); }
dim_t conv_conf_t::wei_icb_stride() const { return kd * wei_kd_stride(); }
dim_t conv_conf_t::wei_ocb_stride() const { return nb_ic * wei_icb_stride(); }
dim_t conv_conf_t::wei_g_stride() const { return nb_oc * wei_ocb_stride(); }
dim_t conv_conf_t::loop_groups() const { return kind == conv_kernel_kind::depthwise ? 1 : g; }

bool conv_conf_t::has_sum() const {
    return std::any_of(post_ops.begin(), post_ops.end(), [](const post_op &e) { return e.what == post_op::kind::sum; });
}

conv_ur_split_t conv_ur_split(dim_t pixels, int ur_w, bool balanced) {
    conv_ur_split_t s;
    if (pixels <= 0 || ur_w <= 0) return s;
    if (!balanced) {
        s.large = static_cast<int>(std::min<dim_t>(ur_w, pixels));
        const dim_t tail = pixels % s.large;
        s.n_large = pixels / s.large;
        s.small = static_cast<int>(tail ? tail : s.large);
        s.n_small = tail ? 1 : 0;
        return s;
    }
    const dim_t n = div_up(pixels, ur_w), base = pixels / n, extra = pixels % n;
    s.n_large = extra ? extra : n;
    s.n_small = extra ? n - extra : 0;
    s.large = static_cast<int>(extra ? base + 1 : base);
    s.small = static_cast<int>(base);
    return s;
}

std::string to_string(const conv_conf_t &c) {
    std::ostringstream os;
    os << std::setprecision(std::numeric_limits<float>::max_digits10);
    os << c.str() << " kind=" << to_string(c.kind) << " isa=" << to_string(c.level) << " src=" << to_string(c.src_tag)
       << " wei=" << to_string(c.wei_tag) << " dst=" << to_string(c.dst_tag) << " simd_w=" << c.simd_w
       << " ic_block=" << c.ic_block << " oc_block=" << c.oc_block << " nb_ic=" << c.nb_ic << " nb_oc=" << c.nb_oc
       << " ic_tail=" << c.ic_tail << " oc_tail=" << c.oc_tail << " oh_block=" << c.oh_block
       << " nb_oc_blocking=" << c.nb_oc_blocking;
    if (c.nb_oc_blocking_tail) os << "+" << c.nb_oc_blocking_tail;
    os << " nb_ic_blocking=" << c.nb_ic_blocking << (c.ic_chunks_per_image ? ":per_image" : "") << " ur_w=" << c.ur_w
       << " ur_balanced=" << c.ur_balanced << " bcast=" << (c.bcast_embedded ? "embedded" : "register");
    if (c.wei_mem_vecs) os << " wei_mem=" << c.wei_mem_vecs;
    os << " prefetch=" << c.src_prefetch_dist << (c.src_prefetch_last_group ? ":last_group" : "")
       << " nb_oc_chunk=" << c.nb_oc_chunk << (c.image_outer ? ":image_outer" : "")
       << (c.groups_inside_image ? ":groups_inside_image" : "") << " bias=" << c.with_bias;
    if (c.rtus) {
        const conv_rtus_user_t &u = c.rtus_user;
        os << " rtus=id" << u.id << "ih" << u.ih << "iw" << u.iw << "od" << u.od << "oh" << u.oh << "ow" << u.ow << "sd"
           << u.sd << "sh" << u.sh << "sw" << u.sw;
    }
    os << " post_ops=";
    // Every parameter the code depends on.
    for (std::size_t i = 0; i < c.post_ops.size(); ++i) {
        const post_op &e = c.post_ops[i];
        if (i) os << '+';
        if (e.what == post_op::kind::sum) os << "sum:" << e.scale;
        else os << to_string(e.alg) << ':' << e.alpha << ':' << e.beta;
    }
    if (c.post_ops.empty()) os << "none";
    return os.str();
}

} // namespace blockdnn::impl
