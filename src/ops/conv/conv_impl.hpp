// SPDX-License-Identifier: Apache-2.0
// What a forward-convolution implementation sees: the validated problem, its run-time
// arguments, the kernel interface and the dispatch table (src/ops/conv/conv_impl_list.cpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/conv.hpp"
#include "core/dispatch.hpp"

namespace blockdnn::impl {

/// A validated problem: the desc, the tensor descriptors the tags give, and the post-ops.
struct conv_prb_t {
    conv_desc desc;
    tensor_desc src, wei, bia, dst; // bia.ndims() == 0 without bias
    bool grouped_wei = false;       // wei has a leading g dim (goihw family)
    post_ops po;
    std::string str() const;        // "src:nchw wei:oihw dst:nchw mb2ic3ih5oc4oh5kh3ph1 post_ops:..."
};

/// Run-time arguments; bia is null without bias.
struct conv_args_t {
    const float *src, *wei, *bia;
    float *dst;
};

/// One created implementation. Creation does all one-time work (JIT, weight reorders,
/// tables); execute() is const and must be safe to call concurrently.
class conv_impl_t {
public:
    virtual ~conv_impl_t() = default;
    virtual void execute(const conv_args_t &args) const = 0;
    /// The weights layout execute() reads without reordering, or undef if any layout is as
    /// good (an op given weights at creation stores them in this layout).
    virtual format_tag preferred_wei_tag() const { return format_tag::undef; }
};

/// Table rows: `accept` says whether the implementation takes the problem (with a reason if
/// not); `run` creates it. JIT entries go before "ref", best first.
using conv_create_fn_t = std::unique_ptr<conv_impl_t> (*)(const conv_prb_t &prb);
using conv_impl_entry_t = impl_entry_t<conv_prb_t, conv_create_fn_t>;

std::span<const conv_impl_entry_t> conv_fwd_impls();

/// The reference (src/ops/conv/conv_ref.cpp): takes every problem, every layout.
std::unique_ptr<conv_impl_t> create_conv_fwd_ref(const conv_prb_t &prb);

} // namespace blockdnn::impl
