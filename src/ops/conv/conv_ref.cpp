// SPDX-License-Identifier: Apache-2.0
// Reference forward convolution, straight from the definition (PyTorch Conv{1,2,3}d, ONNX
// Conv, with separate begin/end pads and oneDNN's dilation, 0 = dense):
//   dst[n, g*OCG + oc, od, oh, ow] = post_ops(bias[g*OCG + oc] + sum over ic < ICG, kd, kh, kw of
//     src[n, g*ICG + ic, od*sd - pd + kd*(dd+1), oh*sh - ph + kh*(dh+1), ow*sw - pw + kw*(dw+1)]
//     * wei[g, oc, ic, kd, kh, kw])
// Sums run in double in the fixed order (ic, kd, kh, kw) and round once to f32, so the result
// does not depend on layout or threading. Memory is addressed only through tensor_desc
// offsets (per-dim tables of them), so every layout works.
#include <algorithm>
#include <memory>

#include "core/lazy.hpp"
#include "core/offset_table.hpp"
#include "core/spatial.hpp"
#include "tensor/layout.hpp"
#include "tensor/op_check.hpp"
#include "sched/parallel.hpp"
#include "core/post_ops_ref.hpp"
#include "ops/conv/conv_impl.hpp"

namespace blockdnn::impl {

namespace {

// [lo, hi): the outputs o < o_count whose tap o * s + off lies inside [0, i).
void taps_inside(dim_t off, dim_t s, dim_t i, dim_t o_count, dim_t &lo, dim_t &hi) {
    lo = off >= 0 ? 0 : (-off + s - 1) / s;
    hi = i - 1 - off < 0 ? 0 : std::min(o_count, (i - 1 - off) / s + 1);
    lo = std::min(lo, hi);
}

// Offset tables of the tensors, and per kw the outputs whose tap lies inside the input row.
struct conv_ref_tables_t {
    spatial_offsets_t src, dst, wei;
    std::vector<dim_t> bia;
    std::vector<dim_t> ow_lo, ow_hi;

    explicit conv_ref_tables_t(const conv_prb_t &p) : src(p.src, 2), dst(p.dst, 2), wei(p.wei, p.grouped_wei ? 3 : 2) {
        if (p.bia.ndims() != 0) bia = dim_offsets(p.bia, 0);
        const conv_desc &c = p.desc;
        for (dim_t kw = 0; kw < c.kw; ++kw) {
            dim_t lo, hi;
            taps_inside(kw * (c.dw + 1) - c.pw, c.sw, c.iw, c.ow, lo, hi);
            ow_lo.push_back(lo);
            ow_hi.push_back(hi);
        }
    }
};

class conv_fwd_ref_t final : public ref_impl_t<conv_impl_t, conv_prb_t, conv_ref_tables_t> {
public:
    using ref_impl_t::ref_impl_t;

    const conv_prb_t &prb() const override { return p_; }

    void execute(const conv_args_t &a) const override {
        const conv_ref_tables_t &t = tables();
        const conv_desc &c = p_.desc;
        const dim_t G = c.g, OCG = c.oc / G, ICG = c.ic / G;
        // Ungrouped weights have no g table: the group index is always 0 then.
        const std::vector<dim_t> zero {0};
        const std::vector<dim_t> &wg = p_.grouped_wei ? t.wei.lead[0] : zero;
        const std::vector<dim_t> &wo = t.wei.lead[p_.grouped_wei ? 1 : 0];
        const std::vector<dim_t> &wi = t.wei.lead[p_.grouped_wei ? 2 : 1];
        if (p_.dst.is_blocked()) zero_padding(p_.dst, a.dst);

        const dim_t work = c.mb * G * OCG * c.od * c.oh;
        parallel_for(work, 1, [&](dim_t begin, dim_t end) {
            // One output row at a time: each tap (ic, kd, kh, kw) adds its contribution to every
            // ow it reaches. Each output still sums its terms in the order (ic, kd, kh, kw).
            std::vector<double> acc(static_cast<std::size_t>(c.ow));
            for (dim_t w = begin; w < end; ++w) {
                const dim_t oh = w % c.oh, od = w / c.oh % c.od, ocg = w / (c.oh * c.od) % OCG;
                const dim_t g = w / (c.oh * c.od * OCG) % G, n = w / (c.oh * c.od * OCG * G);
                const dim_t oc = g * OCG + ocg;
                std::fill(acc.begin(), acc.end(), 0.0);
                const tap_range_t rd = tap_range(od, c.sd, c.pd, c.dd, c.kd, c.id);
                const tap_range_t rh = tap_range(oh, c.sh, c.ph, c.dh, c.kh, c.ih);
                for (dim_t icg = 0; icg < ICG; ++icg) {
                    const dim_t s_nc = t.src.lead[0][n] + t.src.lead[1][g * ICG + icg];
                    const dim_t w_goi = wg[g] + wo[ocg] + wi[icg];
                    for (dim_t kd = rd.lo; kd < rd.hi; ++kd) {
                        const dim_t id = od * c.sd - c.pd + kd * (c.dd + 1);
                        for (dim_t kh = rh.lo; kh < rh.hi; ++kh) {
                            const dim_t ih = oh * c.sh - c.ph + kh * (c.dh + 1);
                            const dim_t s_ndh = s_nc + t.src.d[id] + t.src.h[ih];
                            const dim_t w_dh = w_goi + t.wei.d[kd] + t.wei.h[kh];
                            for (dim_t kw = 0; kw < c.kw; ++kw) {
                                const double wv = a.wei[w_dh + t.wei.w[kw]];
                                const dim_t off = kw * (c.dw + 1) - c.pw; // iw = ow * sw + off
                                for (dim_t ow = t.ow_lo[kw]; ow < t.ow_hi[kw]; ++ow)
                                    acc[ow] += double(a.src[s_ndh + t.src.w[ow * c.sw + off]]) * wv;
                            }
                        }
                    }
                }
                const dim_t o_row = t.dst.lead[0][n] + t.dst.lead[1][oc] + t.dst.d[od] + t.dst.h[oh];
                for (dim_t ow = 0; ow < c.ow; ++ow) {
                    const double r = acc[ow] + (a.bia ? double(a.bia[t.bia[oc]]) : 0.0);
                    float &out = a.dst[o_row + t.dst.w[ow]];
                    out = apply_post_ops_ref(p_.po, static_cast<float>(r), out);
                }
            }
        });
    }
};

} // namespace

std::unique_ptr<conv_impl_t> create_conv_fwd_ref(const conv_prb_t &prb) {
    const int nd = prb.desc.ndims;
    const format_tag act = conv_plain_act_tag(nd);
    return std::make_unique<conv_fwd_ref_t>(with_layouts(prb, act, plain_weights_tag(nd, prb.grouped_wei), act));
}

} // namespace blockdnn::impl
