// SPDX-License-Identifier: Apache-2.0
// Max and average pooling on channels-last layouts (nwc / nhwc / ndhwc, the same layout for
// src and dst): each pixel's C channels are contiguous, so the window's reduction is a
// lane-wise op over contiguous channels (pool_simd.hpp), done in chunks of `chunk` channels
// so the accumulators stay in registers. The result is the reference's bit for bit.
#include <memory>

#include "core/lazy.hpp"
#include "sched/parallel.hpp"
#include "core/utils.hpp"
#include "ops/pool/pool_impl.hpp"
#include "ops/pool/pool_simd.hpp"
#include "tensor/layout.hpp"

namespace blockdnn::impl {

namespace {

template <bool is_max>
class pool_fwd_nxc_t final : public pool_impl_t {
public:
    // Channels a chunk: 16 floats of max or 16 doubles of sums are 4 or 8 SSE registers.
    static constexpr int chunk = 16;
    // Channels a task: a task's window pixels (group * 4 bytes each) stay in L1 while its
    // chunks go through them one after another.
    static constexpr dim_t group = 16 * chunk;

    explicit pool_fwd_nxc_t(const pool_prb_t &p)
        : c_(p.desc), windows_([c = c_] {
              const dim_t stride[3] = {c.ih * c.iw * c.ic, c.iw * c.ic, c.ic};
              return std::make_shared<const pool_windows_t>(c, stride);
          }) {}

    void execute(const pool_args_t &a) const override {
        const pool_desc &c = c_;
        const pool_windows_t &windows = *windows_.get();
        const dim_t C = c.ic, nb_g = div_up(C, group);
        // One task per dst row of one group of channels: every dst element is computed by one
        // task from src alone, so the thread count cannot change a result.
        parallel_for(c.mb * c.od * c.oh * nb_g, 1, [&](dim_t begin, dim_t end) {
            for (dim_t w = begin; w < end; ++w) {
                const dim_t g = w % nb_g, oh = w / nb_g % c.oh, od = w / (nb_g * c.oh) % c.od;
                const dim_t n = w / (nb_g * c.oh * c.od);
                const dim_t g_begin = g * group, g_end = std::min(C, g_begin + group);
                const float *src = a.src + n * c.id * c.ih * c.iw * C;
                float *dst = a.dst + ((n * c.od + od) * c.oh + oh) * c.ow * C;
                for (dim_t ow = 0; ow < c.ow; ++ow) {
                    const pool_window_t win = windows(od, oh, ow);
                    const double divisor = is_max ? 1.0 : pool_divisor(c, win);
                    float *out = dst + ow * C;
                    dim_t c0 = g_begin;
                    for (; c0 + chunk <= g_end; c0 += chunk)
                        reduce_window<chunk, is_max>(src + c0, win, divisor, out + c0);
                    if (c0 < g_end)
                        reduce_window<chunk, is_max, true>(src + c0, win, divisor, out + c0, int(g_end - c0));
                }
            }
        });
    }

private:
    pool_desc c_;
    lazy_t<std::shared_ptr<const pool_windows_t>> windows_; // made at the first execute
};

bool accept_nxc(const pool_prb_t &p, bool want_max, std::string &why) {
    if (!accept_pool_alg(p, want_max, why)) return false;
    if (p.src.tag() != p.dst.tag() || !is_channels_last(p.src.tag())) {
        why = cat("layouts src:", to_string(p.src.tag()), " dst:", to_string(p.dst.tag()),
                " are not one channels-last nwc / nhwc / ndhwc layout");
        return false;
    }
    return true;
}

} // namespace

bool accept_pool_fwd_max_nxc(const pool_prb_t &p, std::string &why) { return accept_nxc(p, true, why); }
bool accept_pool_fwd_avg_nxc(const pool_prb_t &p, std::string &why) { return accept_nxc(p, false, why); }

std::unique_ptr<pool_impl_t> create_pool_fwd_max_nxc(const pool_prb_t &p) {
    return std::make_unique<pool_fwd_nxc_t<true>>(p);
}
std::unique_ptr<pool_impl_t> create_pool_fwd_avg_nxc(const pool_prb_t &p) {
    return std::make_unique<pool_fwd_nxc_t<false>>(p);
}

} // namespace blockdnn::impl
