// SPDX-License-Identifier: Apache-2.0
// Max and average pooling on channel-blocked layouts (nCw / nChw / nCdhw with 8 or 16 channels
// a block, the same layout for src and dst): each tap is a whole block of channels, so the
// window's reduction is a lane-wise op over contiguous vectors (pool_simd.hpp), which the
// compiler vectorizes. The result is the reference's bit for bit, and the padded channels of
// dst's last block are written with zeros.
#include <memory>

#include "core/lazy.hpp"
#include "sched/parallel.hpp"
#include "core/utils.hpp"
#include "ops/pool/pool_impl.hpp"
#include "ops/pool/pool_simd.hpp"
#include "tensor/layout.hpp"

namespace blockdnn::impl {

namespace {

// The channel block of a tag that this implementation takes (nC*8c / nC*16c), else 0.
int channel_block(format_tag tag) {
    const layout_info_t &l = layout_info(tag);
    if (l.family != layout_family::activation || l.nblks != 1 || l.blk_dim[0] != 1) return 0;
    for (int i = 0; i < l.ndims; ++i)
        if (l.outer_order[i] != i) return 0;
    return l.blk_size[0] == 8 || l.blk_size[0] == 16 ? l.blk_size[0] : 0;
}

template <int blk, bool is_max>
class pool_fwd_blocked_t final : public pool_impl_t {
public:
    explicit pool_fwd_blocked_t(const pool_prb_t &p)
        : c_(p.desc), windows_([c = c_] {
              const dim_t stride[3] = {c.ih * c.iw * blk, c.iw * blk, blk};
              return std::make_shared<const pool_windows_t>(c, stride);
          }) {}

    void execute(const pool_args_t &a) const override {
        const pool_desc &c = c_;
        const pool_windows_t &windows = *windows_.get();
        const dim_t nb_c = div_up(c.ic, blk), c_tail = c.ic % blk;
        const dim_t src_sp = c.id * c.ih * c.iw;
        // One task per dst row of one channel block: every dst element is computed by one
        // task from src alone, so the thread count cannot change a result.
        parallel_for(c.mb * nb_c * c.od * c.oh, 1, [&](dim_t begin, dim_t end) {
            for (dim_t w = begin; w < end; ++w) {
                const dim_t oh = w % c.oh, od = w / c.oh % c.od, ncb = w / (c.oh * c.od);
                const float *src = a.src + ncb * src_sp * blk;
                float *dst = a.dst + ((ncb * c.od + od) * c.oh + oh) * c.ow * blk;
                for (dim_t ow = 0; ow < c.ow; ++ow) {
                    const pool_window_t win = windows(od, oh, ow);
                    float *out = dst + ow * blk;
                    reduce_window<blk, is_max>(src, win, is_max ? 1.0 : pool_divisor(c, win), out);
                    if (c_tail && ncb % nb_c == nb_c - 1)
                        for (dim_t l = c_tail; l < blk; ++l) out[l] = 0.f;
                }
            }
        });
    }

private:
    pool_desc c_;
    lazy_t<std::shared_ptr<const pool_windows_t>> windows_; // made at the first execute
};

bool accept_blocked(const pool_prb_t &p, bool want_max, std::string &why) {
    if (!accept_pool_alg(p, want_max, why)) return false;
    if (p.src.tag() != p.dst.tag() || channel_block(p.src.tag()) == 0) {
        why = cat("layouts src:", to_string(p.src.tag()), " dst:", to_string(p.dst.tag()),
                " are not one channel-blocked nC*8c / nC*16c layout");
        return false;
    }
    return true;
}

template <bool is_max>
std::unique_ptr<pool_impl_t> create_blocked(const pool_prb_t &p) {
    if (channel_block(p.src.tag()) == 16) return std::make_unique<pool_fwd_blocked_t<16, is_max>>(p);
    return std::make_unique<pool_fwd_blocked_t<8, is_max>>(p);
}

} // namespace

bool accept_pool_fwd_max_blocked(const pool_prb_t &p, std::string &why) { return accept_blocked(p, true, why); }
bool accept_pool_fwd_avg_blocked(const pool_prb_t &p, std::string &why) { return accept_blocked(p, false, why); }

std::unique_ptr<pool_impl_t> create_pool_fwd_max_blocked(const pool_prb_t &p) { return create_blocked<true>(p); }
std::unique_ptr<pool_impl_t> create_pool_fwd_avg_blocked(const pool_prb_t &p) { return create_blocked<false>(p); }

} // namespace blockdnn::impl
