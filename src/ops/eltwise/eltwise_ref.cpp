// SPDX-License-Identifier: Apache-2.0
// The reference eltwise: eltwise_ref (double-precision std:: math, rounded once) on every
// logical element, reached through tensor_desc::offset so it fits any layout; padding zeroed.
#include "ops/eltwise/eltwise_impl.hpp"
#include "tensor/index_walk.hpp"
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
        parallel_for_each_index(d.dims(), [&](const dim_t *idx) {
            const dim_t off = d.offset(idx);
            dst[off] = eltwise_ref(p_.alg, src[off], p_.alpha, p_.beta);
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
