// SPDX-License-Identifier: Apache-2.0
// Driver of the JIT forward convolution: owns the generated kernel and the loops around it
// (minibatch, groups, oc blocks, output rows, ic chunks, per-row kd/kh tap ranges) and splits
// them over threads through parallel_for.
#pragma once

#include <memory>
#include <string>

#include "blockdnn/tensor.hpp"
#include "jit/conv/conv_conf.hpp"
#include "jit/conv/jit_conv_base.hpp"
#include "jit/conv/jit_conv_fwd_kernel.hpp"

namespace blockdnn::impl {

class conv_fwd_jit_t {
public:
    /// Decides the blocking for `p` on `level` and generates the kernel. Returns unimplemented
    /// (the kernel does not take this problem) or runtime_error (generation failed), with the
    /// reason in `why`; `out` is set only on success.
    static status create(std::unique_ptr<conv_fwd_jit_t> &out, const conv_prb_t &p, isa level, std::string &why,
            const conv_conf_hint_t &hint = {});

    const conv_conf_t &conf() const { return c_; }
    /// "jit:avx512_core", "jit:avx2".
    std::string impl_name() const;
    /// Bytes of generated code.
    std::size_t code_size() const { return ker_->code_size(); }
    const jit_conv_base_t &kernel() const { return *ker_; }

    /// Weights in conf().wei_tag from weights in any layout of the same family (oihw, goihw,
    /// ...): the reorder users do once, at creation.
    tensor prepare_weights(const tensor &wei) const;

    /// Runs the convolution: src in conf().src_tag, wei in conf().wei_tag, bias (oc floats, or
    /// null), dst in conf().dst_tag (read too when the post-ops hold a sum). The padded channels
    /// of dst are written with zeros. Work is split over parallel_max_threads() parts.
    void execute(const float *src, const float *wei, const float *bia, float *dst) const;

    /// The part ithr of nthr of execute(): the parts together write all of dst exactly once,
    /// and every output is computed the same way whatever nthr is.
    void execute_part(const float *src, const float *wei, const float *bia, float *dst, int ithr, int nthr) const;

private:
    conv_fwd_jit_t() = default;
    void run_item(dim_t item, dim_t icc, const float *src, const float *wei, const float *bia, float *dst) const;

    conv_conf_t c_;
    std::unique_ptr<jit_conv_base_t> ker_;
    void (*fn_)(const conv_fwd_call_args_t *) = nullptr;
    dim_t n_items_ = 0; // (g, oc chunk, mb, od, oh, oc-block group in chunk)
    dim_t n_icc_ = 1;   // ic chunks per reduction
};

} // namespace blockdnn::impl
