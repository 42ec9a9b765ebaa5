// SPDX-License-Identifier: Apache-2.0
// AVX2 reorders (compiled with -mavx2 -mfma). The same three shapes of work as the AVX-512
// file, 8 lanes wide: nc[d][h]w <-> nC[d][h]w{8,16}c through 8x8 in-register transposes
// (a 16-channel block is two 8-channel halves), n[d][h]wc <-> blocked by 8-channel vectors, and
// [g]oi[d][h]w -> [g]OI[d][h]w{8i8o,16i16o} by 8-wide gathers. Tails use vmaskmovps masks.
// A fourth, with no AVX-512 twin: nc[d][h]w <-> n[d][h]wc by 8x8 transposes.
#include <algorithm>
#include <cstdint>

#include <immintrin.h>

#include "sched/parallel.hpp"
#include "core/utils.hpp"
#include "tensor/reorder_kernels.hpp"

namespace blockdnn::impl {

namespace {

constexpr int vlen = 8;

// Lanes [0, n) set, for vmaskmovps. n is clamped to [0, 8].
__m256i tail_mask(dim_t n) {
    alignas(32) static const int table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    const dim_t k = std::clamp<dim_t>(n, 0, vlen);
    return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(table + vlen - k));
}

// In-register transpose of an 8x8 block: r[i] element j becomes r[j] element i.
void transpose8(__m256 r[8]) {
    __m256 a[8], b[8];
    for (int i = 0; i < 4; ++i) { // rows 2i, 2i+1 interleaved within each 128-bit lane
        a[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i) { // b[4i+j]: rows 4i..4i+3 of column 4k+j in lane k
        b[4 * i + 0] = _mm256_shuffle_ps(a[4 * i], a[4 * i + 2], 0x44);
        b[4 * i + 1] = _mm256_shuffle_ps(a[4 * i], a[4 * i + 2], 0xee);
        b[4 * i + 2] = _mm256_shuffle_ps(a[4 * i + 1], a[4 * i + 3], 0x44);
        b[4 * i + 3] = _mm256_shuffle_ps(a[4 * i + 1], a[4 * i + 3], 0xee);
    }
    for (int j = 0; j < 4; ++j) { // join rows 0-3 and 4-7 of each column
        r[j] = _mm256_permute2f128_ps(b[j], b[4 + j], 0x20);
        r[4 + j] = _mm256_permute2f128_ps(b[j], b[4 + j], 0x31);
    }
}

// One (n, channel block) of blk = 8 or 16 channels, c_valid of them real:
// plain[c*S + s] <-> blocked[s*blk + c].
// Store of a full vector to 32-byte-aligned memory, non-temporal when asked.
inline void store_full(float *p, __m256 v, bool nt) {
    if (nt) _mm256_stream_ps(p, v);
    else _mm256_storeu_ps(p, v);
}

void nchw_to_blocked(const float *plain, float *blocked, dim_t S, int blk, dim_t c_valid, bool nt) {
    for (dim_t s = 0; s < S; s += vlen) {
        const dim_t ns = std::min<dim_t>(vlen, S - s);
        const __m256i m = tail_mask(ns);
        for (int half = 0; half < blk; half += vlen) {
            __m256 r[8];
            for (int c = 0; c < vlen; ++c) {
                const float *row = plain + (half + c) * S + s;
                // vmaskmovps is slow on some cores (AMD microcodes it): mask only the tail.
                r[c] = half + c >= c_valid ? _mm256_setzero_ps()
                        : ns == vlen       ? _mm256_loadu_ps(row)
                                           : _mm256_maskload_ps(row, m);
            }
            transpose8(r);
            for (int j = 0; j < ns; ++j) store_full(blocked + (s + j) * blk + half, r[j], nt);
        }
    }
}

void nchw_from_blocked(const float *blocked, float *plain, dim_t S, int blk, dim_t c_valid) {
    for (dim_t s = 0; s < S; s += vlen) {
        const dim_t ns = std::min<dim_t>(vlen, S - s);
        const __m256i m = tail_mask(ns);
        for (int half = 0; half < blk && half < c_valid; half += vlen) {
            __m256 r[8];
            for (int j = 0; j < vlen; ++j)
                r[j] = j < ns ? _mm256_loadu_ps(blocked + (s + j) * blk + half) : _mm256_setzero_ps();
            transpose8(r);
            for (int c = 0; c < vlen && half + c < c_valid; ++c) {
                float *row = plain + (half + c) * S + s;
                if (ns == vlen) _mm256_storeu_ps(row, r[c]);
                else _mm256_maskstore_ps(row, m, r[c]);
            }
        }
    }
}

// plain[s*C + c] <-> blocked[s*blk + c] (plain already offset to the block's first channel).
void nhwc_to_blocked(const float *plain, float *blocked, dim_t S, dim_t C, int blk, dim_t c_valid, bool nt) {
    for (int half = 0; half < blk; half += vlen) {
        const dim_t n = c_valid - half;
        const __m256i m = tail_mask(n);
        for (dim_t s = 0; s < S; ++s) {
            const __m256 v = n >= vlen ? _mm256_loadu_ps(plain + s * C + half)
                    : n > 0            ? _mm256_maskload_ps(plain + s * C + half, m)
                                       : _mm256_setzero_ps();
            store_full(blocked + s * blk + half, v, nt);
        }
    }
}

void nhwc_from_blocked(const float *blocked, float *plain, dim_t S, dim_t C, int blk, dim_t c_valid) {
    for (int half = 0; half < blk && half < c_valid; half += vlen) {
        const dim_t n = c_valid - half;
        const __m256i m = tail_mask(n);
        for (dim_t s = 0; s < S; ++s) {
            const __m256 v = _mm256_loadu_ps(blocked + s * blk + half);
            if (n >= vlen) _mm256_storeu_ps(plain + s * C + half, v);
            else _mm256_maskstore_ps(plain + s * C + half, m, v);
        }
    }
}

} // namespace

void reorder_act_avx2(const reorder_prb_t &p, const float *src, float *dst) {
    const int blk = p.blk;
    const dim_t S = p.S, C = p.C;
    const bool to_blocked = p.kind == reorder_prb_t::kind_t::act_to_blocked;
    // Every 8-float piece of a blocked row is 32-byte aligned if the tensor is.
    const bool nt = to_blocked && p.stream_stores && reinterpret_cast<std::uintptr_t>(dst) % 32 == 0;
    for_each_act_block(p, blk, [&](dim_t plain0, dim_t blocked0, dim_t c_valid) {
        if (to_blocked) {
            if (p.channels_last) nhwc_to_blocked(src + plain0, dst + blocked0, S, C, blk, c_valid, nt);
            else nchw_to_blocked(src + plain0, dst + blocked0, S, blk, c_valid, nt);
        } else {
            if (p.channels_last) nhwc_from_blocked(src + blocked0, dst + plain0, S, C, blk, c_valid);
            else nchw_from_blocked(src + blocked0, dst + plain0, S, blk, c_valid);
        }
    });
    if (nt) _mm_sfence();
}

void reorder_wei_avx2(const reorder_prb_t &p, const float *src, float *dst) {
    const int blk = p.blk;
    const dim_t O = p.O, I = p.I, SP = p.SP, OB = div_up(O, blk), IB = div_up(I, blk);
    // Lane o reads source row o: o * I * SP elements past the first row of the 8-row half.
    const __m256i row_offsets =
            _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(I * SP)));
    parallel_for(p.G * OB, 1, [&](dim_t b, dim_t e) {
        for (dim_t gob = b; gob < e; ++gob) {
            const dim_t g = gob / OB, o0 = (gob % OB) * blk;
            float *d = dst + gob * IB * SP * blk * blk;
            for (dim_t ib = 0; ib < IB; ++ib)
                for (dim_t sp = 0; sp < SP; ++sp)
                    for (dim_t i = 0; i < blk; ++i) {
                        const dim_t ii = ib * blk + i;
                        for (int half = 0; half < blk; half += vlen, d += vlen) {
                            __m256 v = _mm256_setzero_ps();
                            const dim_t o_valid = O - o0 - half;
                            if (ii < I && o_valid > 0)
                                v = _mm256_mask_i32gather_ps(v, src + ((g * O + o0 + half) * I + ii) * SP + sp,
                                        row_offsets, _mm256_castsi256_ps(tail_mask(o_valid)), 4);
                            _mm256_storeu_ps(d, v);
                        }
                    }
        }
    });
}

