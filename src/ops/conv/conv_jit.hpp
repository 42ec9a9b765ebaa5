// SPDX-License-Identifier: Apache-2.0
// Driver of the JIT forward convolutions (direct, first-layer, depthwise): owns the generated
// kernel and the loops around it (minibatch, groups, oc blocks, output rows, ic chunks, the
// per-row kd/kh tap ranges) and splits them over threads through parallel_for.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/verbose.hpp"
#include "ops/conv/conv_impl.hpp"
#include "ops/conv/conv_conf.hpp"
#include "ops/conv/jit_conv_fwd_kernel.hpp"
#include "jit/jit_kernel_cache.hpp"

namespace blockdnn::impl {

class conv_fwd_jit_t final : public conv_impl_t {
public:
    /// init_conf of `kind` on `level` (through its memo, init_conf_conv_fwd_memo, so a shape
    /// created before skips the blocking search), then the kernel, from the process-wide kernel
    /// cache (keyed by the conf, so ops of one shape share it). Returns unimplemented (the kernel
    /// does not take the problem: layouts, groups...) or runtime_error (generation failed),
    /// with the reason in `why`; `out` is set only on success. Weights in another layout than
    /// the kernel's are accepted and reordered by execute(). Layouts left as any are picked
    /// (see prb()) before init_conf.
    static status create(std::unique_ptr<conv_fwd_jit_t> &out, const conv_prb_t &prb, isa level, conv_kernel_kind kind,
            std::string &why, const conv_conf_hint_t &hint = {});

    const conv_conf_t &conf() const { return c_; }
    /// prb with the layouts left as any picked: src and dst this kernel's blocked layout
    /// (nC[d]hw16c on avx512_core, nC[d]hw8c on avx2), or the other's layout where one is
    /// given; for the first-layer kernel a plain src (ic <= 4 and g = 1 only); weights
    /// wei_tag().
    const conv_prb_t &prb() const override { return prb_; }
    /// The kernel of conf(). With conf().src_prefetch_last_group it runs only the calls of
    /// each chunk's last oc-block group, and quiet_kernel() (its copy with the src prefetches
    /// made NOPs, jit_quiet_copy_t) the others; otherwise it runs every call. Either way, with
    /// conf().nb_oc_blocking_tail the last group's calls go to the tail kernel
    /// (kernels_shared().back()), which prefetches as the last group of its chunk.
    const jit_generator_t &kernel() const { return *ker_; }
    /// The twin kernel, its src prefetches NOPs, or null if kernel() runs every call.
    const jit_generator_t *quiet_kernel() const { return ker_quiet_.get(); }
    /// The kernels, shared (with the kernel cache and other ops of the same conf): kernel(),
    /// then quiet_kernel() if there is one, then the last oc-block group's kernel if there is
    /// one (conf().nb_oc_blocking_tail: kernel()'s conf with nb_oc_blocking set to it).
    std::vector<kernel_ptr> kernels_shared() const;
    /// True if execute() reorders the weights (their layout is not the kernel's).
    bool reorders_weights() const { return wei_reorder_; }
    /// The weights layout the kernel reads: conf().wei_tag, or its grouped twin when the
    /// problem's weights have a g dim.
    format_tag wei_tag() const { return wei_tag_; }

    /// Runs the convolution over parallel_max_threads() parts.
    void execute(const conv_args_t &a) const override;
    /// execute() with the weights already in wei_tag(): not reordered, whatever the
    /// problem's weights layout (a caller running several batches on one weights reorder).
    void execute_on_kernel_weights(const conv_args_t &a) const;
    /// The problem's weights `wei` in wei_tag(): `wei` itself, or, if reorders_weights(), a
    /// reorder of them into `holder`, which keeps them for the caller.
    const float *kernel_weights(const float *wei, tensor &holder) const;
    /// to_string(conf()), for conv_fwd::impl_info().
    std::string info() const override { return to_string(c_); }
    format_tag preferred_wei_tag() const override { return wei_tag_; }
    /// The op holds the weights in wei_tag(), so execute() reads them as they are: same conf
    /// and kernels.
    void take_weights(const conv_args_t &weights) override;

    /// Part ithr of nthr of execute(), with weights already in conf().wei_tag. The parts
    /// together write all of dst exactly once, and every output is computed the same way
    /// whatever nthr is, so results do not depend on the thread count.
    /// It runs to its end without waiting on other work (the copies reduced to unit stride
    /// share one buffer per thread on that ground).
    void execute_part(const conv_args_t &a, int ithr, int nthr) const;

