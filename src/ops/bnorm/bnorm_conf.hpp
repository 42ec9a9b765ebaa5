// SPDX-License-Identifier: Apache-2.0
// Batch normalization JIT configuration: the problem as the JIT path sees it, the blocking
// init_conf decides (units of channels, chunks of points, unrolling, streaming stores) and the
// per-kernel parameters. Plain data, printable; init_conf is pure (the machine comes in as an
// argument; no JIT).
#pragma once

#include <string>

#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"
#include "blockdnn/tensor.hpp"
#include "core/machine_model.hpp"

namespace blockdnn::impl {

/// Which computation: forward with given statistics, forward computing batch statistics, or
/// backward (diff_src and, with scale/shift, diff_scale/diff_shift).
enum class bnorm_dir_t { fwd_inference, fwd_training, bwd };
const char *to_string(bnorm_dir_t d);

/// How a layout is walked. blocked: nC[d][h]w{8,16}c, a point (spatial position) holds one
/// channel block; nspc: n[d][h]wc and nc, a point holds all channels; ncsp: nc[d][h]w, each
/// channel's spatial row is contiguous, so vectors run along spatial.
enum class bnorm_layout_t { blocked, nspc, ncsp };
const char *to_string(bnorm_layout_t l);

/// The problem. src, dst, diff_dst and diff_src (and dst read by backward with fuse_relu) all
/// have the descriptor `src`; per-channel tensors are c floats.
struct bnorm_jit_prb_t {
    bnorm_dir_t dir = bnorm_dir_t::fwd_training;
    tensor_desc src;
    float eps = 1e-5f;
    bool use_scale = false, use_shift = false, fuse_relu = false;
    bool global_stats = false; ///< bwd: mean and variance are fixed (inference form)
};

/// One kernel. A call walks n_pts points from its pointers; a point is c_vecs vectors
/// (channels) at consecutive addresses, and points are pt_stride floats apart. With sp_vec
/// (ncsp) a point is one vector of one channel's spatial row and pt_stride is simd_w.
struct bnorm_ker_conf_t {
    enum class kind_t {
        fwd_stats, ///< per-call shift, scale and shifted sums (see jit_bnorm_fwd_stats_kernel.cpp)
        fwd_norm,  ///< dst = ((src - mean_hi) - mean_lo) * alpha + beta [relu]
        bwd_stats, ///< per-call sums of dy, dy (x - mean) and (x - mean)
        bwd_norm,  ///< diff_src = A dy + B (x - mean) + C
    };
    kind_t kind = kind_t::fwd_norm;
    isa level = isa::avx512_core;
    int simd_w = 16;
    bool sp_vec = false;
    int c_vecs = 1;  ///< vectors per point (1 with sp_vec)
    int c_tail = 16; ///< valid lanes of a point's last vector (simd_w: no tail)
    int sp_tail = 0; ///< sp_vec: valid lanes of a row's last vector (0: none)
    dim_t pt_stride = 16;
    int ur = 1;            ///< points per unrolled step
    bool mean_lo = false;  ///< fwd_norm: the mean is a float pair (hi, lo) (training)
    bool relu = false;     ///< fwd_norm: max(0, y); bwd: diff_dst masked by dst > 0
    bool nt_store = false; ///< fwd_norm, bwd_norm: non-temporal stores of full vectors
    bool bwd_full = false; ///< bwd: training form (dx through the batch statistics)
    /// fwd_norm (training), bwd_norm: prefetch the next unit's src (and diff_dst) at the same
    /// points, so its statistics pass finds them in cache while this pass streams its stores.
    bool prefetch_next = false;
    /// fwd_stats: one pass with sums in double (out = [K, S1, S2] as doubles, see
    /// jit_bnorm_fwd_stats_kernel.cpp) instead of two passes in float.
    bool f64_sums = false;
    /// fwd_norm (training): also the f64_sums statistics of the next unit's src at the same
    /// points (pf_src), to out, with fwd_stats' unroll (ur) and arithmetic: the same bits.
    /// bwd_norm: also bwd_stats' sums of the next unit (pf_src, pf_ddst; its mean at prm
    /// slot 4), to out, with bwd_stats' unroll and arithmetic.
    bool next_stats = false;
    /// next_stats: prefetch the next unit's src (and backward's diff_dst) this many bytes
    /// ahead of each point into L1 (0: none), the streams that come from memory.
    int pf_next = 0;
    /// Channel blocks a unit may hold: c_vecs vectors each on blocked layouts, one channel
    /// (its spatial row) with sp_vec. A call repeats its work for its n_blk (at most `blocks`)
    /// blocks, blk_stride floats apart, each exactly as a call of its own; prm and out rows
    /// are then `blocks` blocks' lanes wide, block b's from lane b * c_vecs * simd_w, or lane
    /// b with sp_vec (one scalar a channel). Only without prefetch_next, next_stats and
    /// f64_sums (init_conf), which assume one block.
    int blocks = 1;
    dim_t blk_stride = 0;
};
std::string to_string(const bnorm_ker_conf_t &k);

/// Vector registers a kernel with this conf uses (init_conf keeps it within the ISA's budget).
int bnorm_ker_vregs(const bnorm_ker_conf_t &k);

/// The whole JIT batch normalization: how the driver splits the tensor and which kernels run.
///
/// Channels are split into units (one kernel call covers one unit's channels at a range of
/// points): one or more channel blocks for blocked layouts and channels for ncsp (several
/// where a block's data is small, so that the driver's work per unit is spread over more
/// data), up to max_unit_vecs vectors of channels for nspc. For each unit the (mb, points)
/// plane is split into chunks, each one kernel call; chunking depends only on the shape (a
/// block's points, however many blocks a unit has), so statistics combined chunk by chunk in
/// a fixed order give the same bits for any thread count.
struct bnorm_conf_t {
    bnorm_jit_prb_t prb;
    isa level = isa::avx512_core;
    int simd_w = 16;
    bnorm_layout_t layout = bnorm_layout_t::blocked;

