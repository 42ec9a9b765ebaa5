// SPDX-License-Identifier: Apache-2.0
// Batch normalization forward (Ioffe & Szegedy, arXiv:1502.03167): the descriptor, the op
// object and the running-statistics update PyTorch and ONNX apply after a training pass.
#pragma once

#include <memory>
#include <string>

#include "blockdnn/tensor.hpp"

namespace blockdnn {

namespace impl {
class bnorm_fwd_impl_t;
}

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
};

/// Tensors of one execution. Per-channel tensors have dims {c} and layout `x`.
struct bnorm_fwd_args {
    tensor src {};      ///< desc().src
    tensor dst {};      ///< desc().dst; may be src itself (in place), must not overlap it otherwise
    tensor mean {};     ///< inference: read, required. training: written if given (may be empty)
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
/// Implementations compute each channel in one fixed order, so plain and blocked layouts give
/// bit-identical results.
class bnorm_fwd {
public:
    /// Validates `desc` and picks the best implementation. Throws `blockdnn::error`
    /// (invalid_arguments) naming the field: src empty or not an activation layout with 2 to 5
    /// dims, dst dims differing from src's, epsilon negative or not finite.
    explicit bnorm_fwd(const bnorm_desc &desc);

    /// Runs the op. Throws `blockdnn::error` (invalid_arguments) before writing anything if a
    /// tensor needed is missing (no memory), or its descriptor differs from what desc() asks:
    /// src/dst must equal desc().src/dst, and mean/variance/scale/shift must be {c} in layout x
    /// (e.g. "bnorm_fwd: mean has dims 5, expected {c} = 3"). Also if dst shares src's memory
    /// with a different layout.
    void execute(const bnorm_fwd_args &args) const;

    /// The implementation chosen: "ref", or a "jit:<isa>" name once those exist.
    const char *impl_name() const { return impl_name_; }

    /// The validated descriptor (dst filled in if it was empty).
    const bnorm_desc &desc() const { return desc_; }

    /// The descriptor of the per-channel tensors: {c}, layout x.
    tensor_desc stat_desc() const;

private:
    bnorm_desc desc_;
    std::shared_ptr<const impl::bnorm_fwd_impl_t> impl_;
    const char *impl_name_ = "";
};

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
/// their dims differ, momentum is outside [0, 1], count < 1, or count == 1 with unbiased
/// (the unbiased variance of one value is undefined; PyTorch refuses it too).
void bnorm_update_running_stats(const tensor &mean, const tensor &variance, dim_t count, float momentum,
        bool unbiased, const tensor &running_mean, const tensor &running_var);

} // namespace blockdnn
