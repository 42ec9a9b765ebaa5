// SPDX-License-Identifier: Apache-2.0
// The reorder problem as the kernels see it, and the kernels. Activation kernels view a tensor
// as (N, C, S) with S the product of the spatial dims; weight kernels as (G, O, I, SP).
#pragma once

#include <algorithm>

#include "blockdnn/tensor.hpp"
#include "core/utils.hpp"
#include "sched/parallel.hpp"

namespace blockdnn::impl {

struct reorder_prb_t {
    tensor_desc src, dst;

    enum class kind_t {
        generic,          // any pair of one family: offsets through tensor_desc
        same,             // identical layouts: a copy
        act_to_blocked,   // nc[d][h]w or n[d][h]wc  ->  nC[d][h]w{8,16}c, and goi[d][h]w ->
                          // Goi[d][h]w{8,16}g seen as one image of G channels
        act_from_blocked, // the reverse
        wei_to_blocked,   // [g]oi[d][h]w  ->  [g]OI[d][h]w{8i8o,16i16o}
        wei_from_blocked, // the reverse
        act_transpose,    // nc[d][h]w <-> n[d][h]wc: per image, C x S <-> S x C
        act_reblock,      // nC[d][h]w8c <-> nC[d][h]w16c, Goi[d][h]w8g <-> Goi[d][h]w16g
        plain_permute,    // two layouts without blocks (oihw <-> hwio, oi <-> io, tnc <-> ntc, ...)
        via_plain,        // two of the kinds above through the family's plain layout `mid`
                          // (hwio -> oihw -> OIhw16i16o, OIhw8i8o -> oihw -> OIhw16i16o, ...)
    } kind = kind_t::generic;
    format_tag mid = format_tag::undef; // via_plain: nc[d][h]w or [g]oi[d][h]w

    // Activation view (act_*): plain offset = n*C*S + c*c_stride + s*s_stride, where
    // channels-last layouts (nhwc, nwc, ndhwc) have c_stride = 1, s_stride = C and the others
    // c_stride = S, s_stride = 1. Blocked offset = ((n*CB + cb)*S + s)*blk + c%blk. Grouped
    // weights are one image (N = 1) of C = G channels and S = O*I*SP.
    // act_transpose: the same view; channels_last is src's. Per image src is a rows x cols
    // matrix (C x S, or S x C when channels_last) and dst its transpose.
    dim_t N = 0, C = 0, S = 0;
    bool channels_last = false;
    dim_t rows() const { return channels_last ? S : C; }
    dim_t cols() const { return channels_last ? C : S; }
    int blk = 0;     // 8 or 16: the channel block (act) or the i and o block (wei)
    int dst_blk = 0; // act_reblock: dst's channel block (blk is src's)

    // Weights view (wei_*): plain offset = ((g*O + o)*I + i)*SP + sp; blocked offset =
    // (((((g*OB + ob)*IB + ib)*SP + sp)*blk + i%blk)*blk + o%blk).
    dim_t G = 0, O = 0, I = 0, SP = 0;

    // Non-temporal stores for dst (src and dst together exceed the last-level cache): the
    // blocked side of act_*, the plain dst of act_transpose (AVX2).
    bool stream_stores = false;
};

using reorder_fn_t = void (*)(const reorder_prb_t &, const float *src, float *dst);

// SIMD kernels; each file is compiled for its ISA. The avx512 act kernel takes blk 16 only.
void reorder_act_avx512(const reorder_prb_t &p, const float *src, float *dst);
void reorder_wei_avx512(const reorder_prb_t &p, const float *src, float *dst);
void reorder_act_avx2(const reorder_prb_t &p, const float *src, float *dst);
void reorder_wei_avx2(const reorder_prb_t &p, const float *src, float *dst);
void reorder_transpose_avx2(const reorder_prb_t &p, const float *src, float *dst);

// The activation kernels' walk: fn(plain0, blocked0, c_valid) for every (image, block of blk
// channels) of p, split over parallel_for. plain0 and blocked0 are the element offsets of the
// block's first channel at s = 0 in the plain and the blocked tensor; c_valid counts its
// channels (fewer than blk in the last block when C is not a multiple).
template <typename F>
void for_each_act_block(const reorder_prb_t &p, int blk, F &&fn) {
    const dim_t CB = div_up(p.C, blk), S = p.S, C = p.C;
    parallel_for(p.N * CB, 1, [&](dim_t b, dim_t e) {
        for (dim_t ncb = b; ncb < e; ++ncb) {
            const dim_t n = ncb / CB, c0 = (ncb % CB) * blk;
            fn(n * C * S + (p.channels_last ? c0 : c0 * S), ncb * S * blk, std::min<dim_t>(blk, C - c0));
        }
    });
}

// The problem reorder() runs for src -> dst (same dims, validated): the kind, its view and
// stream_stores (src and dst together past the last-level cache of the machine model).
reorder_prb_t make_reorder_prb(const tensor_desc &src, const tensor_desc &dst);

// dst[c*rows + r] = src[r*cols + c] for r in [r0, r1), c in [c0, c1), element by element: the
// scalar transpose's tiles and the AVX2 one's ragged edges. Compiled without ISA flags
// (reorder.cpp), so the AVX2 file calls it rather than an inline copy of its own.
void transpose_elems(const float *src, float *dst, dim_t rows, dim_t cols, dim_t r0, dim_t r1, dim_t c0, dim_t c1);

} // namespace blockdnn::impl
