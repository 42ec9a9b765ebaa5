// SPDX-License-Identifier: Apache-2.0
// The JIT batch normalization driver: builds the kernels init_conf asks for and runs them over
// the tensor (units of channels x rows x chunks of points), threading through parallel_for and
// combining per-chunk statistics in a fixed order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ops/bnorm/bnorm_conf.hpp"
#include "ops/bnorm/bnorm_impl.hpp"
#include "ops/bnorm/bnorm_jit_stats.hpp"
#include "ops/bnorm/jit_bnorm_kernel.hpp"
#include "jit/jit_kernel_cache.hpp"

namespace blockdnn::impl {

/// How threads share the work. by_unit: each thread takes whole units (statistics and
/// normalization of a unit on one thread, no synchronization); within_unit: units one after
/// the other, each unit's chunks split across threads. Both give the same bits.
enum class bnorm_thr_mode_t { automatic, by_unit, within_unit };

/// The machine model (machine_model()) and parallel_for's thread count, as the ops use them.
bnorm_machine_t bnorm_this_machine();

/// The JIT implementation of both directions (the forward and backward tables' jit rows).
class bnorm_jit_t final : public bnorm_impl_t, public bnorm_bwd_impl_t {
public:
    /// Runs init_conf and generates the kernels. unimplemented / runtime_error with `why`.
    static status create(std::unique_ptr<bnorm_jit_t> &out, const bnorm_jit_prb_t &prb, isa level,
            const bnorm_machine_t &m, std::string &why);

    /// Runs the op; mem must match the problem (the caller validated it).
    void execute(const bnorm_args_t &mem) const override { execute(mem, bnorm_thr_mode_t::automatic); }
    void execute(const bnorm_bwd_args_t &mem) const override { execute(mem, bnorm_thr_mode_t::automatic); }
    /// The same, with the threads sharing the work as `mode` says (tests compare the modes).
    /// Each runs only for a driver of its direction (the table creates one per problem).
    void execute(const bnorm_args_t &mem, bnorm_thr_mode_t mode) const;
    void execute(const bnorm_bwd_args_t &mem, bnorm_thr_mode_t mode) const;

    const bnorm_conf_t &conf() const { return c_; }
    /// The conf in words (to_string), for bnorm_fwd::impl_info() and bnorm_bwd::impl_info().
    std::string info() const override;
    /// Every generated kernel (for the ABI test): statistics (not for inference)
    /// and normalization, for a full and a last unit, regular and streaming stores.
    std::vector<kernel_ptr> kernels() const;

    static constexpr int max_lanes = bnorm_max_lanes;

private:
    struct chunk_t {
        dim_t p0 = 0, np = 0; // first point, points
        bool tail = false;    // sp_vec: the row's partial vector ends this chunk
        double count = 0;     // values per lane (sp_vec: in the whole call)
    };

    // The chunks of one row (the same for every row and unit), computed at creation.
    std::vector<chunk_t> make_chunks(dim_t max_pts) const;
    // Calls fn(row, chunk) for the calls [i0, i1) of a unit, call i = row * chunks + chunk.
    template <typename F>
    void for_calls(const std::vector<chunk_t> &chunks, dim_t i0, dim_t i1, F &&fn) const {
        const dim_t nch = static_cast<dim_t>(chunks.size());
        dim_t r = i0 / nch, j = i0 % nch;
        for (dim_t i = i0; i < i1; ++i) {
            fn(r, chunks[j]);
            if (++j == nch) j = 0, ++r;
        }
    }
    int ker_idx(dim_t u) const { return c_.has_last_ker && u == c_.n_units - 1 ? 1 : 0; }
    // Blocks of unit u (channel blocks, or ncsp channels; 1 for nspc): the last may have fewer.
    dim_t blocks_of(dim_t u) const;
    int out_stride(dim_t u) const; // lanes per statistics vector row of unit u
    int stat_lanes(dim_t u) const; // lanes carrying distinct channels (one a channel with sp_vec)
    dim_t offset(dim_t u, dim_t r, dim_t p) const;
    bool use_by_unit(bnorm_thr_mode_t mode) const;
    bool nt_ok(const float *p) const;

