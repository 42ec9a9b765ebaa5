// SPDX-License-Identifier: Apache-2.0
// Batch normalization (Ioffe & Szegedy, arXiv:1502.03167): forward and backward descriptors and
// op objects, and the running-statistics update PyTorch and ONNX apply after a training pass.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "blockdnn/primitive.hpp"
#include "blockdnn/tensor.hpp"

namespace blockdnn {

/// Batch normalization flags, or-ed together, as oneDNN's `normalization_flags`.
enum class bnorm_flags : unsigned {
    none = 0,
    use_scale = 1u << 0, ///< multiply by scale[c] (gamma); without it gamma = 1
    use_shift = 1u << 1, ///< add shift[c] (beta); without it beta = 0
    fuse_relu = 1u << 2, ///< dst = max(dst, 0) after normalization (no workspace: a backward
                         ///< pass can take its mask from dst > 0)
};
constexpr bnorm_flags operator|(bnorm_flags a, bnorm_flags b) {
    return static_cast<bnorm_flags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
/// True if every flag of `f` is set in `set`.
constexpr bool has(bnorm_flags set, bnorm_flags f) {
    return (static_cast<unsigned>(set) & static_cast<unsigned>(f)) == static_cast<unsigned>(f);
}

/// Where the statistics come from (oneDNN's forward_training / forward_inference with
/// use_global_stats).
enum class bnorm_mode {
    training,  ///< mean and variance are computed from the batch and written out
    inference, ///< mean and variance are given (running statistics) and only read
};

/// "training" or "inference".
const char *to_string(bnorm_mode m);

/// What a batch normalization computes. For each channel c, over all mb and spatial points:
///
///     dst = gamma[c] * (src - mean[c]) / sqrt(variance[c] + epsilon) + beta[c]
///     dst = max(dst, 0)                                    (only with fuse_relu)
///
/// In training mode mean[c] and variance[c] are the batch statistics over the
/// N = mb * [id *] [ih *] iw values of channel c: mean = sum(x) / N and the biased variance
/// sum((x - mean)^2) / N (two passes, accumulated in double, so a channel of 1e4 + small
/// noise keeps its variance). If variance + epsilon is 0 (epsilon = 0 on a constant channel)
/// the normalized value is taken as 0, so dst = beta rather than NaN.
struct bnorm_desc {
    bnorm_mode mode = bnorm_mode::training;
    /// Source: (mb, c), (mb, c, iw), (mb, c, ih, iw) or (mb, c, id, ih, iw) in any activation
    /// layout: nc, ncw, nwc, nCw8c, nCw16c, nchw, nhwc, nChw8c, nChw16c, ncdhw, ndhwc,
    /// nCdhw8c, nCdhw16c. f32.
    tensor_desc src;
    /// Destination: the same dims as src, in any activation layout. Empty means "as src".
    tensor_desc dst;
    /// Added to the variance; must be finite and >= 0. PyTorch's and ONNX's default is 1e-5.
    float epsilon = 1e-5f;
    bnorm_flags flags = bnorm_flags::none;

    /// Checks every rule and throws `blockdnn::error` (invalid_arguments) at the first one
    /// broken, naming the field, its value and the rule (e.g. "bnorm_fwd: dst dims ... differ
    /// from src dims ..."): src empty or not an activation layout with 2 to 5 dims, dst (src
    /// when empty) likewise or with other dims or data type than src, epsilon negative or not
    /// finite, unknown flag bits, a mode outside the enumeration.
    void validate() const;

    /// benchdnn's descriptor of src's dims and epsilon, e.g. "mb16ic64ih56eps1e-05" (eps left
    /// out when it is benchdnn's default 1/16); parse_bnorm_desc reads it back. Mode, flags and
    /// layouts are not part of it (benchdnn gives them as options).
    std::string str() const;
};

/// Parses benchdnn's batch normalization descriptor, mbXicX_idXihXiwX_epsF_nNAME, with '_'
/// separators and a quoted or bare name (stored in `*name` when given). Rules (oneDNN
/// tests/benchdnn/bnorm/bnorm_aux.cpp): mb defaults to 2; ic is required; a missing spatial
/// size is copied from the higher one (id -> ih -> iw, so ih56 means 56x56 and id4 means
/// 4x4x4); the problem is 3-D with id, 2-D with ih, 1-D with only iw and 0-D (mb x ic) with
/// none; eps defaults to 1/16. Returns a training desc whose src has those dims in the plain
/// layout of its rank (nc, ncw, nchw, ncdhw) and epsilon = eps; set the layout, mode and flags
/// after parsing. Throws `blockdnn::error` (invalid_arguments) naming the text and the bad key
/// or value.
bnorm_desc parse_bnorm_desc(std::string_view text, std::string *name = nullptr);

/// Tensors of one execution. Per-channel tensors have dims {c} and layout `x`.
struct bnorm_fwd_args {
    tensor src {};      ///< desc().src
    tensor dst {};      ///< desc().dst; may be src itself (in place), must not overlap it otherwise
    tensor mean {};     ///< inference: read, required. training: written; give both mean and variance or neither
    tensor variance {}; ///< as mean; training writes the biased batch variance
    tensor scale {};    ///< gamma, required with use_scale, ignored without it
    tensor shift {};    ///< beta, required with use_shift, ignored without it
};

/// Batch normalization forward: create once (validates and picks an implementation),
/// execute many times.
///
/// @code
///   bnorm_fwd op({bnorm_mode::training, tensor_desc({2, 3, 5, 5}, format_tag::nChw16c), {},
///                 1e-5f, bnorm_flags::use_scale | bnorm_flags::use_shift});
///   op.execute({src, dst, mean, variance, gamma, beta});
/// @endcode
///
/// Blocked layouts: dst's padding channels (c past desc().src.dim(1)) are written with zeros.
/// Implementations: "jit:avx512_core" and "jit:avx2" (src and dst in one layout; statistics in
/// fixed-size chunks combined in a fixed order, so the result does not depend on the thread
/// count), then "ref" (any layouts; each channel in one fixed order, so plain and blocked
/// layouts give bit-identical results). impl_info() adds a JIT one's plan in words on the next
/// lines (units, chunks, threading, and each kernel's conf).
class bnorm_fwd : public primitive {
public:
    /// Validates `desc` and picks the best implementation. Throws `blockdnn::error`
    /// (invalid_arguments) naming the field: src empty or not an activation layout with 2 to 5
    /// dims, dst dims differing from src's, epsilon negative or not finite.
    explicit bnorm_fwd(const bnorm_desc &desc);

    /// Runs the op. Throws `blockdnn::error` (invalid_arguments) before writing anything if a
    /// tensor needed is missing (no memory), or its descriptor differs from what desc() asks:
    /// src/dst must equal desc().src/dst, and mean/variance/scale/shift must be {c} in layout x
    /// (e.g. "bnorm_fwd: mean has dims 5, expected {c} = 3"). Also if a tensor the op writes
    /// (dst; mean and variance in training) overlaps another tensor of the call, except dst
    /// being src itself (same memory and layout), naming both.
    void execute(const bnorm_fwd_args &args) const;

    /// The validated descriptor (dst filled in if it was empty).
    const bnorm_desc &desc() const;

    /// The descriptor of the per-channel tensors: {c}, layout x.
    tensor_desc stat_desc() const;
};

/// What batch normalization backward computes: the gradients of a loss L with respect to src,
/// scale (gamma) and shift (beta), given diff_dst = dL/d dst. Per channel c over its
/// N = mb * [id *] [ih *] iw values, with xm = src - mean[c], inv_std = 1 / sqrt(variance[c] +
/// epsilon) (0 if that is not positive) and dy' = diff_dst, or 0 where dst <= 0 with fuse_relu
/// (Ioffe & Szegedy, arXiv:1502.03167, section 3):
///
///     diff_scale = sum(dy' xm) inv_std                      diff_shift = sum(dy')
///     training form:  diff_src = gamma inv_std (dy' - sum(dy') / N - xm inv_std^2 sum(dy' xm) / N
///                                                + inv_std^2 sum(dy' xm) sum(xm) / N^2)
///     global_stats:   diff_src = gamma inv_std dy'
///
/// The training form differentiates through the batch statistics the forward computed (pass
/// that forward's mean and variance); its last term, from the paper's dL/dmean, vanishes when
/// mean is the exact batch mean. global_stats is the form for a forward that read fixed
/// statistics (bnorm_mode::inference).
struct bnorm_bwd_desc {
    /// The forward's src: dims and layout as in bnorm_desc. f32.
    tensor_desc src {};
    /// Gradient of the forward's dst: the same dims, any activation layout. Empty: as src.
    tensor_desc diff_dst {};
    /// Gradient written for src: the same dims, any activation layout. Empty: as src.
    tensor_desc diff_src {};
    /// The forward's epsilon; finite and >= 0.
    float epsilon = 1e-5f;
    /// use_scale: gamma is read and diff_scale written; use_shift: diff_shift written;
    /// fuse_relu: the forward applied max(0, .), its dst is read for the mask.
    bnorm_flags flags = bnorm_flags::none;
    /// True if the forward used fixed statistics (inference); false for a training forward.
    bool global_stats = false;

    /// Checks every rule and throws `blockdnn::error` (invalid_arguments) at the first one
    /// broken, naming the field, its value and the rule: src empty or not an activation layout
    /// with 2 to 5 dims, diff_dst or diff_src (src when empty) likewise or with other dims or
    /// data type than src, epsilon negative or not finite, unknown flag bits.
    void validate() const;

    /// benchdnn's descriptor of src's dims and epsilon, as bnorm_desc::str().
    std::string str() const;
};

/// Tensors of one backward execution. Per-channel tensors have dims {c} and layout x.
struct bnorm_bwd_args {
    tensor src {};        ///< desc().src: the forward's input
    tensor diff_dst {};   ///< desc().diff_dst
    tensor diff_src {};   ///< desc().diff_src, written; may be diff_dst itself (same layout)
    tensor mean {};       ///< the statistics the forward used, read
    tensor variance {};   ///< as mean (the biased batch variance for a training forward)
    tensor scale {};      ///< gamma, required with use_scale
    tensor dst {};        ///< the forward's dst (layout of diff_dst), required with fuse_relu
    tensor diff_scale {}; ///< written with use_scale
    tensor diff_shift {}; ///< written with use_shift
};

/// Batch normalization backward: create once (validates and picks an implementation),
/// execute many times. Blocked diff_src has its padding channels written with zeros.
/// Implementations: "jit:avx512_core", "jit:avx2" (src, diff_dst and diff_src in one layout),
/// "ref" (any layouts, double accumulation). impl_info() as bnorm_fwd's.
///
/// @code
///   bnorm_bwd bwd({src_desc, {}, {}, 1e-5f, bnorm_flags::use_scale | bnorm_flags::use_shift});
///   bwd.execute({src, diff_dst, diff_src, mean, variance, gamma, {}, diff_gamma, diff_beta});
/// @endcode
class bnorm_bwd : public primitive {
public:
    /// Validates `desc` and picks the best implementation. Throws `blockdnn::error`
    /// (invalid_arguments) naming the field: src empty or not an activation layout with 2 to 5
    /// dims, diff_dst or diff_src dims differing from src's, epsilon negative or not finite,
    /// unknown flags.
    explicit bnorm_bwd(const bnorm_bwd_desc &desc);

    /// Runs the op. Throws `blockdnn::error` (invalid_arguments) before writing anything if a
    /// tensor needed is missing or its descriptor differs from what desc() asks (per-channel
    /// tensors: {c} in layout x; dst: desc().diff_dst), or if a tensor the op writes
    /// (diff_src, diff_scale, diff_shift) overlaps another tensor of the call, except diff_src
    /// being diff_dst itself (same memory and layout), naming both.
    void execute(const bnorm_bwd_args &args) const;

    /// The validated descriptor (diff_dst and diff_src filled in if they were empty).
    const bnorm_bwd_desc &desc() const;
};

/// Folds an inference batch normalization into the convolution before it, so that one
/// convolution computes both (what PyTorch users get from torch.fx's fuse_conv_bn_eval):
///
///     alpha[o]     = scale[o] / sqrt(variance[o] + epsilon)    (0 if that is not positive)
///     wei_out[o..] = wei[o..] * alpha[o]                       for every weight of output channel o
///     bia_out[o]   = (bia[o] - mean[o]) * alpha[o] + shift[o]
///
/// so conv(src, wei_out) + bia_out equals bnorm_inference(conv(src, wei) + bia) up to rounding
/// (computed in double, rounded once). Without relu fused in the bnorm: apply a relu post-op to
/// the folded conv for that.
///
/// `wei` is any f32 weights layout, grouped ({g, oc/g, ic/g, ...}: output channel g * oc/g + o)
/// or not ({oc, ic, ...}); `wei_out` has wei's descriptor and may be wei itself. Per-channel
/// tensors are {oc} in layout x: mean, variance and bia_out required; bia (conv bias; 0 if
/// empty), scale (gamma; 1 if empty) and shift (beta; 0 if empty) optional; bia_out may be bia.
/// Throws `blockdnn::error` (invalid_arguments), before writing anything, naming the tensor
/// whose memory is missing or whose descriptor does not fit, or a negative or non-finite epsilon.
void bnorm_fold_into_conv(const tensor &wei, const tensor &bia, const tensor &mean, const tensor &variance,
        const tensor &scale, const tensor &shift, float epsilon, const tensor &wei_out, const tensor &bia_out);

/// Folds the batch statistics of one training pass into running statistics, PyTorch's way:
///
///     running_mean = (1 - momentum) * running_mean + momentum * mean
///     running_var  = (1 - momentum) * running_var  + momentum * variance * k
///
/// with k = count / (count - 1) if `unbiased` (PyTorch's BatchNorm: its running_var uses the
/// unbiased variance while normalization uses the biased one) and k = 1 otherwise.
/// `count` is the number of values per channel, mb * [id *] [ih *] iw.
/// ONNX's BatchNormalization (training_mode = 1) weighs the other way round and keeps the
/// biased variance: pass momentum = 1 - onnx_momentum and unbiased = false.
///
/// All four tensors are {c} in layout x. Throws `blockdnn::error` (invalid_arguments) if
/// their dims differ, running_mean or running_var overlaps another of the four, momentum is
/// outside [0, 1], count < 1, or count == 1 with unbiased (the unbiased variance of one value
/// is undefined; PyTorch refuses it too).
void bnorm_update_running_stats(const tensor &mean, const tensor &variance, dim_t count, float momentum, bool unbiased,
        const tensor &running_mean, const tensor &running_var);

} // namespace blockdnn
