// SPDX-License-Identifier: Apache-2.0
// Reference batch normalization backward, straight from Ioffe & Szegedy's equations
// (arXiv:1502.03167, section 3), in double. Memory is read only through tensor_desc::offset.
#include <cmath>

#include "ops/bnorm/bnorm_bwd_ref.hpp"
#include "ops/bnorm/bnorm_impl.hpp"
#include "sched/parallel.hpp"

namespace blockdnn::impl {

namespace {

// Calls fn(logical index) for every (mb, spatial) point of channel c, mb outermost, spatial
// row-major: one fixed order for every layout.
template <typename F>
void for_each_point(const tensor_desc &d, dim_t c, F &&fn) {
    const int nd = d.ndims();
    dim_t idx[max_ndims] = {};
    idx[1] = c;
    dim_t sp = 1;
    for (int k = 2; k < nd; ++k) sp *= d.dim(k);
    for (dim_t n = 0; n < d.dim(0); ++n) {
        idx[0] = n;
        for (dim_t s = 0; s < sp; ++s) {
            dim_t rest = s;
            for (int k = nd - 1; k >= 2; --k) {
                idx[k] = rest % d.dim(k);
                rest /= d.dim(k);
            }
            fn(static_cast<const dim_t *>(idx));
        }
    }
}

} // namespace

void bnorm_bwd_ref(const bnorm_bwd_ref_prb_t &p, const float *src, const float *mean, const float *var,
        const float *scale, const float *dst, const float *diff_dst, float *diff_src, float *diff_scale,
        float *diff_shift) {
    const dim_t C = p.src.dim(1);
    const dim_t padded_c = p.diff_src.padded_dim(1);
    const double N = static_cast<double>(p.src.nelems() / C);
    // Channels are independent, so any split gives the same bits.
    parallel_for(padded_c, 1, [&](dim_t c0, dim_t c1) {
        for (dim_t c = c0; c < c1; ++c) {
            if (c >= C) { // padding channels of a blocked diff_src
                for_each_point(p.diff_src, c, [&](const dim_t *idx) { diff_src[p.diff_src.offset(idx)] = 0.f; });
                continue;
            }
            const double mu = mean[c];
            const double denom = std::sqrt(static_cast<double>(var[c]) + p.eps);
            const double inv_std = denom > 0 ? 1.0 / denom : 0.0; // 1/sqrt(var + eps), 0 if not positive
            const double gamma = p.use_scale ? scale[c] : 1.0;
            auto dy_of = [&](const dim_t *idx) -> double {
                const double dy = diff_dst[p.diff_dst.offset(idx)];
                if (p.fuse_relu && !(dst[p.dst.offset(idx)] > 0.f)) return 0.0;
                return dy;
            };

            double sum_dy = 0, sum_dy_xm = 0, sum_xm = 0;
            for_each_point(p.src, c, [&](const dim_t *idx) {
                const double dy = dy_of(idx), xm = src[p.src.offset(idx)] - mu;
                sum_dy += dy;
                sum_dy_xm += dy * xm;
                sum_xm += xm;
            });
            // The paper's sums over dxhat = dy' gamma.
            const double sum_dxhat = gamma * sum_dy, sum_dxhat_xm = gamma * sum_dy_xm;
            const double dvar = sum_dxhat_xm * -0.5 * inv_std * inv_std * inv_std;
            const double dmean = sum_dxhat * -inv_std + dvar * (-2.0 * sum_xm) / N;

            for_each_point(p.src, c, [&](const dim_t *idx) {
                const double dxhat = dy_of(idx) * gamma, xm = src[p.src.offset(idx)] - mu;
                const double dx = p.global_stats ? dxhat * inv_std : dxhat * inv_std + dvar * 2.0 * xm / N + dmean / N;
                diff_src[p.diff_src.offset(idx)] = static_cast<float>(dx);
            });
            if (diff_scale) diff_scale[c] = static_cast<float>(sum_dy_xm * inv_std);
            if (diff_shift) diff_shift[c] = static_cast<float>(sum_dy);
        }
    });
}

} // namespace blockdnn::impl

namespace blockdnn::impl {

namespace {

class bnorm_bwd_ref_impl_t final : public bnorm_bwd_impl_t {
public:
    explicit bnorm_bwd_ref_impl_t(const bnorm_bwd_prb_t &p) {
        p_.src = p.desc.src;
        p_.diff_dst = p_.dst = p.desc.diff_dst;
        p_.diff_src = p.desc.diff_src;
        p_.eps = p.desc.epsilon;
        p_.use_scale = p.use_scale;
        p_.fuse_relu = p.fuse_relu;
        p_.global_stats = p.desc.global_stats;
    }
    void execute(const bnorm_bwd_args_t &m) const override {
        bnorm_bwd_ref(
                p_, m.src, m.mean, m.variance, m.scale, m.dst_fwd, m.diff_dst, m.diff_src, m.diff_scale, m.diff_shift);
    }

private:
    bnorm_bwd_ref_prb_t p_;
};

} // namespace

std::unique_ptr<bnorm_bwd_impl_t> create_bnorm_bwd_ref(const bnorm_bwd_prb_t &prb) {
    return std::make_unique<bnorm_bwd_ref_impl_t>(prb);
}

} // namespace blockdnn::impl
