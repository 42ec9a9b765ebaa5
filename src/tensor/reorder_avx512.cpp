// SPDX-License-Identifier: Apache-2.0
// AVX-512 reorders (compiled with -mavx512f -mavx512bw -mavx512dq -mavx512vl).
//   nc[d][h]w  <-> nC[d][h]w16c: 16 channels x 16 pixels at a time, transposed in registers;
//   n[d][h]wc  <-> nC[d][h]w16c: one masked 16-channel vector per pixel;
//   [g]oi[d][h]w -> [g]OI[d][h]w16i16o: each 16-wide o vector gathered from 16 source rows.
// Tails (channels or pixels past a multiple of 16) use opmasks; blocked padding is written 0.
#include <algorithm>
#include <cstdint>

// GCC 12's AVX-512 intrinsic headers start some intrinsics from _mm512_undefined_ps() and then
// warn that it is uninitialized (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "sched/parallel.hpp"
#include "core/utils.hpp"
#include "tensor/reorder_kernels.hpp"

namespace blockdnn::impl {

namespace {

constexpr int vlen = 16;

__mmask16 tail_mask(dim_t n) { return n >= vlen ? __mmask16(0xffff) : __mmask16((1u << n) - 1); }

// In-register transpose of a 16x16 block: r[i] element j becomes r[j] element i.
// Four rounds of in-lane unpacks and cross-lane shuffles; see the comment of each round.
void transpose16(__m512 r[16]) {
    __m512 a[16], b[16];
    // a[2i], a[2i+1]: rows 2i and 2i+1 interleaved (per 128-bit lane: elements 0,1 / 2,3).
    for (int i = 0; i < 8; ++i) {
        a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // b[4i+j]: rows 4i..4i+3 of column 4k+j in lane k.
    for (int i = 0; i < 4; ++i) {
        const __m512d a0 = _mm512_castps_pd(a[4 * i]), a1 = _mm512_castps_pd(a[4 * i + 1]);
        const __m512d a2 = _mm512_castps_pd(a[4 * i + 2]), a3 = _mm512_castps_pd(a[4 * i + 3]);
        b[4 * i + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
        b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
        b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
        b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
    }
    // Gather the four 4-row lanes of each column: lanes {0,2} then {1,3} of two sources.
    for (int j = 0; j < 4; ++j) {
        const __m512 c = _mm512_shuffle_f32x4(b[j], b[4 + j], 0x88);
        const __m512 d = _mm512_shuffle_f32x4(b[j], b[4 + j], 0xdd);
        const __m512 e = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0x88);
        const __m512 f = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0xdd);
        r[j] = _mm512_shuffle_f32x4(c, e, 0x88);
        r[8 + j] = _mm512_shuffle_f32x4(c, e, 0xdd);
        r[4 + j] = _mm512_shuffle_f32x4(d, f, 0x88);
        r[12 + j] = _mm512_shuffle_f32x4(d, f, 0xdd);
    }
}

// Store of a full vector to 64-byte-aligned memory, non-temporal when asked.
inline void store_full(float *p, __m512 v, bool nt) {
    if (nt) _mm512_stream_ps(p, v);
    else _mm512_storeu_ps(p, v);
}

// One (n, channel block): S pixels of c_valid <= 16 channels. plain[c*S + s] <-> blocked[s*16 + c].
void nchw_to_16c(const float *plain, float *blocked, dim_t S, dim_t c_valid, bool nt) {
    for (dim_t s = 0; s < S; s += vlen) {
        const dim_t ns = std::min<dim_t>(vlen, S - s);
        const __mmask16 m = tail_mask(ns);
        __m512 r[16];
        for (int c = 0; c < vlen; ++c)
            r[c] = c < c_valid ? _mm512_maskz_loadu_ps(m, plain + c * S + s) : _mm512_setzero_ps();
        transpose16(r);
        for (int j = 0; j < ns; ++j) store_full(blocked + (s + j) * vlen, r[j], nt);
    }
}

void nchw_from_16c(const float *blocked, float *plain, dim_t S, dim_t c_valid, bool nt) {
    for (dim_t s = 0; s < S; s += vlen) {
        const dim_t ns = std::min<dim_t>(vlen, S - s);
        const __mmask16 m = tail_mask(ns);
        __m512 r[16];
        for (int j = 0; j < vlen; ++j) r[j] = j < ns ? _mm512_loadu_ps(blocked + (s + j) * vlen) : _mm512_setzero_ps();
        transpose16(r);
        for (int c = 0; c < c_valid; ++c) {
            float *p = plain + c * S + s;
            if (nt && ns == vlen && reinterpret_cast<std::uintptr_t>(p) % 64 == 0) _mm512_stream_ps(p, r[c]);
            else _mm512_mask_storeu_ps(p, m, r[c]);
        }
    }
}

// plain[s*C + c] <-> blocked[s*16 + c] (plain already offset to the block's first channel).
void nhwc_to_16c(const float *plain, float *blocked, dim_t S, dim_t C, dim_t c_valid, bool nt) {
    const __mmask16 m = tail_mask(c_valid);
    for (dim_t s = 0; s < S; ++s) store_full(blocked + s * vlen, _mm512_maskz_loadu_ps(m, plain + s * C), nt);
}

void nhwc_from_16c(const float *blocked, float *plain, dim_t S, dim_t C, dim_t c_valid) {
    const __mmask16 m = tail_mask(c_valid);
    for (dim_t s = 0; s < S; ++s) _mm512_mask_storeu_ps(plain + s * C, m, _mm512_loadu_ps(blocked + s * vlen));
}

} // namespace

void reorder_act_avx512(const reorder_prb_t &p, const float *src, float *dst) {
    const dim_t S = p.S, C = p.C;
    const bool to_blocked = p.kind == reorder_prb_t::kind_t::act_to_blocked;
    // Streaming stores need 64-byte alignment of every blocked row, which the blocked side's
    // base alignment gives (rows are 64 bytes).
    const float *blocked_base = to_blocked ? dst : src;
    const bool nt = p.stream_stores && reinterpret_cast<std::uintptr_t>(blocked_base) % 64 == 0;
    for_each_act_block(p, vlen, [&](dim_t plain0, dim_t blocked0, dim_t c_valid) {
        if (to_blocked) {
            if (p.channels_last) nhwc_to_16c(src + plain0, dst + blocked0, S, C, c_valid, nt);
            else nchw_to_16c(src + plain0, dst + blocked0, S, c_valid, nt);
        } else {
            if (p.channels_last) nhwc_from_16c(src + blocked0, dst + plain0, S, C, c_valid);
            else nchw_from_16c(src + blocked0, dst + plain0, S, c_valid, p.stream_stores);
        }
    });
    if (p.stream_stores) _mm_sfence();
}

void reorder_wei_avx512(const reorder_prb_t &p, const float *src, float *dst) {
    const dim_t O = p.O, I = p.I, SP = p.SP, OB = div_up(O, vlen), IB = div_up(I, vlen);
    // Lane o reads source row o of the block: o * I * SP elements from the first row.
    const __m512i row_offsets =
            _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                    _mm512_set1_epi32(static_cast<int>(I * SP)));
    parallel_for(p.G * OB, 1, [&](dim_t b, dim_t e) {
        for (dim_t gob = b; gob < e; ++gob) {
            const dim_t g = gob / OB, o0 = (gob % OB) * vlen;
            const __mmask16 om = tail_mask(O - o0);
            float *d = dst + gob * IB * SP * vlen * vlen;
            for (dim_t ib = 0; ib < IB; ++ib)
                for (dim_t sp = 0; sp < SP; ++sp)
                    for (dim_t i = 0; i < vlen; ++i, d += vlen) {
                        const dim_t ii = ib * vlen + i;
                        __m512 v = _mm512_setzero_ps();
                        if (ii < I)
                            v = _mm512_mask_i32gather_ps(
                                    v, om, row_offsets, src + ((g * O + o0) * I + ii) * SP + sp, 4);
                        _mm512_storeu_ps(d, v);
                    }
        }
    });
}

} // namespace blockdnn::impl
