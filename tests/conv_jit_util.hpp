// SPDX-License-Identifier: Apache-2.0
// Helpers of the JIT convolution tests: a naive direct convolution on plain tensors (the
// PyTorch Conv2d/Conv3d formula with oneDNN's dilation convention), seeded random problems
// and small-integer fills that keep every f32 sum exact.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "blockdnn/blockdnn.hpp"
#include "jit/conv/conv_conf.hpp"
#include "test_util.hpp"

namespace conv_test {

using namespace blockdnn;
using blockdnn::impl::conv_post_op_t;
using blockdnn::impl::conv_prb_t;

inline format_tag plain_act_tag(int ndims) {
    return ndims == 3 ? format_tag::ncw : ndims == 4 ? format_tag::nchw : format_tag::ncdhw;
}

inline format_tag blocked_act_tag(int ndims, int blk) {
    if (blk == 16) return ndims == 3 ? format_tag::nCw16c : ndims == 4 ? format_tag::nChw16c : format_tag::nCdhw16c;
    return ndims == 3 ? format_tag::nCw8c : ndims == 4 ? format_tag::nChw8c : format_tag::nCdhw8c;
}

inline format_tag plain_wei_tag(int ndims, bool grouped) {
    if (grouped) return ndims == 3 ? format_tag::goiw : ndims == 4 ? format_tag::goihw : format_tag::goidhw;
    return ndims == 3 ? format_tag::oiw : ndims == 4 ? format_tag::oihw : format_tag::oidhw;
}

/// Logical dims of the activations: n, c, then the problem's spatial dims.
inline dims_t act_dims(const conv_prb_t &p, dim_t c, dim_t d, dim_t h, dim_t w) {
    if (p.ndims == 3) return {p.mb, c, w};
    if (p.ndims == 4) return {p.mb, c, h, w};
    return {p.mb, c, d, h, w};
}
inline dims_t src_dims(const conv_prb_t &p) { return act_dims(p, p.ic, p.id, p.ih, p.iw); }
inline dims_t dst_dims(const conv_prb_t &p) { return act_dims(p, p.oc, p.od, p.oh, p.ow); }
inline dims_t wei_dims(const conv_prb_t &p) {
    dims_t d;
    if (p.g > 1) d = {p.g, p.oc / p.g, p.ic / p.g};
    else d = {p.oc, p.ic};
    if (p.ndims == 5) d.push_back(p.kd);
    if (p.ndims >= 4) d.push_back(p.kh);
    d.push_back(p.kw);
    return d;
}

/// The reference result on plain (nc[d]hw, [g]oi[d]hw) tensors, with bias and post-ops.
/// dst holds dst_old on entry (read by a sum post-op). Accumulates in float with ow innermost
/// (so the compiler vectorizes it); the exact-integer tests do not depend on the order.
inline void naive_conv(const conv_prb_t &p, const float *src, const float *wei, const float *bia, float *dst) {
    const dim_t icg = p.ic / p.g, ocg = p.oc / p.g;
    const dim_t sp_i = p.id * p.ih * p.iw, sp_o = p.od * p.oh * p.ow, sp_k = p.kd * p.kh * p.kw;
    std::vector<float> acc(static_cast<std::size_t>(sp_o));
    for (dim_t n = 0; n < p.mb; ++n)
        for (dim_t g = 0; g < p.g; ++g)
            for (dim_t oc = 0; oc < ocg; ++oc) {
                const dim_t oc_all = g * ocg + oc;
                std::fill(acc.begin(), acc.end(), 0.f);
                for (dim_t ic = 0; ic < icg; ++ic) {
                    const float *s = src + (n * p.ic + g * icg + ic) * sp_i;
                    const float *w = wei + ((g * ocg + oc) * icg + ic) * sp_k;
                    for (dim_t kd = 0; kd < p.kd; ++kd)
                        for (dim_t kh = 0; kh < p.kh; ++kh)
                            for (dim_t kw = 0; kw < p.kw; ++kw) {
                                const float wv = w[(kd * p.kh + kh) * p.kw + kw];
                                // ow range whose iw = ow * sw - pw + kw * (dw + 1) is inside [0, iw)
                                const dim_t off = kw * (p.dw + 1) - p.pw;
                                dim_t ow_lo = 0, ow_hi = p.ow;
                                while (ow_lo < p.ow && ow_lo * p.sw + off < 0) ++ow_lo;
                                while (ow_hi > ow_lo && (ow_hi - 1) * p.sw + off >= p.iw) --ow_hi;
                                for (dim_t od = 0; od < p.od; ++od) {
                                    const dim_t id = od * p.sd - p.pd + kd * (p.dd + 1);
                                    if (id < 0 || id >= p.id) continue;
                                    for (dim_t oh = 0; oh < p.oh; ++oh) {
                                        const dim_t ih = oh * p.sh - p.ph + kh * (p.dh + 1);
                                        if (ih < 0 || ih >= p.ih) continue;
                                        const float *srow = s + (id * p.ih + ih) * p.iw + off;
                                        float *arow = acc.data() + (od * p.oh + oh) * p.ow;
                                        for (dim_t ow = ow_lo; ow < ow_hi; ++ow) arow[ow] += wv * srow[ow * p.sw];
                                    }
                                }
                            }
                }
                float *d = dst + (n * p.oc + oc_all) * sp_o;
                for (dim_t i = 0; i < sp_o; ++i) {
                    float r = acc[static_cast<std::size_t>(i)] + (bia ? bia[oc_all] : 0.f);
                    for (const conv_post_op_t &e : p.post_ops) {
                        if (e.what == conv_post_op_t::kind::sum) r = r + e.scale * d[i];
                        else r = eltwise_ref(e.alg, r, e.alpha, e.beta);
                    }
                    d[i] = r;
                }
            }
}

/// Small integers in [-range, range]: every product and sum of the tests is exact in f32.
inline void fill_int(const tensor &t, unsigned seed, int range) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> u(-range, range);
    float *p = t.f32();
    for_each_index(t.desc(), [&](const dim_t *idx) { p[t.desc().offset(idx)] = static_cast<float>(u(gen)); });
}

