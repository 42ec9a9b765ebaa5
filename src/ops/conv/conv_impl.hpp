// SPDX-License-Identifier: Apache-2.0
// What a forward-convolution implementation sees: the validated problem, its run-time
// arguments, the kernel interface and the table (src/ops/conv/conv_fwd.cpp; the contract
// is ops/op_table.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/conv.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

/// A validated problem: the desc, the tensor descriptors the tags give, and the post-ops.
/// A layout created as format_tag::any has its `*_any` flag set and an empty descriptor: the
/// table row that takes the problem picks it (with_layouts) and its impl's prb() answers it.
struct conv_prb_t {
    conv_desc desc;
    tensor_desc src, wei, bia, dst; // bia.ndims() == 0 without bias
    bool grouped_wei = false;       // wei has a leading g dim (goihw family; with any: g > 1)
    bool src_any = false, wei_any = false, dst_any = false;
    bool wei_held = false; // the op is created with its weights: take_weights() before any execute()
    post_ops po;
    bool any() const { return src_any || wei_any || dst_any; }
    std::string str() const; // "src:nchw wei:oihw dst:nchw mb2ic3ih5oc4oh5kh3ph1 post_ops:..."
};

/// prb with its `any` layouts set: each of src, wei, dst that is any takes the tag given for
/// it (which must fit the problem's dims); the others keep theirs, and the given tag is
/// ignored. Throws as tensor_desc does, naming the role.
conv_prb_t with_layouts(const conv_prb_t &prb, format_tag src, format_tag wei, format_tag dst);

/// The plain activation layout of a problem: nc[d]hw (ncw for 1-D); its plain weights are
/// plain_weights_tag's (tensor/layout.hpp). The reference takes them for any.
format_tag conv_plain_act_tag(int ndims);

/// Run-time arguments; bia is null without bias.
struct conv_args_t {
    const float *src, *wei, *bia;
    float *dst;
};

/// One created implementation. Creation does all one-time work (JIT, weight reorders,
/// tables); execute() is const and must be safe to call concurrently.
class conv_impl_t : public impl_t<conv_args_t> {
public:
    /// The problem it runs: the one it was created for, with any `any` layout picked.
    virtual const conv_prb_t &prb() const = 0;
    /// The weights layout execute() reads without reordering, or undef if any layout is as
    /// good: an op given weights at creation holds them in this layout and passes them to
    /// take_weights().
    virtual format_tag preferred_wei_tag() const { return format_tag::undef; }
};

/// Table rows, best first: JIT rows before "ref". Each row's create runs its init_conf once.
using conv_row_t = op_row_t<conv_prb_t, conv_impl_t>;

std::span<const conv_row_t> conv_fwd_impls();

/// Unit-stride 1x1 convolutions without padding or groups, on channels-last src and dst and
/// oi-order weights (oihw...) held by the op, as one GEMM (src/ops/conv/conv_gemm.cpp), with
/// bias; post-ops: none, a sum, a relu (alpha 0), or a sum then a relu. unimplemented, with
/// the reason in `why`, for any other problem (a layout left as any, weights given per call)
/// and for too few output pixels (mb * od * oh * ow) or output channels.
template <isa level>
status create_conv_fwd_gemm_1x1(const conv_prb_t &prb, std::unique_ptr<conv_impl_t> &out, std::string &why);

/// Convolutions with plain src or dst (nc[d]hw; one left as any takes the other's) that no
/// earlier row reads as they lie (src/ops/conv/conv_plain.cpp): the depthwise, first-layer or
/// direct kernel of `level` with activation layouts of its own, the plain ones reordered into
/// them (src, and dst for a sum post-op) and dst back, a pass of images at a time, through
/// per-thread buffers kept between calls; with one pixel per image, the plain tensors read in
/// place as channels-last ones where a kernel takes those. src and dst given in two other
/// layouts: one of them reordered, the one of fewer bytes where a kernel takes the other as
/// given. unimplemented, with the reasons in `why`, if neither is plain and they share a
/// layout, or no kernel takes it.
template <isa level>
status create_conv_fwd_plain(const conv_prb_t &prb, std::unique_ptr<conv_impl_t> &out, std::string &why);

/// Grouped convolutions whose per-group channels fill no whole channel block, which the rows
/// before it refuse (src/ops/conv/conv_regroup.cpp): k groups merged into one with
/// block-diagonal weights, k the least that makes the merged groups' ic and oc multiples of 8
/// (then of 16; then k = g, one group, for g <= 16), run by the first other JIT row of the ISA
/// cap that takes the merged problem; a src holding an Inf or a NaN runs the reference. The
/// weights are spread into the merged groups on each execute, or once when the op holds them.
/// unimplemented, with the reasons in `why`, without groups, for groups that fill blocks of 16
/// already, or where no k divides g or no row takes the merged problem.
status create_conv_fwd_regroup(const conv_prb_t &prb, std::unique_ptr<conv_impl_t> &out, std::string &why);

/// The reference (src/ops/conv/conv_ref.cpp): takes every problem, every layout; picks the
/// plain ones for any.
std::unique_ptr<conv_impl_t> create_conv_fwd_ref(const conv_prb_t &prb);

} // namespace blockdnn::impl
