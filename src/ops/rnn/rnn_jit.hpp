// SPDX-License-Identifier: Apache-2.0
// RNN forward on the brgemm microkernel and the fused JIT cell. Per layer and direction:
//   gates[t][n][:] = x_t W                       one GEMM over all T * mb rows (gemm_jit_t)
//   for each step t (in the direction's order):
//     for each panel p of hb hidden units (all gates of those units):
//       gates[t][:][p] += h_{t-1} U[p]           brgemm, M = mb, N = gates x hb, K = dhc
//                                                (in calls of call_n columns)
//       cell(p): bias, nonlinearities, c and h   fused JIT cell, h_t written in place
// (Original GRU runs the step in two parts: u, r and r * h first, then U_o (r * h) and h.)
// Weights are packed once, into panels whose columns interleave the gates of hb hidden units,
// so one panel's GEMM output is exactly what its cell reads, still in L1/L2.
// Threads: the layer GEMM splits over row chunks and panels; a step's panels are work units
// taken in order by the participating threads, a unit waiting only for the previous step (or
// part) to complete, so the split never depends on timing and neither do the results. Tiny
// steps run on the calling thread with no synchronization at all.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/aligned_vector.hpp"
#include "jit/gemm/gemm_jit.hpp"
#include "jit/brgemm/jit_brgemm_kernel.hpp"
#include "ops/rnn/jit_rnn_cell_fwd_kernel.hpp"
#include "ops/rnn/rnn_impl.hpp"

namespace blockdnn::impl {

/// Blocking of the engine (decided by init_conf_rnn_fwd_jit; pure given machine_model()).
struct rnn_fwd_jit_conf_t {
    isa level = isa::avx512_core;
    int simd_w = 0;
    int hb = 0;                // hidden units per panel
    std::int64_t n_panels = 0; // div_up(dhc, hb)
    std::int64_t pw = 0;       // panel width: gates x hb
    std::int64_t Np = 0;       // gates row: n_panels x pw
    int n_parts = 1;           // 2 for original GRU
    // Part i of the step GEMM covers part_n[i] columns of the panel from part_col(i) (part 1
    // the ones after part 0's), in calls of call_n[i] columns by step_brgemm[i] (N = LDB =
    // call_n[i]). U is packed in blocks of the calls' columns, K x call_n[i] each, in column
    // order, so the block at column j of a panel starts j x K floats in.
    std::int64_t part_n[2] = {0, 0};
    std::int64_t call_n[2] = {0, 0};
    brgemm_conf_t step_brgemm[2];
    int max_threads = 1; // threads for the recurrent steps (1: caller's thread only)

    std::int64_t part_col(int part) const { return part == 0 ? 0 : part_n[0]; }
};

/// Threading of one engine.
struct rnn_fwd_jit_threads_t {
    int nthr = 0;                     ///< threads at most; 0: parallel_max_threads()
    double step_split_min_flops = -1; ///< split steps above this many FLOPs; < 0: the default
};

/// Picks the panel size and the step GEMM's calls for the problem and decides whether steps
/// are worth splitting over the threads. Pure given machine_model(). unimplemented with the
/// reason in `why` for an ISA without kernels.
status init_conf_rnn_fwd_jit(
        rnn_fwd_jit_conf_t &c, const rnn_prb_t &p, isa level, const rnn_fwd_jit_threads_t &thr, std::string &why);

std::string to_string(const rnn_fwd_jit_conf_t &c);

class rnn_fwd_jit_t final : public rnn_impl_t {
public:
    /// Plans the problem (every init_conf, once) and JITs every kernel; unimplemented with
    /// the reason in `why` if an init_conf refuses it.
    static status create(std::unique_ptr<rnn_fwd_jit_t> &out, const rnn_prb_t &p, isa level, std::string &why,
            const rnn_fwd_jit_threads_t &thr = {});

    /// Packs weights_layer, weights_iter and bias (null: zeros) into the kernels' layout, once;
    /// executes given no weights use them.
    void take_weights(const rnn_args_t &weights) override;

    /// Runs the stack: with mem's weights (packed for this call) if it has them, else with the
    /// weights of take_weights(). Safe to call from several threads at once.
    void execute(const rnn_args_t &mem) const override;

    const rnn_prb_t &prb() const { return p_; }
    const rnn_fwd_jit_conf_t &conf() const { return c_; }
    /// The problem, the blocking and every kernel's conf, one per line (info(), so rnn_fwd::impl_info()).
    std::string str() const;
    /// str(), for rnn_fwd::impl_info().
    std::string info() const override { return str(); }

private:
    rnn_fwd_jit_t() = default;

    // The cell of a part, for the last panel (a narrower one when dhc has a tail) or the others.
    const rnn_cell_kernel_t &cell_kernel(int part, bool last_panel) const;

    // Weights in the kernels' layout, per (layer, direction).
    struct packed_t {
        std::vector<aligned_vector<float>> wl, wi, bias;
    };
    void pack(packed_t &pk, const float *wei_layer, const float *wei_iter, const float *bias) const;
    // Execution scratch; one set lives in the object and serves one execute at a time.
    struct scratch_t {
        aligned_vector<float> gates, gates_h, states[4], src_tnc, c, rh, zeros;
        packed_t weights; // weights given to execute()
    };
    void alloc_scratch(scratch_t &s) const;
    // One layer of one direction: the input GEMM, then the steps.
    void run_layer(const rnn_args_t &mem, const packed_t &pk, scratch_t &s, std::int64_t lay, std::int64_t dir,
            const float *src, float *out) const;
    // All steps of one layer and direction: sequentially, or as units over threads.
    struct pass_t;
    void run_steps(const pass_t &ps) const;
    void run_unit(const pass_t &ps, std::int64_t step, int part, std::int64_t panel) const;
    void copy_out(const rnn_args_t &mem, const float *const outs[2]) const;

    rnn_prb_t p_;
    rnn_fwd_jit_conf_t c_;
    int nthr_ = 1; // threads for the layer GEMMs
    bool src_ntc_ = false, dst_ntc_ = false, wl_ldgoi_ = false, wi_ldgoi_ = false;
    std::unique_ptr<gemm_jit_t> gemm_;
    std::unique_ptr<brgemm_kernel_t> iter_ker_[2];
    std::unique_ptr<rnn_cell_kernel_t> cell_ker_[2][2]; // [part][last panel]
    packed_t packed_;
    mutable std::mutex scratch_mutex_;
    mutable scratch_t scratch_;
};

/// The create of a table row (rnn.cpp): rnn_fwd_jit_t::create on `level`, so the JIT conf is
/// computed once per creation.
template <isa level>
status create_rnn_fwd_jit(const rnn_prb_t &p, std::unique_ptr<rnn_impl_t> &out, std::string &why);

} // namespace blockdnn::impl