/// Puts NaN into every padded element of a blocked tensor (channels past the logical size),
/// so a kernel that reads padding, or fails to zero it, shows up.
inline void poison_padding(const tensor &t) {
    const tensor_desc &d = t.desc();
    std::vector<char> logical(static_cast<std::size_t>(d.nelems_padded()), 0);
    for_each_index(d, [&](const dim_t *idx) { logical[static_cast<std::size_t>(d.offset(idx))] = 1; });
    for (std::size_t i = 0; i < logical.size(); ++i)
        if (!logical[i]) t.f32()[i] = std::nanf("");
}

/// Which kernel a random problem is for.
enum class prb_kind { direct, first, depthwise };

/// A random valid problem. `blk` is the channel block of the layout under test: with groups,
/// per-group channels are multiples of it. MACs stay under `max_macs`. Layout tags are set:
/// src and dst blocked by `blk`, except a first-layer problem's plain src.
inline conv_prb_t random_prb(std::mt19937 &gen, int blk, dim_t max_macs, prb_kind kind = prb_kind::direct) {
    auto rnd = [&](dim_t lo, dim_t hi) { return std::uniform_int_distribution<dim_t>(lo, hi)(gen); };
    for (;;) {
        conv_prb_t p;
        const dim_t nd_pick = rnd(0, 9);
        p.ndims = nd_pick < 2 ? 3 : nd_pick < 8 ? 4 : 5;
        p.mb = rnd(1, 4);
        if (kind == prb_kind::depthwise) {
            p.g = p.ic = p.oc = rnd(2, 70);
        } else if (kind == prb_kind::first) {
            p.ic = rnd(1, blk);
            p.oc = rnd(1, 70);
        } else if (rnd(0, 9) < 2) {
            p.g = rnd(2, 3);
            p.ic = p.g * blk * rnd(1, 2);
            p.oc = p.g * blk * rnd(1, 2);
        } else {
            p.ic = rnd(0, 3) == 0 ? rnd(1, 4) * blk : rnd(1, 70);
            p.oc = rnd(0, 3) == 0 ? rnd(1, 4) * blk : rnd(1, 70);
        }
        dim_t *i[3] = {&p.id, &p.ih, &p.iw}, *o[3] = {&p.od, &p.oh, &p.ow}, *k[3] = {&p.kd, &p.kh, &p.kw};
        dim_t *s[3] = {&p.sd, &p.sh, &p.sw}, *pb[3] = {&p.pd, &p.ph, &p.pw}, *pe[3] = {&p.pd_r, &p.ph_r, &p.pw_r};
        dim_t *dl[3] = {&p.dd, &p.dh, &p.dw};
        bool ok = true;
        const bool pointwise = rnd(0, 5) == 0; // 1x1, no padding: a GEMM when the strides are 1
        const bool strided = rnd(0, 1) == 1;
        for (int d = 5 - p.ndims; d < 3; ++d) {
            const bool deep = p.ndims == 5;
            *k[d] = pointwise ? 1 : rnd(1, deep ? 3 : 7);
            *s[d] = pointwise && !strided ? 1 : rnd(1, 3);
            *dl[d] = !pointwise && rnd(0, 3) == 0 ? rnd(1, 2) : 0;
            *pb[d] = pointwise ? 0 : rnd(0, 4);
            const dim_t pr = pointwise ? 0 : rnd(0, 4);
            *i[d] = rnd(1, deep ? 10 : 40);
            const dim_t ext = (*k[d] - 1) * (*dl[d] + 1) + 1;
            if (*i[d] + *pb[d] + pr < ext) { ok = false; break; }
            *o[d] = (*i[d] + *pb[d] + pr - ext) / *s[d] + 1;
            *pe[d] = (*o[d] - 1) * *s[d] - *i[d] + ext - *pb[d];
        }
        if (!ok) continue;
        const dim_t macs = p.mb * p.oc * p.od * p.oh * p.ow * (p.ic / p.g) * p.kd * p.kh * p.kw;
        if (macs > max_macs) continue;
        p.with_bias = rnd(0, 1) == 1;
        switch (rnd(0, 7)) {
        case 0: p.post_ops = {{conv_post_op_t::kind::eltwise, eltwise_alg::relu}}; break;
        case 1: p.post_ops = {{conv_post_op_t::kind::eltwise, eltwise_alg::relu, 0.5f}}; break;
        case 2: p.post_ops = {{conv_post_op_t::kind::eltwise, eltwise_alg::linear, 0.5f, 1.f}}; break;
        case 3: p.post_ops = {{conv_post_op_t::kind::eltwise, eltwise_alg::clip, -40.f, 50.f}}; break;
        case 4:
            p.post_ops = {{conv_post_op_t::kind::sum, eltwise_alg::relu, 0.f, 0.f, 1.f},
                    {conv_post_op_t::kind::eltwise, eltwise_alg::relu}};
            break;
        case 5:
            p.post_ops = {{conv_post_op_t::kind::eltwise, eltwise_alg::linear, 2.f, -3.f},
                    {conv_post_op_t::kind::sum, eltwise_alg::relu, 0.f, 0.f, 0.5f}};
            break;
        default: break;
        }
        p.src_tag = kind == prb_kind::first ? plain_act_tag(p.ndims) : blocked_act_tag(p.ndims, blk);
        p.dst_tag = blocked_act_tag(p.ndims, blk);
        return p;
    }
}

} // namespace conv_test
