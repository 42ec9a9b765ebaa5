// SPDX-License-Identifier: Apache-2.0
// Pooling between layouts the same-layout rows do not take (plain nc[d]hw, or src and dst in
// different layouts): src reordered into a channel-blocked layout, the blocked implementation,
// and its dst reordered into dst's layout, a pass of images at a time so that what one step
// writes is still in cache for the next. A side already in the blocked layout is read or
// written in place. The reorders move values unchanged, so the result is the blocked
// implementation's, which is the reference's bit for bit.
#include <algorithm>
#include <memory>

#include "core/machine_model.hpp"
#include "core/thread_scratch.hpp"
#include "core/utils.hpp"
#include "ops/pool/pool_impl.hpp"
#include "sched/parallel.hpp"
#include "tensor/layout.hpp"
#include "tensor/op_check.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

namespace {

struct pool_scratch_tag;
using pool_scratch_t = thread_scratch_t<pool_scratch_tag, 2>; // blocked src, blocked dst

// The channel block of the blocked implementation: src's or dst's where one is blocked (its
// reorder is then none, or a reblock of runs of 8 channels), else the smaller one that holds
// the channels in one block when there are few.
dim_t work_block(const pool_prb_t &p) {
    if (p.src.is_blocked()) return p.src.block_of(1);
    if (p.dst.is_blocked()) return p.dst.block_of(1);
    return p.desc.ic <= 8 ? 8 : 16;
}

// Images per pass: the largest divisor of mb whose blocked src and dst fit the last-level
// cache the threads count on, so one blocked implementation runs every pass.
dim_t images_per_pass(const pool_prb_t &p, dim_t blk) {
    const pool_desc &c = p.desc;
    const dim_t image_bytes = rnd_up(c.ic, blk) * (c.id * c.ih * c.iw + c.od * c.oh * c.ow) * 4;
    const int nthr = parallel_max_threads();
    return largest_divisor_at_most(c.mb, std::max<dim_t>(1, llc_bytes_for(machine_model(), nthr) / image_bytes));
}

class pool_fwd_reordered_t final : public pool_impl_t {
public:
    pool_fwd_reordered_t(const pool_prb_t &p, dim_t pass_mb) : p_(p) {
        const format_tag blk = blocked_act_tag(p.desc.ndims, static_cast<int>(work_block(p)));
        pass_.desc = p.desc;
        pass_.desc.mb = pass_mb;
        pass_.src = tensor_desc(with_mb(p.src, pass_mb).dims(), blk);
        pass_.dst = tensor_desc(with_mb(p.dst, pass_mb).dims(), blk);
        blocked_ =
                p.desc.alg == pool_alg::max ? create_pool_fwd_max_blocked(pass_) : create_pool_fwd_avg_blocked(pass_);
    }

    void execute(const pool_args_t &a) const override {
        const dim_t mb = p_.desc.mb, n = pass_.desc.mb;
        const dim_t src_img = p_.src.nelems_padded() / mb, dst_img = p_.dst.nelems_padded() / mb;
        const bool src_in_place = p_.src.tag() == pass_.src.tag(), dst_in_place = p_.dst.tag() == pass_.dst.tag();
        pool_scratch_t lease;
        float *src_blk = src_in_place ? nullptr : lease.get(0, static_cast<std::size_t>(pass_.src.nelems_padded()));
        float *dst_blk = dst_in_place ? nullptr : lease.get(1, static_cast<std::size_t>(pass_.dst.nelems_padded()));
        const tensor_desc src_pass = with_mb(p_.src, n), dst_pass = with_mb(p_.dst, n);
        for (dim_t n0 = 0; n0 < mb; n0 += n) {
            const float *src = a.src + n0 * src_img;
            float *dst = a.dst + n0 * dst_img;
            if (!src_in_place) reorder_now(tensor(src_pass, const_cast<float *>(src)), tensor(pass_.src, src_blk));
            blocked_->execute({src_in_place ? src : src_blk, dst_in_place ? dst : dst_blk});
            if (!dst_in_place) reorder_now(tensor(pass_.dst, dst_blk), tensor(dst_pass, dst));
        }
    }

private:
    pool_prb_t p_;
    pool_prb_t pass_; // a pass's problem, src and dst blocked
    std::unique_ptr<pool_impl_t> blocked_;
};

} // namespace

bool accept_pool_fwd_reordered(const pool_prb_t &p, std::string &why) {
    // With neither side blocked, the blocked buffers of a few channels would be mostly padding
    // (up to 8 times the data at ic = 1), which the reference does without.
    const dim_t blk = work_block(p);
    if (!p.src.is_blocked() && !p.dst.is_blocked() && rnd_up(p.desc.ic, blk) > 2 * p.desc.ic) {
        why = cat("ic = ", p.desc.ic, " would be mostly padding in blocks of ", blk);
        return false;
    }
    return true;
}

std::unique_ptr<pool_impl_t> create_pool_fwd_reordered(const pool_prb_t &p) {
    return std::make_unique<pool_fwd_reordered_t>(p, images_per_pass(p, work_block(p)));
}

std::unique_ptr<pool_impl_t> create_pool_fwd_reordered_in_passes(const pool_prb_t &p, dim_t pass_mb) {
    return std::make_unique<pool_fwd_reordered_t>(p, pass_mb);
}

} // namespace blockdnn::impl
