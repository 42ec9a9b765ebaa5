// SPDX-License-Identifier: Apache-2.0
// Max pooling on channel-blocked layouts (nCw / nChw / nCdhw with 8 or 16 channels a block,
// the same layout for src and dst): each tap is a whole block of channels, so the window's
// max is a lane-wise max over contiguous vectors, which the compiler vectorizes. The result
// is the reference's bit for bit (max is exact; NaN wins per lane, as in the reference), and
// the padded channels of dst's last block are written with zeros.
#include <cmath>
#include <limits>

#include "common/parallel.hpp"
#include "common/utils.hpp"
#include "pool/pool_impl.hpp"
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

template <int blk>
class pool_fwd_max_blocked_t final : public pool_impl_t {
public:
    explicit pool_fwd_max_blocked_t(const pool_prb_t &p) : c_(p.desc) {}

    void execute(const pool_args_t &a) const override {
        const pool_desc &c = c_;
        const dim_t nb_c = div_up(c.ic, blk), c_tail = c.ic % blk;
        const dim_t src_sp = c.id * c.ih * c.iw;
        parallel_for(c.mb * nb_c * c.od * c.oh, 1, [&](dim_t begin, dim_t end) {
            for (dim_t w = begin; w < end; ++w) {
                const dim_t oh = w % c.oh, od = w / c.oh % c.od, ncb = w / (c.oh * c.od);
                const float *src = a.src + ncb * src_sp * blk;
                float *dst = a.dst + ((ncb * c.od + od) * c.oh + oh) * c.ow * blk;
                for (dim_t ow = 0; ow < c.ow; ++ow) {
                    float mx[blk];
                    for (int l = 0; l < blk; ++l) mx[l] = -std::numeric_limits<float>::infinity();
                    for_each_window_tap(c, od, oh, ow, [&](dim_t id, dim_t ih, dim_t iw) {
                        const float *v = src + ((id * c.ih + ih) * c.iw + iw) * blk;
                        // The reference's rule per lane: a NaN stays, a NaN or a larger value replaces.
                        for (int l = 0; l < blk; ++l)
                            mx[l] = mx[l] != mx[l] ? mx[l] : (v[l] != v[l] || v[l] > mx[l]) ? v[l] : mx[l];
                    });
                    float *out = dst + ow * blk;
                    for (int l = 0; l < blk; ++l) out[l] = mx[l];
                    if (c_tail && ncb % nb_c == nb_c - 1)
                        for (dim_t l = c_tail; l < blk; ++l) out[l] = 0.f;
                }
            }
        });
    }

private:
    pool_desc c_;
};

} // namespace

bool accept_pool_fwd_max_blocked(const pool_prb_t &p, std::string &why) {
    if (p.desc.alg != pool_alg::max) {
        why = "not max pooling";
        return false;
    }
    if (p.src.tag() != p.dst.tag() || channel_block(p.src.tag()) == 0) {
        why = cat("layouts src:", to_string(p.src.tag()), " dst:", to_string(p.dst.tag()),
                " are not one channel-blocked nC*8c / nC*16c layout");
        return false;
    }
    return true;
}

std::unique_ptr<pool_impl_t> create_pool_fwd_max_blocked(const pool_prb_t &p) {
    if (channel_block(p.src.tag()) == 16) return std::make_unique<pool_fwd_max_blocked_t<16>>(p);
    return std::make_unique<pool_fwd_max_blocked_t<8>>(p);
}

} // namespace blockdnn::impl
