// SPDX-License-Identifier: Apache-2.0
// What a forward-pooling implementation sees: the validated problem, its arguments, the
// kernel interface and the dispatch table (defined in pool_fwd.cpp; the contract is
// ops/op_table.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/pool.hpp"
#include "core/spatial.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

struct pool_prb_t {
    pool_desc desc;
    tensor_desc src, dst;
    std::string str() const; // "alg:max src:nchw dst:nchw mb2ic16ih8oh4kh3sh2ph1"
};

struct pool_args_t {
    const float *src;
    float *dst;
};

/// Calls f(id, ih, iw) for every tap of the window of output (od, oh, ow) that falls inside
/// the input, in (kd, kh, kw) order (taps in padding are skipped).
template <typename F>
inline void for_each_window_tap(const pool_desc &c, dim_t od, dim_t oh, dim_t ow, F &&f) {
    const tap_range_t rd = tap_range(od, c.sd, c.pd, c.dd, c.kd, c.id);
    const tap_range_t rh = tap_range(oh, c.sh, c.ph, c.dh, c.kh, c.ih);
    const tap_range_t rw = tap_range(ow, c.sw, c.pw, c.dw, c.kw, c.iw);
    for (dim_t kd = rd.lo; kd < rd.hi; ++kd)
        for (dim_t kh = rh.lo; kh < rh.hi; ++kh)
            for (dim_t kw = rw.lo; kw < rw.hi; ++kw)
                f(od * c.sd - c.pd + kd * (c.dd + 1), oh * c.sh - c.ph + kh * (c.dh + 1),
                        ow * c.sw - c.pw + kw * (c.dw + 1));
}

using pool_impl_t = impl_t<pool_args_t>;
using pool_row_t = op_row_t<pool_prb_t, pool_impl_t>;

std::span<const pool_row_t> pool_fwd_impls();

/// Max / average pooling on one channel-blocked layout for src and dst (src/ops/pool/pool_simd_blocked.cpp).
bool accept_pool_fwd_max_blocked(const pool_prb_t &prb, std::string &why);
std::unique_ptr<pool_impl_t> create_pool_fwd_max_blocked(const pool_prb_t &prb);
bool accept_pool_fwd_avg_blocked(const pool_prb_t &prb, std::string &why);
std::unique_ptr<pool_impl_t> create_pool_fwd_avg_blocked(const pool_prb_t &prb);

/// Max / average pooling on one channels-last layout for src and dst (src/ops/pool/pool_simd_nxc.cpp).
bool accept_pool_fwd_max_nxc(const pool_prb_t &prb, std::string &why);
std::unique_ptr<pool_impl_t> create_pool_fwd_max_nxc(const pool_prb_t &prb);
bool accept_pool_fwd_avg_nxc(const pool_prb_t &prb, std::string &why);
std::unique_ptr<pool_impl_t> create_pool_fwd_avg_nxc(const pool_prb_t &prb);

/// Any other pair of layouts (src/ops/pool/pool_reordered.cpp): reordered into nC[d]hw16c or
/// 8c (a blocked side's, or 8c for up to 8 channels) and back around the channel-blocked
/// implementation, a pass of images at a time; refused with neither side blocked and the
/// blocks more than half padding.
bool accept_pool_fwd_reordered(const pool_prb_t &prb, std::string &why);
std::unique_ptr<pool_impl_t> create_pool_fwd_reordered(const pool_prb_t &prb);
/// As create_pool_fwd_reordered, in passes of `pass_mb` images (a divisor of mb): for tests.
std::unique_ptr<pool_impl_t> create_pool_fwd_reordered_in_passes(const pool_prb_t &prb, dim_t pass_mb);

/// The reference (src/ops/pool/pool_ref.cpp): every problem, every layout.
std::unique_ptr<pool_impl_t> create_pool_fwd_ref(const pool_prb_t &prb);

} // namespace blockdnn::impl
