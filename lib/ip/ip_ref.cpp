// SPDX-License-Identifier: Apache-2.0
// Reference forward inner product (nn.Linear on the flattened src; ONNX Gemm with transB = 1):
//   dst[n, o] = post_ops(bias[o] + sum over c, d, h, w of src[n, c, d, h, w] * wei[o, c, d, h, w])
// The sum runs in double in the order (c, d, h, w) and rounds once to f32. Addresses come from
// tensor_desc offsets, so every layout works.
#include "common/offset_table.hpp"
#include "common/parallel.hpp"
#include "common/post_ops_ref.hpp"
#include "ip/ip_impl.hpp"

namespace blockdnn::impl {

namespace {

class ip_fwd_ref_t final : public ip_impl_t {
public:
    explicit ip_fwd_ref_t(const ip_prb_t &p)
        : p_(p), src_(p.src, 2), wei_(p.wei, 2), dst_n_(dim_offsets(p.dst, 0)), dst_o_(dim_offsets(p.dst, 1)) {
        if (p.bia.ndims() != 0) bia_ = dim_offsets(p.bia, 0);
    }

    void execute(const ip_args_t &a) const override {
        const inner_product_desc &c = p_.desc;
        const dim_t D = static_cast<dim_t>(src_.d.size()), H = static_cast<dim_t>(src_.h.size()),
                    W = static_cast<dim_t>(src_.w.size());
        parallel_for(c.mb * c.oc, 1, [&](dim_t begin, dim_t end) {
            for (dim_t w = begin; w < end; ++w) {
                const dim_t n = w / c.oc, o = w % c.oc;
                double acc = 0;
                for (dim_t ic = 0; ic < c.ic; ++ic) {
                    const dim_t s_nc = src_.lead[0][n] + src_.lead[1][ic], w_oc = wei_.lead[0][o] + wei_.lead[1][ic];
                    for (dim_t d = 0; d < D; ++d)
                        for (dim_t h = 0; h < H; ++h)
                            for (dim_t x = 0; x < W; ++x)
                                acc += double(a.src[s_nc + src_.d[d] + src_.h[h] + src_.w[x]])
                                        * double(a.wei[w_oc + wei_.d[d] + wei_.h[h] + wei_.w[x]]);
                }
                if (a.bia) acc += a.bia[bia_[o]];
                const dim_t off = dst_n_[n] + dst_o_[o];
                a.dst[off] = apply_post_ops_ref(p_.po, static_cast<float>(acc), a.dst[off]);
            }
        });
    }

private:
    ip_prb_t p_;
    spatial_offsets_t src_, wei_;
    std::vector<dim_t> dst_n_, dst_o_, bia_;
};

} // namespace

std::unique_ptr<ip_impl_t> create_ip_fwd_ref(const ip_prb_t &prb) { return std::make_unique<ip_fwd_ref_t>(prb); }

} // namespace blockdnn::impl
