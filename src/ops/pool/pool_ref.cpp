// SPDX-License-Identifier: Apache-2.0
// Reference forward pooling, from the definitions (PyTorch MaxPool/AvgPool, ONNX MaxPool /
// AveragePool, oneDNN pooling): the window of dst[n, c, od, oh, ow] holds the taps
//   src[n, c, od*sd - pd + kd*(dd+1), oh*sh - ph + kh*(dh+1), ow*sw - pw + kw*(dw+1)]
// that fall inside the input. max: the largest (NaN wins, as in PyTorch); avg: their sum, in
// double, divided by kd*kh*kw (include_pad) or by their count (exclude_pad), rounded once.
// Addresses come from tensor_desc offsets, so every layout works.
#include <cmath>
#include <limits>
#include <memory>

#include "core/lazy.hpp"
#include "core/offset_table.hpp"
#include "tensor/op_check.hpp"
#include "sched/parallel.hpp"
#include "ops/pool/pool_impl.hpp"

namespace blockdnn::impl {

namespace {

// Offset tables of src and dst.
struct pool_ref_tables_t {
    spatial_offsets_t src, dst;
    explicit pool_ref_tables_t(const pool_prb_t &p) : src(p.src, 2), dst(p.dst, 2) {}
};

class pool_fwd_ref_t final : public ref_impl_t<pool_impl_t, pool_prb_t, pool_ref_tables_t> {
public:
    using ref_impl_t::ref_impl_t;

    void execute(const pool_args_t &a) const override {
        const pool_ref_tables_t &t = tables();
        const pool_desc &c = p_.desc;
        if (p_.dst.is_blocked()) zero_padding(p_.dst, a.dst);
        const dim_t work = c.mb * c.ic * c.od * c.oh;
        parallel_for(work, 1, [&](dim_t begin, dim_t end) {
            for (dim_t w = begin; w < end; ++w) {
                const dim_t oh = w % c.oh, od = w / c.oh % c.od, ch = w / (c.oh * c.od) % c.ic;
                const dim_t n = w / (c.oh * c.od * c.ic);
                const dim_t s_nc = t.src.lead[0][n] + t.src.lead[1][ch];
                for (dim_t ow = 0; ow < c.ow; ++ow) {
                    float mx = -std::numeric_limits<float>::infinity();
                    double sum = 0;
                    dim_t count = 0;
                    for_each_window_tap(c, od, oh, ow, [&](dim_t id, dim_t ih, dim_t iw) {
                        const float v = a.src[s_nc + t.src.d[id] + t.src.h[ih] + t.src.w[iw]];
                        if (std::isnan(v) || v > mx) mx = std::isnan(mx) ? mx : v;
                        sum += v;
                        ++count;
                    });
                    float r = mx;
                    if (c.alg == pool_alg::avg_include_pad) r = static_cast<float>(sum / double(c.kd * c.kh * c.kw));
                    else if (c.alg == pool_alg::avg_exclude_pad) r = static_cast<float>(sum / double(count));
                    a.dst[t.dst.lead[0][n] + t.dst.lead[1][ch] + t.dst.d[od] + t.dst.h[oh] + t.dst.w[ow]] = r;
                }
            }
        });
    }
};

} // namespace

std::unique_ptr<pool_impl_t> create_pool_fwd_ref(const pool_prb_t &prb) {
    return std::make_unique<pool_fwd_ref_t>(prb);
}

} // namespace blockdnn::impl
