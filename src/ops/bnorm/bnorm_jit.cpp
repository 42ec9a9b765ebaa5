// SPDX-License-Identifier: Apache-2.0
// JIT batch normalization driver. A unit is a group of channels (of blocked and ncsp layouts,
// one or more blocks, which each kernel call walks in turn). Loop nest (per direction):
//   inference:  for unit, row, chunk:  fwd_norm                        (one parallel_for)
//               or, streaming from memory (bnorm_conf_t::rows_outer), for row, unit, chunk
//   training:   for unit:  for row, chunk: fwd_stats -> fold (Chan)    (statistics pass)
//                          finalize -> mean, variance, prm
//                          for row, chunk: fwd_norm                    (re-reads the unit from cache)
//               fused (bnorm_conf_t::fuse_next_stats), per thread: the statistics of its first
//               unit as above; then per unit: finalize -> prm; for row, chunk: fwd_norm that
//               also gathers the next unit's statistics -> fold
//   backward:   the same with bwd_stats (sums) and bwd_norm, fused alike (bwd_norm that also
//               sums the next unit) where the sums are needed.
// Threads take whole units (by_unit) or split each unit's chunks (within_unit); either way the
// chunks and the order in which their statistics are folded depend only on the shape, so the
// result does not depend on the thread count.
#include <algorithm>
#include <type_traits>
#include <cmath>
#include <cstring>
#include <vector>

#include <immintrin.h>

#include "ops/bnorm/bnorm_jit.hpp"
#include "sched/parallel.hpp"
#include "core/utils.hpp"

