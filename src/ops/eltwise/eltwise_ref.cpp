// SPDX-License-Identifier: Apache-2.0
// The reference eltwise: eltwise_ref (double-precision std:: math, rounded once) on every
// logical element, reached through tensor_desc::offset so it fits any layout; padding zeroed.
#include "sched/parallel.hpp"
#include "ops/eltwise/eltwise_impl.hpp"
#include "tensor/padding.hpp"

namespace blockdnn::impl {

namespace {

class eltwise_ref_t : public eltwise_impl_t {
public:
    explicit eltwise_ref_t(const eltwise_prb_t &p) : p_(p) {}

    void execute(const eltwise_args_t &a) const override {
        const float *src = a.src;
        float *dst = a.dst;
        const tensor_desc &d = p_.desc;
        const int nd = d.ndims();
        dim_t inner = 1; // logical elements below dim 0
        for (int k = 1; k < nd; ++k) inner *= d.dim(k);
        parallel_for(d.dim(0), 1, [&](dim_t b, dim_t e) {
            dim_t idx[max_ndims] = {};
            for (dim_t i0 = b; i0 < e; ++i0) {
                idx[0] = i0;
                for (int k = 1; k < nd; ++k) idx[k] = 0;
                for (dim_t j = 0; j < inner; ++j) {
                    const dim_t off = d.offset(idx);
                    dst[off] = eltwise_ref(p_.alg, src[off], p_.alpha, p_.beta);
                    for (int k = nd - 1; k > 0; --k) { // odometer over dims 1..nd-1
                        if (++idx[k] < d.dim(k)) break;
                        idx[k] = 0;
                    }
                }
            }
        });
        zero_padding(d, dst);
    }

private:
    eltwise_prb_t p_;
};

} // namespace

std::unique_ptr<eltwise_impl_t> create_eltwise_fwd_ref(const eltwise_prb_t &prb) {
    return std::make_unique<eltwise_ref_t>(prb);
}

} // namespace blockdnn::impl