    /// The kernel's arguments for work item `item` (< n_items()) and ic chunk `icc`
    /// (< n_ic_chunks()) of a run on `a` (weights in wei_tag(), bias padded to whole blocks).
    /// With conf().rtus, a.src is the dense copy of the item's image that execute_part() makes.
    conv_fwd_call_args_t call_args(dim_t item, dim_t icc, const conv_args_t &a) const;
    dim_t n_items() const { return n_items_; }
    dim_t n_ic_chunks() const { return n_icc_; }
    /// Consecutive items execute_part() runs over each ic chunk in turn when the reduction is
    /// split: one image of one oc chunk with conf().ic_chunks_per_image or conf().image_outer, else
    /// every image's items of one oc-block group. Runs start at item 0.
    dim_t split_run_items() const;

private:
    conv_fwd_jit_t() = default;
    // What an item's call works on: its group, first oc block, image, and first output plane
    // and row; and its oc chunk and place in it, which give ocb.
    struct item_pos_t {
        dim_t g = 0, ocb = 0, n = 0, od = 0, oh = 0;
        dim_t occ = 0, ocbi = 0;
    };
    item_pos_t item_pos(dim_t item) const;
    // p becomes the next item's position: item_pos(item + 1) from item_pos(item), without its
    // divisions (a small call's bookkeeping would otherwise rival its FMAs).
    void next_item(item_pos_t &p) const;
    conv_fwd_call_args_t call_args(const item_pos_t &p, dim_t icc, const conv_args_t &a) const;
    void run_item(const item_pos_t &p, dim_t icc, const conv_args_t &a) const;
    // conf().rtus: copies the src pixels that image n of the user's src convolves into buf
    // (rtus_copy_floats_ floats), dense, in the src layout.
    void rtus_copy(const float *src, dim_t n, float *buf) const;

    conv_prb_t prb_;
    conv_conf_t c_;
    kernel_ptr ker_, ker_quiet_, ker_tail_;
    void (*fn_)(const conv_fwd_call_args_t *) = nullptr;
    void (*fn_quiet_)(const conv_fwd_call_args_t *) = nullptr;
    // conf().nb_oc_blocking_tail: the last oc-block group's kernel; else null.
    void (*fn_tail_)(const conv_fwd_call_args_t *) = nullptr;
    format_tag wei_tag_ = format_tag::undef; // the kernel's weights layout, with the user's g dim
    bool wei_reorder_ = false;
    // (g, oc chunk, mb, od, oh block, oc-block group in chunk); with conf().image_outer the
    // image before the oc chunk, and before the group too with conf().groups_inside_image
    dim_t n_items_ = 0;
    dim_t n_occ_ = 1; // oc chunks per group
    dim_t n_icc_ = 1; // ic chunks per reduction
    // conf().rtus: the user's src strides in floats (image, channel plane, depth, row, pixel),
    // the planes (blocked: nb_ic; channels-last: 1) and floats per pixel of a plane (ic_block;
    // ic), and the floats of one image's copy.
    dim_t rtus_src_n_stride_ = 0, rtus_src_c_stride_ = 0, rtus_src_d_stride_ = 0, rtus_src_h_stride_ = 0,
          rtus_src_w_stride_ = 0;
    dim_t rtus_planes_ = 0, rtus_pixel_floats_ = 0, rtus_copy_floats_ = 0;
};

/// True if the kernel of `kind` surely refuses prb, by a check far cheaper than create():
/// depthwise without g = ic = oc, first-layer with a src other than plain (or, for src any,
/// without g = 1 and few channels). False says nothing: create() decides.
bool conv_fwd_jit_refuses(const conv_prb_t &prb, conv_kernel_kind kind);

/// The create of a table row (src/ops/conv/conv_fwd.cpp): conv_fwd_jit_t::create of
/// `kind` on `level`, so init_conf runs once; unimplemented if that init_conf refuses prb.
/// A row that conv_fwd_jit_refuses() is skipped without create(), unless BLOCKDNN_VERBOSE
/// prints the reasons, which only create() words.
template <isa level, conv_kernel_kind kind>
status create_conv_fwd_jit(const conv_prb_t &prb, std::unique_ptr<conv_impl_t> &out, std::string &why) {
    if (verbose_level() < 2 && conv_fwd_jit_refuses(prb, kind)) return status::unimplemented;
    std::unique_ptr<conv_fwd_jit_t> k;
    const status s = conv_fwd_jit_t::create(k, prb, level, kind, why);
    if (s == status::success) out = std::move(k);
    return s;
}

} // namespace blockdnn::impl
