// SPDX-License-Identifier: Apache-2.0
// Planning of the JIT RNN forward: panel size, threading decision, and the packing of weights
// and bias into gate-interleaved panels.
#include <algorithm>
#include <utility>

#include "core/utils.hpp"
#include "jit/brgemm/brgemm_conf.hpp"
#include "ops/rnn/rnn_jit.hpp"

namespace blockdnn::impl {

namespace {

// Vectors per panel (gates x hb / simd_w). With many rows the per-step GEMM is compute bound
// and 4 vectors give the 6 x 4 register block; with few rows it streams U from L2, and wider
// panels cut the per-call overhead (a cell call and one or more brgemm calls per panel and
// step).
constexpr int panel_vectors_many_rows = 4;
constexpr int panel_vectors_few_rows = 16;
constexpr std::int64_t many_rows = 8;
// A step is split over threads only above this many GEMM FLOPs (2 mb x gates x dhc x dhc):
// below it the step is so short that the cross-core hand-over of h_t costs more than the split
// saves (docs/tuning.md, "RNN step split").
constexpr double step_flops_split_min = 6.0e4;

// Hidden units per panel: up to v_max vectors, the fewest padded units (dhc = 128 with up to
// 5 vectors of 16 takes 64, not 80: 2 panels of 128 units rather than 160), then the widest.
int pick_hb(std::int64_t dhc, int simd_w, int v_max) {
    int best_v = 1;
    std::int64_t best_units = rnd_up(dhc, simd_w);
    for (int v = 1; v <= v_max; ++v) {
        const std::int64_t units = rnd_up(dhc, static_cast<std::int64_t>(v) * simd_w);
        if (units <= best_units) best_units = units, best_v = v;
    }
    return best_v * simd_w;
}

} // namespace

status init_conf_rnn_fwd_jit(
        rnn_fwd_jit_conf_t &c, const rnn_prb_t &prb, isa level, const rnn_fwd_jit_threads_t &thr, std::string &why) {
    if (level != isa::avx512_core && level != isa::avx2) {
        why = cat("rnn_fwd: no JIT kernels for isa ", to_string(level));
        return status::unimplemented;
    }
    const rnn_desc &p = prb.desc; // validated: sizes >= 1, sic = dic = dhc, slc = dhc past layer 1
    c = rnn_fwd_jit_conf_t {};
    c.level = level;
    c.simd_w = simd_w_of(level);
    const int G = static_cast<int>(prb.n_gates);
    const bool many = p.mb >= many_rows;
    int vectors = many ? panel_vectors_many_rows : panel_vectors_few_rows;
    // Original GRU's two GEMMs cover 2 and 1 of its 3 gates: twice the units keeps the second
    // at 2 vectors (a 14 x 2 block) rather than 1 (loads would outnumber FMAs).
    if (p.cell == rnn_cell::gru && many) vectors = 6;
    c.hb = pick_hb(p.dhc, c.simd_w, std::max(1, vectors / G));
    c.n_panels = div_up(p.dhc, c.hb);
    c.pw = static_cast<std::int64_t>(G) * c.hb;
    c.Np = c.n_panels * c.pw;
    c.n_parts = p.cell == rnn_cell::gru ? 2 : 1;
    c.part_n[0] = p.cell == rnn_cell::gru ? 2 * c.hb : c.pw;
    c.part_n[1] = c.n_parts == 2 ? c.hb : 0;
    // The step GEMMs accumulate h U into the step's gates (lbr_gru: into its own buffer, as r
    // multiplies U_o h alone). The gates were written long before: prefetch them.
    const bool lbr = p.cell == rnn_cell::lbr_gru;
    const float beta = lbr ? 0.f : 1.f;
    brgemm_hints_t hints;
    hints.prefetch_c = !lbr;
    // A part's call re-reads its columns of U for every row block of its brgemm kernel; U for
    // one ld block, K x its columns, ran fastest as a contiguous block rather than a slice of
    // wider rows (docs/tuning.md, "RNN steps: U in blocks of the calls' columns"). So a part
    // whose kernel loops over several ld blocks and several row blocks runs one call per ld
    // block: whether a part splits follows the register blocking init_conf_brgemm picks.
    for (int part = 0; part < c.n_parts; ++part) {
        const std::int64_t n = c.part_n[part];
        brgemm_conf_t &bc = c.step_brgemm[part];
        status st = init_conf_brgemm(bc, level, p.mb, n, p.dhc, p.dhc, n, c.Np, 1.f, beta, why, hints);
        if (st != status::success) return st;
        c.call_n[part] = n;
        const std::int64_t ld_cols = static_cast<std::int64_t>(bc.ld_block) * c.simd_w;
        const int row_blocks = bc.bdb + (bc.bd_block_tail > 0 ? 1 : 0);
        if (row_blocks > 1 && ld_cols < n && n % ld_cols == 0) {
            c.call_n[part] = ld_cols;
            st = init_conf_brgemm(bc, level, p.mb, ld_cols, p.dhc, p.dhc, ld_cols, c.Np, 1.f, beta, why, hints);
            if (st != status::success) return st;
        }
    }
    const double step_flops = 2.0 * p.mb * G * static_cast<double>(p.dhc) * p.dhc;
    const double split_min = thr.step_split_min_flops >= 0 ? thr.step_split_min_flops : step_flops_split_min;
    c.max_threads = thr.nthr > 1 && c.n_panels >= 2 && step_flops >= split_min
            ? static_cast<int>(std::min<std::int64_t>(thr.nthr, c.n_panels))
            : 1;
    return status::success;
}

std::string to_string(const rnn_fwd_jit_conf_t &c) {
    std::string s = cat(to_string(c.level), " hb", c.hb, " n_panels", c.n_panels, " pw", c.pw, " Np", c.Np, " calls");
    for (int part = 0; part < c.n_parts; ++part)
        s += cat(part ? "+" : "", c.call_n[part] > 0 ? c.part_n[part] / c.call_n[part] : 0, "x", c.call_n[part]);
    return s + cat(" step_threads", c.max_threads);
}

void rnn_fwd_jit_t::pack(packed_t &pk, const float *wei_layer, const float *wei_iter, const float *bias) const {
    const rnn_desc &d = p_.desc;
    const std::int64_t L = d.l, D = p_.n_dirs, G = p_.n_gates, Gb = p_.n_bias_gates, H = d.dhc;
    const std::int64_t hb = c_.hb, np = c_.n_panels, pw = c_.pw;
    // Element (l, d, i, g, o) of a dense weights tensor with I input channels, ldigo or ldgoi.
    auto wei = [&](const float *w, bool ldgoi, std::int64_t I, std::int64_t l, std::int64_t dir, std::int64_t i,
                       std::int64_t g, std::int64_t o) {
        const std::int64_t ld = l * D + dir;
        return ldgoi ? w[((ld * G + g) * H + o) * I + i] : w[((ld * I + i) * G + g) * H + o];
    };
    // Gate-interleaved column n of the gates row (panel n / pw, gate n % pw / hb, unit n % hb),
    // zero past dhc, packed in blocks of columns, each I x its width: block_of(n) gives the
    // first column and the width of n's block. The layer GEMM's W takes its driver's panels of
    // nb columns, which need not follow the gates; the steps' U the blocks of their calls.
    auto pack_w = [&](aligned_vector<float> &dst, std::int64_t size, const float *w, bool ldgoi, std::int64_t I,
                          std::int64_t l, std::int64_t dir, auto block_of) {
        const std::int64_t N = np * pw;
        dst.assign(size, 0.f);
        for (std::int64_t n = 0; n < N; ++n) {
            const std::int64_t pan = n / pw, g = n % pw / hb, o = pan * hb + n % hb;
            if (o >= H) continue;
            const auto [n0, width] = block_of(n);
            float *col = dst.data() + n0 * I + (n - n0);
            for (std::int64_t i = 0; i < I; ++i) col[i * width] = wei(w, ldgoi, I, l, dir, i, g, o);
        }
    };
    const std::int64_t nb = gemm_->packed_b().nb;
    auto w_block = [nb](std::int64_t n) { return std::pair {n / nb * nb, nb}; };
    auto u_block = [this, pw](std::int64_t n) {
        const std::int64_t j = n % pw;
        const int part = j < c_.part_n[0] ? 0 : 1;
        const std::int64_t first = c_.part_col(part), cw = c_.call_n[part];
        return std::pair {n - j + first + (j - first) / cw * cw, cw};
    };
    pk.wl.resize(L * D);
    pk.wi.resize(L * D);
    pk.bias.resize(L * D);
    for (std::int64_t l = 0; l < L; ++l)
        for (std::int64_t dir = 0; dir < D; ++dir) {
            const std::int64_t ld = l * D + dir;
            pack_w(pk.wl[ld], div_up(np * pw, nb) * nb * d.slc, wei_layer, wl_ldgoi_, d.slc, l, dir, w_block);
            pack_w(pk.wi[ld], np * pw * H, wei_iter, wi_ldgoi_, H, l, dir, u_block);
            // bias[p][g][j] = B[g][p * hb + j] (Gb gates, ldgo), zero past dhc or without a bias.
            aligned_vector<float> &b = pk.bias[ld];
            b.assign(np * Gb * hb, 0.f);
            if (!bias) continue;
            for (std::int64_t pan = 0; pan < np; ++pan)
                for (std::int64_t g = 0; g < Gb; ++g)
                    for (std::int64_t j = 0; j < hb && pan * hb + j < H; ++j)
                        b[(pan * Gb + g) * hb + j] = bias[(ld * Gb + g) * H + pan * hb + j];
        }
}

void rnn_fwd_jit_t::take_weights(const rnn_args_t &weights) {
    pack(packed_, weights.wei_layer, weights.wei_iter, weights.bias);
}

} // namespace blockdnn::impl