    void fwd_inference(const bnorm_args_t &mem, bnorm_thr_mode_t mode) const;
    void fwd_training(const bnorm_args_t &mem, bnorm_thr_mode_t mode) const;
    void backward(const bnorm_bwd_args_t &mem, bnorm_thr_mode_t mode) const;

    void inference_prm(dim_t u, const bnorm_args_t &mem, float *prm) const;
    // The kernel calls and their schedules, for the forward's or the backward's memory.
    template <typename args_t>
    void stats_call(dim_t u, dim_t r, const chunk_t &ch, const args_t &mem, const float *prm, float *out) const;
    // pf_u: the unit whose data the call prefetches (prefetch_next kernels), u itself if none.
    template <typename args_t>
    void norm_call(dim_t u, dim_t r, const chunk_t &ch, const args_t &mem, const float *prm, bool nt, dim_t pf_u) const;
    template <typename args_t>
    void norm_unit_rows(dim_t u, dim_t i0, dim_t i1, const args_t &mem, const float *prm, bool nt, dim_t pf_u) const;
    // within_unit: unit u's n statistics calls across the threads, call i's results at
    // outs + i * out_sz; then its normalization calls (n of them), prefetching unit u + 1.
    template <typename args_t>
    void stats_calls_parallel(dim_t u, dim_t n, const args_t &mem, const float *prm, float *outs, int out_sz) const;
    template <typename args_t>
    void norm_calls_parallel(dim_t u, dim_t n, const args_t &mem, const float *prm, bool nt) const;
    // within_unit, unit after unit: start(u, prm) (prm is the statistics kernel's: backward's
    // mean), the statistics calls across the threads, fold(u, out, chunk) for each call's
    // results in call order, finish(u, prm) making the normalization's prm, then the
    // normalization calls across the threads.
    template <typename args_t, typename Start, typename Fold, typename Finish>
    void units_in_turn(const args_t &mem, dim_t calls_s, dim_t calls_n, int out_sz, bool nt, Start &&start, Fold &&fold,
            Finish &&finish) const;
    // The statistics of unit u into acc (fwd_stats, call by call).
    void stats_unit(dim_t u, const bnorm_args_t &mem, bnorm_moments_t &acc) const;
    // fuse_next_stats: normalizes unit u (prm) and gathers unit u + 1's statistics into acc.
    void norm_unit_next_stats(dim_t u, const bnorm_args_t &mem, const float *prm, bool nt, bnorm_moments_t &acc) const;
    // Backward's: normalizes unit u (prm, whose slot 4 it fills with u + 1's mean) and gathers
    // unit u + 1's sums into sums (reset first).
    void bwd_norm_unit_next_stats(
            dim_t u, const bnorm_bwd_args_t &mem, float *prm, bool nt, bnorm_bwd_sums_t &sums) const;
    // Statistics: fold one call's results (out) into the unit's accumulators, in call order;
    // then turn them into the norm kernel's prm (training also writes mean and variance,
    // backward diff_scale and diff_shift).
    void fold_fwd(dim_t u, const float *out, double count, bnorm_moments_t &acc) const;
    void finalize_fwd(dim_t u, const bnorm_moments_t &acc, const bnorm_args_t &mem, float *prm) const;
    void fold_bwd(dim_t u, const float *out, bnorm_bwd_sums_t &sums) const;
    void finalize_bwd(dim_t u, const bnorm_bwd_sums_t &sums, const bnorm_bwd_args_t &mem, float *prm) const;
    void bwd_mean_prm(dim_t u, const bnorm_bwd_args_t &mem, float *prm) const;

    bnorm_conf_t c_;
    const bnorm_lane_fns_t *lane_ = nullptr;
    std::vector<chunk_t> stats_chunks_, norm_chunks_;
    kernel_ptr stats_[2];
    kernel_ptr norm_[2][2];   // [full / last unit][regular / streaming stores]
    kernel_ptr norm_next_[2]; // fuse_next_stats: [regular / streaming stores]
};

} // namespace blockdnn::impl