    dim_t mb = 0, c = 0, sp = 0; ///< from src; sp = id * ih * iw (1 for nc)
    int blk = 0;                 ///< blocked: 8 or 16

    // Units and the memory walk: element offset of (unit u, row r, point p) is
    // u * unit_stride + r * row_stride + p * pt_stride (pt_stride in the kernel confs).
    dim_t n_units = 0;
    dim_t unit_c = 0; ///< channels of a full unit
    dim_t unit_stride = 0, row_stride = 0;
    dim_t rows = 0;    ///< rows per unit: mb (blocked, ncsp) or 1 (nspc: mb and space merge)
    dim_t row_pts = 0; ///< points per row: sp (blocked), mb * sp (nspc), sp / simd_w (ncsp)
    int row_tail = 0;  ///< ncsp: lanes of each row's last partial vector (0: none)

    dim_t stats_chunk = 0; ///< points per statistics call (two-pass: pass 2 re-reads them from L2)
    dim_t norm_chunk = 0;  ///< points per normalization call (the fused path uses stats_chunk's calls)

    bool nt_store = false;    ///< streaming stores for dst / diff_src (tensor exceeds the cache)
    bool cache_reuse = false; ///< one unit's data fits in a thread's cache share (pass 2 hits)
    /// Inference walks its calls row by row, each row's units in turn: the tensor's memory
    /// order, where unit by unit the reads come in runs a row_stride apart (blocked and ncsp
    /// layouts). Set where the tensors stream from memory and a unit is one block, so the
    /// parameters the driver sets up again as the unit changes are a block's.
    bool rows_outer = false;

    /// Kernels for a full unit and, when the last unit is narrower (nspc channel tail), for
    /// the last one. Index [0] full, [1] last; has_last_ker says whether [1] is used.
    bnorm_ker_conf_t stats[2], norm[2];
    bool has_last_ker = false;

    /// Training on blocked layouts whose tensors exceed half the L3 (the data comes from
    /// memory; the rule ignores the thread count, as the results must): the statistics are one
    /// pass with sums in double
    /// (stats[0].f64_sums), and a thread that owns units u and u + 1 normalizes u with
    /// norm_next, which reads u + 1 for its statistics in the same loop. Each element is then
    /// read twice, first from memory, then from L3 if the unit stayed there (a unit of
    /// mb16ic256ih56 is 3.2 MB, more than L2); the unfused path reads it three times (its two
    /// statistics passes, then the normalization).
    /// Backward likewise (without relu): norm_next computes u's diff_src while it sums u + 1,
    /// stats[0] taking its unroll. The reads are as many as unfused; the next unit's, from
    /// memory, overlap the re-reads and the stores of this one.
    bool fuse_next_stats = false;
    bnorm_ker_conf_t norm_next;
};
std::string to_string(const bnorm_conf_t &c);

/// What init_conf knows about the machine: the machine model and the threads the work splits
/// over. Passed in so init_conf stays pure: a default one is the reference machine (fixed
/// values, for tests), bnorm_this_machine() (bnorm_jit.hpp) is machine_model() and the thread
/// budget.
struct bnorm_machine_t : machine_model_t {
    int nthr = 1;
};

/// True if `units` share out as whole units over nthr threads: evenly, or four or more each.
/// The driver then gives each thread whole units (by_unit), and init_conf groups channel
/// blocks into units only as far as this still holds.
bool bnorm_whole_units_per_thread(dim_t units, int nthr);

/// Fills `c` for `prb` on `level` (avx2 or avx512_core). Returns unimplemented with the reason
/// in `why` when the JIT path cannot take the problem (layout, data type, sizes).
status bnorm_init_conf(
        bnorm_conf_t &c, const bnorm_jit_prb_t &prb, isa level, const bnorm_machine_t &m, std::string &why);

} // namespace blockdnn::impl
