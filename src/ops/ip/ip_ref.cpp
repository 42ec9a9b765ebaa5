// SPDX-License-Identifier: Apache-2.0
// Reference forward inner product (nn.Linear on the flattened src; ONNX Gemm with transB = 1):
//   dst[n, o] = post_ops(bias[o] + sum over c, d, h, w of src[n, c, d, h, w] * wei[o, c, d, h, w])
// The sum runs in double in the order (c, d, h, w) and rounds once to f32. Addresses come from
// tensor_desc offsets, so every layout works.
#include <memory>

#include "core/lazy.hpp"
#include "core/offset_table.hpp"
#include "sched/parallel.hpp"
#include "core/post_ops_ref.hpp"
#include "ops/ip/ip_impl.hpp"

namespace blockdnn::impl {

namespace {

// Offset tables of the tensors.
struct ip_ref_tables_t {
    spatial_offsets_t src, wei;
    std::vector<dim_t> dst_n, dst_o, bia;

    explicit ip_ref_tables_t(const ip_prb_t &p)
        : src(p.src, 2), wei(p.wei, 2), dst_n(dim_offsets(p.dst, 0)), dst_o(dim_offsets(p.dst, 1)) {
        if (p.bia.ndims() != 0) bia = dim_offsets(p.bia, 0);
    }
};

class ip_fwd_ref_t final : public ref_impl_t<ip_impl_t, ip_prb_t, ip_ref_tables_t> {
public:
    using ref_impl_t::ref_impl_t;

    void execute(const ip_args_t &a) const override {
        const ip_ref_tables_t &t = tables();
        const inner_product_desc &c = p_.desc;
        const dim_t D = static_cast<dim_t>(t.src.d.size()), H = static_cast<dim_t>(t.src.h.size()),
                    W = static_cast<dim_t>(t.src.w.size());
        parallel_for(c.mb * c.oc, 1, [&](dim_t begin, dim_t end) {
            for (dim_t w = begin; w < end; ++w) {
                const dim_t n = w / c.oc, o = w % c.oc;
                double acc = 0;
                for (dim_t ic = 0; ic < c.ic; ++ic) {
                    const dim_t s_nc = t.src.lead[0][n] + t.src.lead[1][ic],
                                w_oc = t.wei.lead[0][o] + t.wei.lead[1][ic];
                    for (dim_t d = 0; d < D; ++d)
                        for (dim_t h = 0; h < H; ++h)
                            for (dim_t x = 0; x < W; ++x)
                                acc += double(a.src[s_nc + t.src.d[d] + t.src.h[h] + t.src.w[x]])
                                        * double(a.wei[w_oc + t.wei.d[d] + t.wei.h[h] + t.wei.w[x]]);
                }
                if (a.bia) acc += a.bia[t.bia[o]];
                const dim_t off = t.dst_n[n] + t.dst_o[o];
                a.dst[off] = apply_post_ops_ref(p_.po, static_cast<float>(acc), a.dst[off]);
            }
        });
    }
};

} // namespace

std::unique_ptr<ip_impl_t> create_ip_fwd_ref(const ip_prb_t &prb) { return std::make_unique<ip_fwd_ref_t>(prb); }

} // namespace blockdnn::impl
