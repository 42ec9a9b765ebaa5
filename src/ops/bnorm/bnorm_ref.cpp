// SPDX-License-Identifier: Apache-2.0
// Reference batch normalization forward, straight from the definition (Ioffe & Szegedy,
// arXiv:1502.03167, Algorithm 1): per channel, mean and biased variance over mb and spatial
// in two passes accumulated in double, then y = gamma (x - mean) / sqrt(var + eps) + beta.
// Memory is read only through tensor_desc::offset, so every activation layout works.
#include <cmath>

#include "ops/bnorm/bnorm_impl.hpp"
#include "sched/parallel.hpp"

namespace blockdnn::impl {

namespace {

class bnorm_fwd_ref_t final : public bnorm_impl_t {
public:
    explicit bnorm_fwd_ref_t(const bnorm_prb_t &prb) : p_(prb) {}

    void execute(const bnorm_args_t &mem) const override {
        // Channels are independent, so any split over them gives the same bits.
        parallel_for(p_.desc.dst.padded_dim(1), 1, [&](dim_t c0, dim_t c1) {
            for (dim_t c = c0; c < c1; ++c) {
                if (c < p_.c) channel(mem, c);
                else zero_padding(mem, c);
            }
        });
    }

private:
    // Calls fn(logical index) for every (mb, spatial) point of channel c, mb outermost and the
    // spatial dims in row-major order: one fixed order whatever the layout.
    template <typename F>
    void for_each_point(dim_t c, F &&fn) const {
        const tensor_desc &s = p_.desc.src;
        const int nd = s.ndims();
        dim_t idx[max_ndims] = {};
        idx[1] = c;
        for (dim_t n = 0; n < p_.mb; ++n) {
            idx[0] = n;
            for (dim_t k = 0; k < p_.sp; ++k) {
                dim_t rest = k;
                for (int d = nd - 1; d >= 2; --d) {
                    idx[d] = rest % s.dim(d);
                    rest /= s.dim(d);
                }
                fn(static_cast<const dim_t *>(idx));
            }
        }
    }

    void channel(const bnorm_args_t &mem, dim_t c) const {
        const tensor_desc &sd = p_.desc.src, &dd = p_.desc.dst;
        double mean = 0, var = 0;
        if (p_.training) {
            const double n = static_cast<double>(p_.mb * p_.sp);
            double sum = 0;
            for_each_point(c, [&](const dim_t *idx) { sum += mem.src[sd.offset(idx)]; });
            mean = sum / n;
            // Second pass on the centred values: no cancellation, unlike E[x^2] - E[x]^2.
            double sq = 0;
            for_each_point(c, [&](const dim_t *idx) {
                const double d = mem.src[sd.offset(idx)] - mean;
                sq += d * d;
            });
            var = sq / n;
            mem.mean[c] = static_cast<float>(mean);
            mem.variance[c] = static_cast<float>(var);
        } else {
            mean = mem.mean[c];
            var = mem.variance[c];
        }
        const double denom = std::sqrt(var + static_cast<double>(p_.desc.epsilon));
        const double inv_std = denom > 0 ? 1.0 / denom : 0.0; // 0/0 taken as 0 (see bnorm_desc)
        const double gamma = p_.use_scale ? mem.scale[c] : 1.0;
        const double beta = p_.use_shift ? mem.shift[c] : 0.0;
        for_each_point(c, [&](const dim_t *idx) {
            double y = gamma * ((mem.src[sd.offset(idx)] - mean) * inv_std) + beta;
            if (p_.fuse_relu && y < 0) y = 0; // NaN stays NaN
            mem.dst[dd.offset(idx)] = static_cast<float>(y);
        });
    }

    // Padding channels of a blocked dst stay zero, as reorders leave them.
    void zero_padding(const bnorm_args_t &mem, dim_t c) const {
        const tensor_desc &dd = p_.desc.dst;
        for_each_point(c, [&](const dim_t *idx) { mem.dst[dd.offset(idx)] = 0.f; });
    }

    const bnorm_prb_t p_;
};

} // namespace

std::unique_ptr<bnorm_impl_t> create_bnorm_fwd_ref(const bnorm_prb_t &prb) {
    return std::make_unique<bnorm_fwd_ref_t>(prb);
}

} // namespace blockdnn::impl