// nc[d][h]w <-> n[d][h]wc: per image a rows x cols matrix into its transpose, through 8 x 8
// in-register transposes. A task is up to 256 rows by 256 columns; it walks its rows for one
// 8-column block at a time, so each dst row gets its 32-byte pieces one after another and the
// src lines, half used per block, stay in L1 (256 x 64 bytes) for the next block. Stores are
// non-temporal when the tensors exceed the cache, rows is a multiple of 8 and dst is 32-byte
// aligned (then every vector store is aligned and there is no bottom edge). Ragged edges go
// element by element, with regular stores.
void reorder_transpose_avx2(const reorder_prb_t &p, const float *src, float *dst) {
    const dim_t rows = p.rows(), cols = p.cols();
    constexpr dim_t tile_rows = 256, tile_cols = 256;
    const dim_t rt = div_up(rows, tile_rows), ct = div_up(cols, tile_cols);
    const bool nt = p.stream_stores && rows % vlen == 0 && reinterpret_cast<std::uintptr_t>(dst) % 32 == 0;
    parallel_for(p.N * rt * ct, 1, [&](dim_t b, dim_t e) {
        for (dim_t t = b; t < e; ++t) {
            const dim_t n = t / (rt * ct), r0 = t / ct % rt * tile_rows, c0 = t % ct * tile_cols;
            const dim_t r1 = std::min(rows, r0 + tile_rows), c1 = std::min(cols, c0 + tile_cols);
            const dim_t r8 = r0 + (r1 - r0) / vlen * vlen, c8 = c0 + (c1 - c0) / vlen * vlen;
            const float *s = src + n * rows * cols;
            float *d = dst + n * rows * cols;
            for (dim_t c = c0; c < c8; c += vlen) {
                for (dim_t r = r0; r < r8; r += vlen) {
                    __m256 v[vlen];
                    for (int i = 0; i < vlen; ++i) v[i] = _mm256_loadu_ps(s + (r + i) * cols + c);
                    transpose8(v);
                    for (int i = 0; i < vlen; ++i) store_full(d + (c + i) * rows + r, v[i], nt);
                }
                transpose_elems(s, d, rows, cols, r8, r1, c, c + vlen); // bottom edge
            }
            transpose_elems(s, d, rows, cols, r0, r1, c8, c1); // right edge
        }
        if (nt) _mm_sfence();
    });
}

} // namespace blockdnn::impl