namespace blockdnn::impl {

namespace {

constexpr int n_out_fwd = 6; // fwd_stats, floats per lane: m, 1/k, S1, S2; f64_sums: K, S1, S2 as doubles
constexpr int n_out_bwd = 3; // bwd_stats: sum dy, sum dy xm, sum xm
constexpr int n_prm = 5;     // fwd_norm: mean_hi, mean_lo, var, gamma, beta; bwd_norm: mean, A, B, C

// Part j of [0, n) split into `parts` near-equal parts (balance211 with dim_t counts).
void split(dim_t n, dim_t parts, dim_t j, dim_t &b, dim_t &e) {
    const dim_t base = n / parts, rem = n % parts;
    b = j * base + std::min(j, rem);
    e = b + base + (j < rem ? 1 : 0);
}

// The kernel for k, from the process-wide cache (generated on first use).
status get_kernel(const bnorm_ker_conf_t &k, kernel_ptr &out, std::string &why) {
    const auto &[kind, level, simd_w, sp_vec, c_vecs, c_tail, sp_tail, pt_stride, ur, mean_lo, relu, nt_store, bwd_full,
            prefetch_next, f64_sums, next_stats, pf_next, blocks, blk_stride] = k;
    std::string key = "bnorm|";
    append_raw(key, kind, level, simd_w, sp_vec, c_vecs, c_tail, sp_tail, pt_stride, ur, mean_lo, relu, nt_store,
            bwd_full, prefetch_next, f64_sums, next_stats, pf_next, blocks, blk_stride);
    return kernel_cache().get(
            key, [&] { return make_bnorm_kernel(k); }, out, why);
}

} // namespace

status bnorm_jit_t::create(std::unique_ptr<bnorm_jit_t> &out, const bnorm_jit_prb_t &prb, isa level,
        const bnorm_machine_t &m, std::string &why) {
    auto p = std::unique_ptr<bnorm_jit_t>(new bnorm_jit_t());
    status s = bnorm_init_conf(p->c_, prb, level, m, why);
    if (s != status::success) return s;
    const bnorm_conf_t &c = p->c_;
    const int nk = c.has_last_ker ? 2 : 1;
    for (int k = 0; k < nk; ++k) {
        if (const int lanes = p->out_stride(k ? c.n_units - 1 : 0); lanes > max_lanes) {
            why = cat("unit of ", lanes, " lanes exceeds ", max_lanes);
            return status::unimplemented;
        }
        if (prb.dir != bnorm_dir_t::fwd_inference && (s = get_kernel(c.stats[k], p->stats_[k], why)) != status::success)
            return s;
        bnorm_ker_conf_t n = c.norm[k];
        n.nt_store = false;
        if ((s = get_kernel(n, p->norm_[k][0], why)) != status::success) return s;
        if (c.nt_store && (s = get_kernel(c.norm[k], p->norm_[k][1], why)) != status::success) return s;
    }
    for (int nt = 0; nt < 2 && c.fuse_next_stats; ++nt) {
        bnorm_ker_conf_t n = c.norm_next;
        n.nt_store = nt == 1;
        if ((s = get_kernel(n, p->norm_next_[nt], why)) != status::success) return s;
    }
    p->lane_ = &bnorm_lane_fns(level);
    p->stats_chunks_ = p->make_chunks(c.stats_chunk);
    p->norm_chunks_ = p->make_chunks(c.norm_chunk);
    out = std::move(p);
    return status::success;
}

std::string bnorm_jit_t::info() const { return to_string(c_); }

std::vector<kernel_ptr> bnorm_jit_t::kernels() const {
    std::vector<kernel_ptr> v;
    for (int k = 0; k < 2; ++k)
        for (const auto *p : {&stats_[k], &norm_[k][0], &norm_[k][1]})
            if (*p) v.push_back(*p);
    for (const auto *p : {&norm_next_[0], &norm_next_[1]})
        if (*p) v.push_back(*p);
    return v;
}

std::vector<bnorm_jit_t::chunk_t> bnorm_jit_t::make_chunks(dim_t max_pts) const {
    const dim_t nch = std::max<dim_t>(1, div_up(c_.row_pts, max_pts));
    const bool sp_vec = c_.layout == bnorm_layout_t::ncsp;
    std::vector<chunk_t> v(static_cast<std::size_t>(nch));
    for (dim_t j = 0; j < nch; ++j) {
        chunk_t &ch = v[static_cast<std::size_t>(j)];
        dim_t e = 0;
        split(c_.row_pts, nch, j, ch.p0, e);
        ch.np = e - ch.p0;
        ch.tail = sp_vec && c_.row_tail != 0 && j == nch - 1;
        ch.count = static_cast<double>(sp_vec ? ch.np * c_.simd_w + (ch.tail ? c_.row_tail : 0) : ch.np);
    }
    return v;
}

int bnorm_jit_t::out_stride(dim_t u) const {
    const bnorm_ker_conf_t &k = c_.stats[ker_idx(u)];
    return (k.sp_vec ? 1 : k.c_vecs * c_.simd_w) * k.blocks;
}

dim_t bnorm_jit_t::blocks_of(dim_t u) const {
    const dim_t per_unit = c_.stats[0].blocks;
    if (c_.layout == bnorm_layout_t::nspc) return 1;
    const dim_t n_blks = c_.layout == bnorm_layout_t::ncsp ? c_.c : div_up(c_.c, c_.blk);
    return std::min(per_unit, n_blks - u * per_unit);
}

int bnorm_jit_t::stat_lanes(dim_t u) const {
    // Units of one block (and nspc units) fill their rows of out.
    if (c_.stats[0].blocks == 1) return out_stride(u);
    return static_cast<int>(blocks_of(u) * (c_.layout == bnorm_layout_t::ncsp ? 1 : c_.blk));
}

dim_t bnorm_jit_t::offset(dim_t u, dim_t r, dim_t p) const {
    return u * c_.unit_stride + r * c_.row_stride + p * c_.norm[0].pt_stride;
}

bool bnorm_jit_t::use_by_unit(bnorm_thr_mode_t mode) const {
    if (mode != bnorm_thr_mode_t::automatic) return mode == bnorm_thr_mode_t::by_unit;
    // Whole units per thread when they share out evenly (or are many); otherwise split units.
    return bnorm_whole_units_per_thread(c_.n_units, parallel_max_threads());
}

bool bnorm_jit_t::nt_ok(const float *p) const {
    return c_.nt_store && reinterpret_cast<std::uintptr_t>(p) % (c_.simd_w * sizeof(float)) == 0;
}

void bnorm_jit_t::execute(const bnorm_args_t &mem, bnorm_thr_mode_t mode) const {
    if (c_.prb.dir == bnorm_dir_t::fwd_training) fwd_training(mem, mode);
    else if (c_.prb.dir == bnorm_dir_t::fwd_inference) fwd_inference(mem, mode);
}

void bnorm_jit_t::execute(const bnorm_bwd_args_t &mem, bnorm_thr_mode_t mode) const {
    if (c_.prb.dir == bnorm_dir_t::bwd) backward(mem, mode);
}

// ---- kernel calls --------------------------------------------------------------------------

template <typename args_t>
void bnorm_jit_t::stats_call(
        dim_t u, dim_t r, const chunk_t &ch, const args_t &mem, const float *prm, float *out) const {
    bnorm_call_args_t a;
    const dim_t off = offset(u, r, ch.p0);
    a.src = mem.src + off;
    if constexpr (std::is_same_v<args_t, bnorm_bwd_args_t>) {
        a.diff_dst = mem.diff_dst + off;
        if (c_.prb.fuse_relu) a.dst_fwd = mem.dst_fwd + off;
    }
    a.prm = prm;
    a.out = out;
    a.n_pts = ch.np;
    a.tail = ch.tail ? 1 : 0;
    a.inv_n = static_cast<float>(1.0 / ch.count);
    if (c_.stats[0].blocks > 1) a.n_blk = blocks_of(u);
    stats_[ker_idx(u)]->entry<bnorm_kernel_fn_t>()(&a);
}

template <typename args_t>
void bnorm_jit_t::norm_call(
        dim_t u, dim_t r, const chunk_t &ch, const args_t &mem, const float *prm, bool nt, dim_t pf_u) const {
    bnorm_call_args_t a;
    const dim_t off = offset(u, r, ch.p0), pf_off = offset(pf_u, r, ch.p0);
    a.pf_src = mem.src + pf_off;
    if constexpr (std::is_same_v<args_t, bnorm_bwd_args_t>) {
        a.pf_ddst = mem.diff_dst + pf_off;
        a.src = mem.src + off;
        a.diff_dst = mem.diff_dst + off;
        if (c_.prb.fuse_relu) a.dst_fwd = mem.dst_fwd + off;
        a.diff_src = mem.diff_src + off;
    } else {
        a.src = mem.src + off;
        a.dst = mem.dst + off;
    }
    a.prm = prm;
    a.n_pts = ch.np;
    a.tail = ch.tail ? 1 : 0;
    a.eps = c_.prb.eps;
    if (c_.stats[0].blocks > 1) a.n_blk = blocks_of(u);
    norm_[ker_idx(u)][nt ? 1 : 0]->entry<bnorm_kernel_fn_t>()(&a);
}

// Normalization calls [i0, i1) of unit u, call i = row * chunks + chunk.
template <typename args_t>
void bnorm_jit_t::norm_unit_rows(
        dim_t u, dim_t i0, dim_t i1, const args_t &mem, const float *prm, bool nt, dim_t pf_u) const {
    for_calls(norm_chunks_, i0, i1, [&](dim_t r, const chunk_t &ch) { norm_call(u, r, ch, mem, prm, nt, pf_u); });
}

void bnorm_jit_t::stats_unit(dim_t u, const bnorm_args_t &mem, bnorm_moments_t &acc) const {
    alignas(64) float out[n_out_fwd * max_lanes];
    acc.reset(stat_lanes(u));
    for_calls(stats_chunks_, 0, c_.rows * static_cast<dim_t>(stats_chunks_.size()), [&](dim_t r, const chunk_t &ch) {
        stats_call(u, r, ch, mem, nullptr, out);
        fold_fwd(u, out, ch.count, acc);
    });
}

// The calls are stats_unit's (the statistics chunks), so u + 1's results fold in the same
// order and are the same bits.
void bnorm_jit_t::norm_unit_next_stats(
        dim_t u, const bnorm_args_t &mem, const float *prm, bool nt, bnorm_moments_t &acc) const {
    alignas(64) float out[n_out_fwd * max_lanes];
    acc.reset(stat_lanes(u + 1));
    for_calls(stats_chunks_, 0, c_.rows * static_cast<dim_t>(stats_chunks_.size()), [&](dim_t r, const chunk_t &ch) {
        bnorm_call_args_t a;
        const dim_t off = offset(u, r, ch.p0);
        a.src = mem.src + off;
        a.dst = mem.dst + off;
        a.pf_src = mem.src + offset(u + 1, r, ch.p0);
        a.prm = prm;
        a.out = out;
        a.n_pts = ch.np;
        a.eps = c_.prb.eps;
        norm_next_[nt ? 1 : 0]->entry<bnorm_kernel_fn_t>()(&a);
        fold_fwd(u + 1, out, ch.count, acc);
    });
}

// As norm_unit_next_stats, for backward: prm holds unit u's [mean, A, B, C]; unit u + 1's mean
// goes after them for the kernel's sums.
void bnorm_jit_t::bwd_norm_unit_next_stats(
        dim_t u, const bnorm_bwd_args_t &mem, float *prm, bool nt, bnorm_bwd_sums_t &sums) const {
    alignas(64) float out[n_out_bwd * max_lanes];
    bwd_mean_prm(u + 1, mem, prm + 4 * out_stride(u + 1));
    sums.reset(stat_lanes(u + 1));
    for_calls(stats_chunks_, 0, c_.rows * static_cast<dim_t>(stats_chunks_.size()), [&](dim_t r, const chunk_t &ch) {
        bnorm_call_args_t a;
        const dim_t off = offset(u, r, ch.p0), pf_off = offset(u + 1, r, ch.p0);
        a.src = mem.src + off;
        a.diff_dst = mem.diff_dst + off;
        a.diff_src = mem.diff_src + off;
        a.pf_src = mem.src + pf_off;
        a.pf_ddst = mem.diff_dst + pf_off;
        a.prm = prm;
        a.out = out;
        a.n_pts = ch.np;
        norm_next_[nt ? 1 : 0]->entry<bnorm_kernel_fn_t>()(&a);
        fold_bwd(u + 1, out, sums);
    });
}

// ---- per-channel arithmetic ----------------------------------------------------------------

void bnorm_jit_t::fold_fwd(dim_t u, const float *out, double count, bnorm_moments_t &acc) const {
    const int S = out_stride(u);
    if (c_.stats[ker_idx(u)].f64_sums) { // the kernel wrote doubles
        double o[3 * max_lanes];
        std::memcpy(o, out, 3 * static_cast<std::size_t>(S) * sizeof(double));
        lane_->fold_f64(acc, stat_lanes(u), o, o + S, o + 2 * S, count);
        return;
    }
    lane_->fold(acc, stat_lanes(u), out, out + S, out + 2 * S, out + 3 * S, count);
}

// prm = [mean_hi, mean_lo, var, gamma, beta] for the fwd_norm kernel; padding lanes all 0.
// Branch-free lane loops, so they vectorize; a unit's finalize runs once per unit.
void bnorm_jit_t::finalize_fwd(dim_t u, const bnorm_moments_t &acc, const bnorm_args_t &mem, float *prm) const {
    const int S = out_stride(u);
    const dim_t c0 = u * c_.unit_c;
    const int n = static_cast<int>(std::min<dim_t>(S, c_.c - c0));
    const bool out_of_range =
            lane_->fwd_prm(acc, n, S, mem.scale ? mem.scale + c0 : nullptr, mem.shift ? mem.shift + c0 : nullptr, prm);
    if (mem.mean) std::copy(prm, prm + n, mem.mean + c0);
    if (mem.variance) std::copy(prm + 2 * S, prm + 2 * S + n, mem.variance + c0);
    for (int l = 0; out_of_range && l < n; ++l) {
        if (!bnorm_var_out_of_range(prm[2 * S + l], acc.m2[l])) continue;
        // The variance over- or underflows float, which the kernel's alpha = gamma /
        // sqrt(var + eps) needs: pass var = 1 and a gamma that gives alpha = gamma /
        // sqrt(var_d + eps) through the kernel's float arithmetic.
        const double var_d = acc.m2[l] / acc.n;
        const float one_eps = 1.f + c_.prb.eps;
        prm[2 * S + l] = 1.f;
        prm[3 * S + l] =
                static_cast<float>(prm[3 * S + l] * bnorm_inv_std(var_d, c_.prb.eps) * std::sqrt(double(one_eps)));
    }
    for (int w = 0; w < n_prm; ++w)
        for (int l = n; l < S; ++l) prm[w * S + l] = 0.f;
}

void bnorm_jit_t::inference_prm(dim_t u, const bnorm_args_t &mem, float *prm) const {
    const int S = out_stride(u);
    for (int l = 0; l < S; ++l) {
        const dim_t ch = u * c_.unit_c + l;
        const bool in = ch < c_.c;
        prm[l] = in ? mem.mean[ch] : 0.f;
        prm[S + l] = 0.f;
        prm[2 * S + l] = in ? mem.variance[ch] : 0.f;
        prm[3 * S + l] = !in ? 0.f : mem.scale ? mem.scale[ch] : 1.f;
        prm[4 * S + l] = in && mem.shift ? mem.shift[ch] : 0.f;
    }
}

void bnorm_jit_t::bwd_mean_prm(dim_t u, const bnorm_bwd_args_t &mem, float *prm) const {
    const int S = out_stride(u);
    for (int l = 0; l < S; ++l) {
        const dim_t ch = u * c_.unit_c + l;
        prm[l] = ch < c_.c ? mem.mean[ch] : 0.f;
    }
}

void bnorm_jit_t::fold_bwd(dim_t u, const float *out, bnorm_bwd_sums_t &sums) const {
    const int L = stat_lanes(u), S = out_stride(u);
    const bool full = c_.stats[0].bwd_full;
    for (int l = 0; l < L; ++l) {
        sums.dy[l] += out[l];
        sums.dy_xm[l] += out[S + l];
        if (full) sums.xm[l] += out[2 * S + l];
    }
}

// prm = [mean, A, B, C] for the bwd_norm kernel; padding lanes all 0.
void bnorm_jit_t::finalize_bwd(dim_t u, const bnorm_bwd_sums_t &sums, const bnorm_bwd_args_t &mem, float *prm) const {
    const int S = out_stride(u);
    const dim_t c0 = u * c_.unit_c;
    const int n = static_cast<int>(std::min<dim_t>(S, c_.c - c0));
    lane_->bwd_prm(prm, S, n, sums, static_cast<double>(c_.mb * c_.sp), mem.mean + c0, mem.variance + c0, c_.prb.eps,
            mem.scale ? mem.scale + c0 : nullptr, !c_.prb.global_stats, mem.diff_scale ? mem.diff_scale + c0 : nullptr,
            mem.diff_shift ? mem.diff_shift + c0 : nullptr);
    for (int w = 0; w < 4; ++w)
        for (int l = n; l < S; ++l) prm[w * S + l] = 0.f;
}

template <typename args_t>
void bnorm_jit_t::stats_calls_parallel(
        dim_t u, dim_t n, const args_t &mem, const float *prm, float *outs, int out_sz) const {
    parallel_for(n, 1, [&](dim_t i0, dim_t i1) {
        float *o = outs + i0 * out_sz;
        for_calls(stats_chunks_, i0, i1, [&](dim_t r, const chunk_t &ch) {
            stats_call(u, r, ch, mem, prm, o);
            o += out_sz;
        });
    });
}

template <typename args_t>
void bnorm_jit_t::norm_calls_parallel(dim_t u, dim_t n, const args_t &mem, const float *prm, bool nt) const {
    parallel_for(n, 1, [&](dim_t i0, dim_t i1) {
        norm_unit_rows(u, i0, i1, mem, prm, nt, u + 1 < c_.n_units ? u + 1 : u);
        if (nt) _mm_sfence(); // streaming stores are visible before the join
    });
}

// ---- directions ----------------------------------------------------------------------------

void bnorm_jit_t::fwd_inference(const bnorm_args_t &mem, bnorm_thr_mode_t) const {
    // Call i = (outer * n_inner + inner) * chunks + chunk: outer the row and inner the unit
    // when rows_outer (memory order), else the other way round. A part divides for its first
    // call only and steps from there, as for_calls does.
    const dim_t nch = static_cast<dim_t>(norm_chunks_.size());
    const dim_t n_inner = c_.rows_outer ? c_.n_units : c_.rows;
    const bool nt = nt_ok(mem.dst);
    parallel_for(c_.n_units * c_.rows * nch, 1, [&](dim_t i0, dim_t i1) {
        alignas(64) float prm[n_prm * max_lanes];
        dim_t j = i0 % nch, inner = i0 / nch % n_inner, outer = i0 / nch / n_inner, cur = -1;
        for (dim_t i = i0; i < i1; ++i) {
            const dim_t u = c_.rows_outer ? inner : outer, r = c_.rows_outer ? outer : inner;
            if (u != cur) inference_prm(cur = u, mem, prm);
            norm_call(u, r, norm_chunks_[static_cast<std::size_t>(j)], mem, prm, nt, u);
            if (++j == nch) {
                j = 0;
                if (++inner == n_inner) inner = 0, ++outer;
            }
        }
        if (nt) _mm_sfence(); // streaming stores are visible before the join
    });
}

template <typename args_t, typename Start, typename Fold, typename Finish>
void bnorm_jit_t::units_in_turn(const args_t &mem, dim_t calls_s, dim_t calls_n, int out_sz, bool nt, Start &&start,
        Fold &&fold, Finish &&finish) const {
    std::vector<float> outs(calls_s * out_sz);
    alignas(64) float prm[n_prm * max_lanes];
    for (dim_t u = 0; u < c_.n_units; ++u) {
        start(u, prm);
        stats_calls_parallel(u, calls_s, mem, prm, outs.data(), out_sz);
        const float *o = outs.data();
        for_calls(stats_chunks_, 0, calls_s, [&](dim_t, const chunk_t &ch) {
            fold(u, o, ch);
            o += out_sz;
        });
        finish(u, prm);
        norm_calls_parallel(u, calls_n, mem, prm, nt);
    }
}

void bnorm_jit_t::fwd_training(const bnorm_args_t &mem, bnorm_thr_mode_t mode) const {
    const dim_t calls_s = c_.rows * static_cast<dim_t>(stats_chunks_.size());
    const dim_t calls_n = c_.rows * static_cast<dim_t>(norm_chunks_.size());
    const bool nt = nt_ok(mem.dst);
    const int out_sz = n_out_fwd * max_lanes;
    if (use_by_unit(mode)) {
        parallel_for(c_.n_units, 1, [&](dim_t u0, dim_t u1) {
            alignas(64) float prm[n_prm * max_lanes];
            bnorm_moments_t acc;
            for (dim_t u = u0; u < u1; ++u) {
                // Fused, normalizing the previous unit gathered u's statistics.
                if (u == u0 || !c_.fuse_next_stats) stats_unit(u, mem, acc);
                finalize_fwd(u, acc, mem, prm);
                if (c_.fuse_next_stats && u + 1 < u1) norm_unit_next_stats(u, mem, prm, nt, acc);
                // While normalizing u, prefetch the thread's next unit for its statistics pass.
                else norm_unit_rows(u, 0, calls_n, mem, prm, nt, u + 1 < u1 ? u + 1 : u);
            }
            if (nt) _mm_sfence();
        });
        return;
    }
    bnorm_moments_t acc;
    units_in_turn(
            mem, calls_s, calls_n, out_sz, nt, [&](dim_t u, float *) { acc.reset(stat_lanes(u)); },
            [&](dim_t u, const float *o, const chunk_t &ch) { fold_fwd(u, o, ch.count, acc); },
            [&](dim_t u, float *prm) { finalize_fwd(u, acc, mem, prm); });
}

void bnorm_jit_t::backward(const bnorm_bwd_args_t &mem, bnorm_thr_mode_t mode) const {
    const bool need_stats = !c_.prb.global_stats || mem.diff_scale || mem.diff_shift;
    const dim_t calls_s = need_stats ? c_.rows * static_cast<dim_t>(stats_chunks_.size()) : 0;
    const dim_t calls_n = c_.rows * static_cast<dim_t>(norm_chunks_.size());
    const bool nt = nt_ok(mem.diff_src);
    const int out_sz = n_out_bwd * max_lanes;
    if (use_by_unit(mode)) {
        parallel_for(c_.n_units, 1, [&](dim_t u0, dim_t u1) {
            alignas(64) float out[out_sz], prm[n_prm * max_lanes];
            bnorm_bwd_sums_t sums;
            const bool fused = c_.fuse_next_stats && need_stats;
            for (dim_t u = u0; u < u1; ++u) {
                // Fused, normalizing the previous unit gathered u's sums.
                if (u == u0 || !fused) {
                    sums.reset(stat_lanes(u));
                    bwd_mean_prm(u, mem, prm);
                    for_calls(stats_chunks_, 0, calls_s, [&](dim_t r, const chunk_t &ch) {
                        stats_call(u, r, ch, mem, prm, out);
                        fold_bwd(u, out, sums);
                    });
                }
                finalize_bwd(u, sums, mem, prm);
                if (fused && u + 1 < u1) bwd_norm_unit_next_stats(u, mem, prm, nt, sums);
                else norm_unit_rows(u, 0, calls_n, mem, prm, nt, u + 1 < u1 ? u + 1 : u);
            }
            if (nt) _mm_sfence();
        });
        return;
    }
    bnorm_bwd_sums_t sums;
    units_in_turn(
            mem, calls_s, calls_n, out_sz, nt,
            [&](dim_t u, float *prm) {
                bwd_mean_prm(u, mem, prm);
                sums.reset(stat_lanes(u));
            },
            [&](dim_t u, const float *o, const chunk_t &) { fold_bwd(u, o, sums); },
            [&](dim_t u, float *prm) { finalize_bwd(u, sums, mem, prm); });
}

} // namespace blockdnn::impl
