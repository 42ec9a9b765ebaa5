// SPDX-License-Identifier: Apache-2.0
// Pooling between layouts the same-layout rows do not take (plain nc[d]hw, or src and dst in
// different layouts): src reordered into nC[d]hw16c or 8c, the channel-blocked implementation, and
// its dst reordered into dst's layout, a pass of images at a time so that what one step writes
// is still in cache for the next. The reorders move values unchanged, so the result is the
// blocked implementation's, which is the reference's bit for bit.
#include <algorithm>
#include <memory>

#include "core/aligned_vector.hpp"
#include "core/machine_model.hpp"
#include "core/utils.hpp"
#include "ops/pool/pool_impl.hpp"
#include "sched/parallel.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

namespace {

// The channel-blocked layout of the blocked implementation's src and dst: the block of src or
// dst where one is blocked (its reorder is then a copy, or a reblock of runs of 8 channels),
// else 16.
format_tag work_layout(const pool_prb_t &p) {
    const int ndims = p.desc.ndims;
    const dim_t blk = p.src.is_blocked() ? p.src.block_of(1) : p.dst.is_blocked() ? p.dst.block_of(1) : 16;
    if (blk == 8) return ndims == 3 ? format_tag::nCw8c : ndims == 4 ? format_tag::nChw8c : format_tag::nCdhw8c;
    return ndims == 3 ? format_tag::nCw16c : ndims == 4 ? format_tag::nChw16c : format_tag::nCdhw16c;
}

tensor_desc with_mb(const tensor_desc &d, dim_t mb) {
    dims_t dims = d.dims();
    dims[0] = mb;
    return tensor_desc(dims, d.tag());
}

class pool_fwd_reordered_t final : public pool_impl_t {
public:
    explicit pool_fwd_reordered_t(const pool_prb_t &p) : p_(p) {
        const pool_desc &c = p.desc;
        const format_tag blk = work_layout(p);
        const dim_t img_bytes = static_cast<dim_t>(
                (tensor_desc(c.src_dims(), blk).size_bytes() + tensor_desc(c.dst_dims(), blk).size_bytes()) / c.mb);
        // The blocked src and dst of a pass within the last-level cache the threads count on.
        pass_ = std::clamp<dim_t>(llc_bytes_for(machine_model(), parallel_max_threads()) / img_bytes, 1, c.mb);
        for (dim_t n : {pass_, c.mb % pass_}) {
            if (n == 0) continue;
            pool_prb_t q = p;
            q.desc.mb = n;
            q.src = tensor_desc(with_mb(p.src, n).dims(), blk);
            q.dst = tensor_desc(with_mb(p.dst, n).dims(), blk);
            step_.push_back(
                    {q, c.alg == pool_alg::max ? create_pool_fwd_max_blocked(q) : create_pool_fwd_avg_blocked(q)});
        }
    }

    void execute(const pool_args_t &a) const override {
        const dim_t mb = p_.desc.mb;
        const dim_t src_img = p_.src.nelems_padded() / mb, dst_img = p_.dst.nelems_padded() / mb;
        aligned_vector<float> src_blk(static_cast<std::size_t>(step_[0].prb.src.nelems_padded()));
        aligned_vector<float> dst_blk(static_cast<std::size_t>(step_[0].prb.dst.nelems_padded()));
        for (dim_t n0 = 0; n0 < mb; n0 += pass_) {
            const step_t &s = mb - n0 >= pass_ ? step_[0] : step_[1];
            const dim_t n = s.prb.desc.mb;
            reorder_now(tensor(with_mb(p_.src, n), const_cast<float *>(a.src) + n0 * src_img),
                    tensor(s.prb.src, src_blk.data()));
            s.impl->execute({src_blk.data(), dst_blk.data()});
            reorder_now(tensor(s.prb.dst, dst_blk.data()), tensor(with_mb(p_.dst, n), a.dst + n0 * dst_img));
        }
    }

private:
    struct step_t {
        pool_prb_t prb; // a pass's problem, src and dst blocked
        std::unique_ptr<pool_impl_t> impl;
    };
    pool_prb_t p_;
    dim_t pass_ = 1;           // images per pass
    std::vector<step_t> step_; // a whole pass, then the last pass if it has fewer images
};

} // namespace

std::unique_ptr<pool_impl_t> create_pool_fwd_reordered(const pool_prb_t &p) {
    return std::make_unique<pool_fwd_reordered_t>(p);
}

} // namespace blockdnn::impl
