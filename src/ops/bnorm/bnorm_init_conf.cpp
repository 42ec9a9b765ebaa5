// SPDX-License-Identifier: Apache-2.0
// init_conf for JIT batch normalization: which layouts the kernels take, how channels group
// into units and points into chunks, unrolling within the register budget, streaming stores.
#include <algorithm>
#include <climits>

#include "core/utils.hpp"
#include "jit/isa_traits.hpp"
#include "ops/bnorm/bnorm_conf.hpp"
#include "ops/bnorm/bnorm_jit_stats.hpp"

namespace blockdnn::impl {

namespace {

// Bytes of one statistics chunk: two-pass statistics re-read the chunk, so it must stay in L2
// (an eighth of it, leaving room for the other streams); large chunks make the per-chunk fold
// in the driver negligible.
constexpr long stats_chunk_bytes_min = 16 << 10, stats_chunk_bytes_max = 256 << 10;
// Bytes per normalization call: large enough that the call overhead vanishes, small enough
// that a unit splits into several calls for the threads.
constexpr long norm_chunk_bytes = 64 << 10;
// Most unroll steps of the f64_sums statistics: each step already has four independent sums
// (S1 and S2 of the low and high half of a vector).
constexpr int f64_ur_max = 2;
// Fused normalization: how far ahead, in bytes, it prefetches the next unit's src (training;
// src and diff_dst backward), the reads that come from memory (the unit it normalizes is in
// cache). 256 in both directions: the fastest distance for both on one CPU, where 1024 slowed
// the AVX-512 passes; on another it did as well as 1024 for backward, and longer distances did
// alike for training (docs/tuning.md, "bnorm next-unit prefetch distance" and "bnorm
// backward: the next unit's sums in the normalization").
constexpr int norm_next_pf_bytes = 256;
// nspc: vectors of channels per unit (registers for params and accumulators, see vregs).
constexpr int max_unit_vecs_avx512 = 4, max_unit_vecs_avx2 = 2;

bool layout_of(format_tag tag, bnorm_layout_t &l, int &blk) {
    blk = 0;
    switch (tag) {
    case format_tag::nCw8c:
    case format_tag::nChw8c:
    case format_tag::nCdhw8c: l = bnorm_layout_t::blocked, blk = 8; return true;
    case format_tag::nCw16c:
    case format_tag::nChw16c:
    case format_tag::nCdhw16c: l = bnorm_layout_t::blocked, blk = 16; return true;
    case format_tag::nc:
    case format_tag::nwc:
    case format_tag::nhwc:
    case format_tag::ndhwc: l = bnorm_layout_t::nspc; return true;
    case format_tag::ncw:
    case format_tag::nchw:
    case format_tag::ncdhw: l = bnorm_layout_t::ncsp; return true;
    default: return false;
    }
}

// Largest unroll (<= cap) whose register need fits.
int pick_ur(bnorm_ker_conf_t k, int cap) {
    for (int u = cap; u >= 1; --u) {
        k.ur = u;
        if (bnorm_ker_vregs(k) <= n_vregs_of(k.level)) return u;
    }
    return 0;
}

// Most unroll steps per loop iteration in the statistics kernels: the independent accumulator
// chains that keep every FMA pipe busy, latency x pipes.
int stats_ur_max(const machine_model_t &m, isa level) { return m.fma(level).latency * m.fma(level).pipes; }

// Channel blocks per unit, of a blocked layout or (ncsp) of single channels (docs/tuning.md,
// "bnorm on small images: units of several channel blocks or channels"). A block of a
// small image is a few KB, and the driver's work per unit (a kernel call per pass and image,
// folding the statistics, the parameters) then weighs as much as the kernels': units of
// several blocks spread it over more data. Grouping changes no arithmetic (each block is
// computed as alone), so it may depend on the threads: it keeps units enough for whole ones
// per thread, the driver's by_unit rule. Not with `one_block`: where the data comes from
// memory on blocked layouts, whose fused statistics and prefetching kernels take one block
// (and grouping must not change which statistics run). `reread` is the tensors the
// normalization pass reads again after the statistics pass (src; backward also diff_dst, and
// dst with relu).
int blocks_per_unit(const bnorm_conf_t &c, const bnorm_machine_t &m, bool one_block, int reread) {
    if (one_block) return 1;
    const bool ncsp = c.layout == bnorm_layout_t::ncsp;
    const dim_t blk_c = ncsp ? 1 : c.blk; // channels of a block
    const dim_t n_blks = div_up(c.c, blk_c), row_bytes = c.sp * blk_c * 4;
    // A unit's row (one image's points of its blocks) up to the data of one normalization
    // call, whose size already makes the call's overhead small; and what the normalization
    // reads again within half of L2, so that it comes from there.
    const dim_t reread_bytes = row_bytes * c.mb * reread;
    dim_t b = std::min<dim_t>(norm_chunk_bytes / row_bytes, m.l2_bytes / 2 / reread_bytes);
    b = std::clamp<dim_t>(b, 1, std::min<dim_t>(bnorm_max_lanes / blk_c, n_blks));
    while (b > 1 && !bnorm_whole_units_per_thread(div_up(n_blks, b), m.nthr)) --b;
    // As many units, of even sizes: the last one short would leave its thread idle.
    return static_cast<int>(div_up(n_blks, div_up(n_blks, b)));
}

// Kernel confs for a unit of `unit_c` channels.
bool make_kers(bnorm_conf_t &c, const machine_model_t &m, dim_t unit_c, bnorm_ker_conf_t &stats, bnorm_ker_conf_t &norm,
        std::string &why) {
    const bnorm_jit_prb_t &p = c.prb;
    bnorm_ker_conf_t k;
    k.level = c.level;
    k.simd_w = c.simd_w;
    k.sp_vec = c.layout == bnorm_layout_t::ncsp;
    if (k.sp_vec) {
        k.c_vecs = 1, k.c_tail = c.simd_w, k.sp_tail = c.row_tail, k.pt_stride = c.simd_w;
        k.blocks = static_cast<int>(unit_c);
        k.blk_stride = k.blocks > 1 ? c.sp : 0;
    } else {
        const bool blocked = c.layout == bnorm_layout_t::blocked;
        const dim_t pt_c = blocked ? c.blk : unit_c; // channels of a point
        k.c_vecs = static_cast<int>(div_up(pt_c, c.simd_w));
        k.c_tail = static_cast<int>(pt_c - (k.c_vecs - 1) * c.simd_w);
        k.pt_stride = blocked ? c.blk : c.c;
        if (blocked) {
            k.blocks = static_cast<int>(unit_c / c.blk);
            k.blk_stride = k.blocks > 1 ? c.sp * c.blk : 0; // 0: one kernel for every image size
        }
    }
    k.relu = p.fuse_relu;
    k.bwd_full = p.dir == bnorm_dir_t::bwd && !p.global_stats;

    stats = norm = k;
    const bool bwd = p.dir == bnorm_dir_t::bwd;
    stats.kind = bwd ? bnorm_ker_conf_t::kind_t::bwd_stats : bnorm_ker_conf_t::kind_t::fwd_stats;
    norm.kind = bwd ? bnorm_ker_conf_t::kind_t::bwd_norm : bnorm_ker_conf_t::kind_t::fwd_norm;
    norm.mean_lo = p.dir == bnorm_dir_t::fwd_training;
    norm.nt_store = c.nt_store;
    // Two passes per unit read memory only when the tensor exceeds the cache (as streaming
    // stores): then the next unit's reads overlap this unit's stores. Not backward: its units
    // hold two tensors, and fetching the next one's as well evicted the unit the pass re-reads
    // (docs/tuning.md, "bnorm streaming stores"). Units of one block only: the prefetch reads
    // one block's stream.
    norm.prefetch_next = c.nt_store && p.dir == bnorm_dir_t::fwd_training && k.blocks == 1;
    stats.ur = pick_ur(stats, std::max(1, stats_ur_max(m, c.level) / k.c_vecs));
    norm.ur = std::max(1, 4 / k.c_vecs); // temporaries are renamed: the unroll only trims loop overhead
    if (stats.ur == 0 || bnorm_ker_vregs(norm) > n_vregs_of(c.level)) {
        why = cat("register budget: ", k.c_vecs, " vectors per point do not fit");
        return false;
    }
    // Byte displacements inside an unrolled step must fit an int32.
    const dim_t max_disp = std::max((std::max(stats.ur, norm.ur) + 1) * k.pt_stride, k.blk_stride) * 4;
    if (max_disp > INT_MAX) {
        why = cat("point stride ", k.pt_stride, " floats is too large for 32-bit displacements");
        return false;
    }
    return true;
}

// Sets up bnorm_conf_t::fuse_next_stats where it applies, with the largest unroll at which
// norm_next fits the registers (training: at most f64_ur_max; backward: at most bwd_stats'
// own); the statistics kernel takes the same unroll, so that its sums are the same bits.
void fuse_next_stats(bnorm_conf_t &c, bool from_memory) {
    // Blocked units are whole channel blocks: no tails, which the fused sums rely on; and one
    // block each (blocks_per_unit groups none where the data comes from memory), as their
    // kernels have no loop over blocks. Backward without relu: the next unit's forward dst
    // would be a fifth stream.
    const bool bwd = c.prb.dir == bnorm_dir_t::bwd;
    if (c.prb.dir == bnorm_dir_t::fwd_inference || (bwd && c.prb.fuse_relu) || c.layout != bnorm_layout_t::blocked
            || !from_memory || c.norm[0].c_tail != c.simd_w || c.norm[0].blocks != 1)
        return;
    bnorm_ker_conf_t k = c.norm[0];
    k.prefetch_next = false;
    k.next_stats = true;
    for (k.ur = bwd ? c.stats[0].ur : f64_ur_max; k.ur >= 1; --k.ur)
        if (bnorm_ker_vregs(k) <= n_vregs_of(c.level)) break;
    if (k.ur < 1) return;
    // The prefetch displacement must fit the kernel's 32 bits past the unroll's last point.
    if ((k.ur + 1) * k.pt_stride * 4 + norm_next_pf_bytes <= INT_MAX) k.pf_next = norm_next_pf_bytes;
    c.fuse_next_stats = true;
    c.norm_next = k;
    c.stats[0].f64_sums = !bwd;
    c.stats[0].ur = k.ur;
}

} // namespace

bool bnorm_whole_units_per_thread(dim_t units, int nthr) {
    const dim_t n = std::max(1, nthr);
    return units % n == 0 || units >= 4 * n;
}

const char *to_string(bnorm_dir_t d) {
    switch (d) {
    case bnorm_dir_t::fwd_inference: return "fwd_inference";
    case bnorm_dir_t::fwd_training: return "fwd_training";
    case bnorm_dir_t::bwd: return "bwd";
    }
    return "?";
}

const char *to_string(bnorm_layout_t l) {
    switch (l) {
    case bnorm_layout_t::blocked: return "blocked";
    case bnorm_layout_t::nspc: return "nspc";
    case bnorm_layout_t::ncsp: return "ncsp";
    }
    return "?";
}

int bnorm_ker_vregs(const bnorm_ker_conf_t &k) {
    const int V = k.c_vecs, U = k.ur;
    // avx2 keeps the tail mask, if the kernel has a tail, in a vector register.
    const bool tail = k.sp_vec ? k.sp_tail > 0 : k.c_tail < k.simd_w;
    const int mask = k.level == isa::avx2 && tail ? 1 : 0;
    using kind = bnorm_ker_conf_t::kind_t;
    switch (k.kind) {
    case kind::fwd_stats: return (k.f64_sums ? 2 * V + 4 * U * V + 2 : 2 * U * V + 4 + 2 * V) + mask;
    case kind::fwd_norm: return 4 * V + 3 + (k.next_stats ? 2 * V + 4 * U * V + 2 : 0) + mask;
    case kind::bwd_stats: return 3 * U * V + V + 4 + mask;
    case kind::bwd_norm: return 4 * V + 4 + (k.next_stats ? 3 * U * V + V + 2 : 0) + mask;
    }
    return 1 << 10;
}

std::string to_string(const bnorm_ker_conf_t &k) {
    const char *names[] = {"fwd_stats", "fwd_norm", "bwd_stats", "bwd_norm"};
    return cat(names[static_cast<int>(k.kind)], ":", to_string(k.level), ":simd_w", k.simd_w, k.sp_vec ? ":sp_vec" : "",
            ":c_vecs", k.c_vecs, ":c_tail", k.c_tail, ":sp_tail", k.sp_tail, ":pt_stride", k.pt_stride, ":ur", k.ur,
            k.mean_lo ? ":mean_lo" : "", k.relu ? ":relu" : "", k.nt_store ? ":nt" : "", k.bwd_full ? ":bwd_full" : "",
            k.prefetch_next ? ":prefetch_next" : "", k.f64_sums ? ":f64_sums" : "", k.next_stats ? ":next_stats" : "",
            k.pf_next ? cat(":pf_next", k.pf_next) : std::string(),
            k.blocks > 1 ? cat(":blocks", k.blocks, ":blk_stride", k.blk_stride) : std::string(), ":vregs",
            bnorm_ker_vregs(k));
}

std::string to_string(const bnorm_conf_t &c) {
    std::string s = cat(to_string(c.prb.dir), ":", to_string(c.level), ":", to_string(c.layout), ":mb", c.mb, "c", c.c,
            "sp", c.sp, ":units", c.n_units, "x", c.unit_c, "c:rows", c.rows, ":row_pts", c.row_pts, ":row_tail",
            c.row_tail, ":stats_chunk", c.stats_chunk, ":norm_chunk", c.norm_chunk, c.nt_store ? ":nt" : "",
            c.cache_reuse ? ":cache_reuse" : "", c.rows_outer ? ":rows_outer" : "",
            c.fuse_next_stats ? ":fuse_next_stats" : "");
    const int nk = c.has_last_ker ? 2 : 1;
    for (int i = 0; i < nk; ++i) {
        if (c.prb.dir != bnorm_dir_t::fwd_inference) s += "\n  " + to_string(c.stats[i]);
        s += "\n  " + to_string(c.norm[i]);
    }
    if (c.fuse_next_stats) s += "\n  " + to_string(c.norm_next);
    return s;
}

status bnorm_init_conf(
        bnorm_conf_t &c, const bnorm_jit_prb_t &prb, isa level, const bnorm_machine_t &m, std::string &why) {
    c = bnorm_conf_t();
    c.prb = prb;
    c.level = level;
    const tensor_desc &d = prb.src;
    if (level != isa::avx512_core && level != isa::avx2) {
        why = cat("isa ", to_string(level), " has no JIT kernels");
        return status::unimplemented;
    }
    if (d.ndims() < 2 || d.dt() != data_type::f32) {
        why = cat("src ", d.str(), " is not an f32 activation with 2 to 5 dims");
        return status::unimplemented;
    }
    if (!layout_of(d.tag(), c.layout, c.blk)) {
        why = cat("layout ", to_string(d.tag()), " has no JIT kernel");
        return status::unimplemented;
    }
    c.simd_w = level == isa::avx512_core && c.blk != 8 ? 16 : 8;
    c.mb = d.dim(0);
    c.c = d.dim(1);
    c.sp = 1;
    for (int i = 2; i < d.ndims(); ++i) c.sp *= d.dim(i);

    const bool bwd = prb.dir == bnorm_dir_t::bwd;
    // Tensors streamed per element: fwd src + dst; bwd src + diff_dst + diff_src (+ dst for relu).
    const long streams = bwd ? 3 + (prb.fuse_relu ? 1 : 0) : 2;
    const dim_t bytes = static_cast<dim_t>(d.size_bytes());
    // The last-level cache a run counts on is its threads' shares of it (llc_bytes_for):
    // cpuinfo's L3 may be a whole host's, shared with other machines. Past half of one thread's
    // share the data comes from memory, for one thread at least. That picks the training
    // statistics' algorithm (fuse_next_stats), so it must not depend on the thread count:
    // results are the same bits for any.
    const bool from_memory = streams * bytes > llc_bytes_for(m, 1) / 2;
    // Streaming stores once the tensors would not stay in the last-level cache, where a regular
    // store first reads the line. One thread: where the data already comes from memory (above).
    // Several threads: past the threads' shares; below that the data stays in L3, whose
    // bandwidth grows with the cores, while streaming stores wait on memory (docs/tuning.md,
    // "bnorm streaming stores"). The stores do not change the arithmetic.
    const bool big = m.nthr > 1 ? streams * bytes > llc_bytes_for(m, m.nthr) : from_memory;
    switch (c.layout) {
    case bnorm_layout_t::blocked: {
        const int blocks = blocks_per_unit(c, m, from_memory || big, static_cast<int>(streams - 1));
        c.n_units = div_up(c.c, c.blk * blocks);
        c.unit_c = c.blk * blocks;
        c.unit_stride = c.sp * c.unit_c;
        c.rows = c.mb;
        c.row_stride = div_up(c.c, c.blk) * c.sp * c.blk;
        c.row_pts = c.sp;
        c.nt_store = big;
        break;
    }
    case bnorm_layout_t::nspc: {
        const int max_vecs = level == isa::avx512_core ? max_unit_vecs_avx512 : max_unit_vecs_avx2;
        c.unit_c = std::min<dim_t>(c.c, max_vecs * c.simd_w);
        c.n_units = div_up(c.c, c.unit_c);
        c.unit_stride = c.unit_c;
        c.rows = 1;
        c.row_stride = 0;
        c.row_pts = c.mb * c.sp;
        c.nt_store = big && c.c % c.simd_w == 0;
        break;
    }
    case bnorm_layout_t::ncsp: {
        c.rows = c.mb;
        c.row_stride = c.c * c.sp;
        c.row_pts = c.sp / c.simd_w;
        c.row_tail = static_cast<int>(c.sp % c.simd_w);
        c.nt_store = big && c.row_tail == 0;
        // No grouping with streaming stores, where the training normalization prefetches one
        // block's stream (prefetch_next); ncsp has no fused statistics, so units of data from
        // memory may group channels too.
        const int blocks = blocks_per_unit(c, m, c.nt_store, static_cast<int>(streams - 1));
        c.n_units = div_up(c.c, blocks);
        c.unit_c = blocks;
        c.unit_stride = c.sp * blocks;
        break;
    }
    }
    // A point's bytes in one block's stream (a vector of one channel's row with ncsp), which
    // sizes the chunks.
    dim_t pt_bytes = rnd_up(c.unit_c, c.simd_w) * 4;
    if (c.layout == bnorm_layout_t::ncsp) pt_bytes = c.simd_w * 4;
    if (c.layout == bnorm_layout_t::blocked) pt_bytes = c.blk * 4;
    const long stats_bytes = std::clamp(m.l2_bytes / 8, stats_chunk_bytes_min, stats_chunk_bytes_max);
    c.stats_chunk = std::max<dim_t>(1, stats_bytes / pt_bytes);
    c.norm_chunk = std::max<dim_t>(1, norm_chunk_bytes / pt_bytes);
    dim_t blocks = 1; // of a unit: each makes a stream of pt_bytes a point
    if (c.layout == bnorm_layout_t::ncsp) blocks = c.unit_c;
    if (c.layout == bnorm_layout_t::blocked) blocks = c.unit_c / c.blk;
    const dim_t unit_bytes = c.rows * c.row_pts * pt_bytes * blocks * (bwd ? 2 : 1);
    c.cache_reuse = unit_bytes <= m.l2_bytes + llc_bytes_for(m, m.nthr) / (2 * std::max(1, m.nthr));
    // Unit by unit, a stream from memory breaks at every row (a block's plane, or a channel's);
    // rows outer, inference reads the tensor front to back (docs/tuning.md, "bnorm inference in
    // memory order"). Inference alone: the other directions come back to a unit after its
    // statistics. Blocked units from memory are one block already; ncsp ones surely only with
    // streaming stores, else where the re-read bound of blocks_per_unit leaves one channel.
    c.rows_outer = prb.dir == bnorm_dir_t::fwd_inference && c.rows > 1 && blocks == 1 && (from_memory || big);

    if (!make_kers(c, m, c.unit_c, c.stats[0], c.norm[0], why)) return status::unimplemented;
    const dim_t last_c = c.c - (c.n_units - 1) * c.unit_c;
    c.has_last_ker = c.layout == bnorm_layout_t::nspc && last_c != c.unit_c;
    if (c.has_last_ker && !make_kers(c, m, last_c, c.stats[1], c.norm[1], why)) return status::unimplemented;
    fuse_next_stats(c, from_memory);
    return status::success;
}

} // namespace blockdnn::impl
