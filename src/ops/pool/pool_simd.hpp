// SPDX-License-Identifier: Apache-2.0
// The window reduction the fast pooling paths share (pool_simd_blocked.cpp, pool_simd_nxc.cpp): the
// window of one output pixel over W contiguous channel lanes, where neighbouring input pixels
// are a fixed stride apart (a channel block in nC*8c/16c, all C channels in nwc/nhwc/ndhwc).
// Written as plain loops over the lanes, which the compiler vectorizes. The result is
// pool_ref's bit for bit: max keeps its NaN rule, averages add the taps to a double in
// (kd, kh, kw) order and divide once, by kd*kh*kw (include_pad) or by the tap count.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/spatial.hpp"
#include "core/utils.hpp"
#include "ops/pool/pool_impl.hpp"

namespace blockdnn::impl {

/// Whether a row for max pooling (want_max) or for the averages takes p's algorithm; else
/// false with the reason in `why`.
inline bool accept_pool_alg(const pool_prb_t &p, bool want_max, std::string &why) {
    if ((p.desc.alg == pool_alg::max) == want_max) return true;
    why = want_max ? "not max pooling" : "not average pooling";
    return false;
}

/// One output pixel's window: per spatial dim (d, h, w), the input index of tap 0, the
/// distance between taps, the taps inside the input, and the stride in floats between
/// neighbouring input pixels.
struct pool_window_t {
    dim_t start[3], step[3], stride[3];
    tap_range_t r[3];
    dim_t count() const { return r[0].size() * r[1].size() * r[2].size(); }
};

/// The windows of a problem, their tap ranges computed once per output index and dim (the
/// divisions in tap_range would otherwise cost more than a small window's reduction).
class pool_windows_t {
public:
    /// `stride`: floats between neighbouring input pixels along d, h, w.
    pool_windows_t(const pool_desc &c, const dim_t (&stride)[3]) {
        const dim_t o[3] = {c.od, c.oh, c.ow}, s[3] = {c.sd, c.sh, c.sw}, p[3] = {c.pd, c.ph, c.pw};
        const dim_t dl[3] = {c.dd, c.dh, c.dw}, k[3] = {c.kd, c.kh, c.kw}, i[3] = {c.id, c.ih, c.iw};
        for (int x = 0; x < 3; ++x) {
            s_[x] = s[x], p_[x] = p[x], step_[x] = dl[x] + 1, stride_[x] = stride[x];
            for (dim_t j = 0; j < o[x]; ++j) r_[x].push_back(tap_range(j, s[x], p[x], dl[x], k[x], i[x]));
        }
    }

    /// The window of output (od, oh, ow).
    pool_window_t operator()(dim_t od, dim_t oh, dim_t ow) const {
        pool_window_t win;
        const dim_t o[3] = {od, oh, ow};
        for (int x = 0; x < 3; ++x) {
            win.start[x] = o[x] * s_[x] - p_[x];
            win.step[x] = step_[x];
            win.stride[x] = stride_[x];
            win.r[x] = r_[x][static_cast<std::size_t>(o[x])];
        }
        return win;
    }

private:
    dim_t s_[3], p_[3], step_[3], stride_[3];
    std::vector<tap_range_t> r_[3];
};

/// dst[l] for lanes l < n (n == W unless `tail`) of the window `win` over src, where src
/// points at lane 0 of input pixel (0, 0, 0) and lane l of a pixel is l floats further on.
/// For averages, `divisor` is kd*kh*kw or the tap count, as pool_ref divides.
template <int W, bool is_max, bool tail = false>
inline void reduce_window(const float *src, const pool_window_t &win, double divisor, float *dst, int n = W) {
    const int nl = tail ? n : W;
    const auto for_each_tap = [&](auto &&f) {
        for (dim_t kd = win.r[0].lo; kd < win.r[0].hi; ++kd) {
            const dim_t off_d = (win.start[0] + kd * win.step[0]) * win.stride[0];
            for (dim_t kh = win.r[1].lo; kh < win.r[1].hi; ++kh) {
                const dim_t off_h = off_d + (win.start[1] + kh * win.step[1]) * win.stride[1];
                for (dim_t kw = win.r[2].lo; kw < win.r[2].hi; ++kw)
                    f(src + off_h + (win.start[2] + kw * win.step[2]) * win.stride[2]);
            }
        }
    };
    if constexpr (is_max) {
        float mx[W];
        for (int l = 0; l < W; ++l) mx[l] = -std::numeric_limits<float>::infinity();
        // pool_ref's rule per lane: a NaN stays, a NaN or a larger value replaces. Three
        // selects on one comparison each (maxps, then two blends) vectorize; the same rule
        // written with || compiles to a branch per lane.
        const auto take = [&](const float *v, int l) {
            const float larger = v[l] > mx[l] ? v[l] : mx[l];
            const float or_nan = v[l] != v[l] ? v[l] : larger;
            mx[l] = mx[l] != mx[l] ? mx[l] : or_nan;
        };
        for_each_tap([&](const float *v) {
            if constexpr (W >= 16) { // GCC 12 unrolls this and keeps mx in registers
                for (int l = 0; l < nl; ++l) take(v, l);
            } else { // unrolled, 8 lanes come out scalar; as a loop, they vectorize
#pragma GCC unroll 1
                for (int l = 0; l < nl; ++l) take(v, l);
            }
        });
        for (int l = 0; l < nl; ++l) dst[l] = mx[l];
    } else {
        double acc[W];
        for (int l = 0; l < W; ++l) acc[l] = 0;
        for_each_tap([&](const float *v) {
            for (int l = 0; l < nl; ++l) acc[l] += v[l];
        });
        // Divide (not multiply by a reciprocal) and round to float once, as pool_ref does.
        for (int l = 0; l < nl; ++l) dst[l] = static_cast<float>(acc[l] / divisor);
    }
}

/// The divisor of an average over `win` (unused for max).
inline double pool_divisor(const pool_desc &c, const pool_window_t &win) {
    return c.alg == pool_alg::avg_include_pad ? double(c.kd * c.kh * c.kw) : double(win.count());
}

} // namespace blockdnn::impl
