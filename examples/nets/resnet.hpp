// SPDX-License-Identifier: Apache-2.0
// ResNets (He et al., "Deep Residual Learning for Image Recognition", arXiv:1512.03385) as
// torchvision defines them, built from blockdnn's public ops only (an example users copy from).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "blockdnn/blockdnn.hpp"

namespace nets {

/// Supplies one parameter: the values of PyTorch state-dict entry `name` ("conv1.weight",
/// "layer1.0.bn1.running_var", "fc.bias", ...) in PyTorch's logical (row-major) order, for a
/// tensor of PyTorch shape `dims`. Throws if it has no such entry or its shape differs.
using param_source = std::function<std::vector<float>(const std::string &name, const blockdnn::dims_t &dims)>;

/// Called after each stage of a forward pass with the stage's name and output.
using stage_observer = std::function<void(const std::string &stage, const blockdnn::tensor &out)>;

/// How a net runs. Activations use `act`, the fc weight (viewed as {oc, ic, 1, 1}) `wei`; conv
/// weights are given to each conv_fwd at creation, which keeps them in its kernel's layout
/// (`wei` for the JIT kernels); batch-norm statistics and biases are `x`.
/// - fold_bn: each inference batch norm is folded into the conv before it
///   (blockdnn::bnorm_fold_into_conv: scaled weights and a bias), its relu becomes the conv's
///   eltwise post-op. Otherwise the batch norm runs as its own bnorm_fwd, in place.
/// - fuse_sum: the residual add and the relu after it are the last conv's post-ops
///   (`sum` then `relu`: the conv writes onto the shortcut). Otherwise a binary add with a relu
///   post-op follows the conv. Needs fold_bn (the batch norm must come before the add).
struct net_options {
    blockdnn::format_tag act = blockdnn::format_tag::nchw;
    blockdnn::format_tag wei = blockdnn::format_tag::oihw;
    bool fold_bn = true;
    bool fuse_sum = true;
};

/// The options for an activation layout: weights nchw/nhwc -> oihw, nChw8c -> OIhw8i8o,
/// nChw16c -> OIhw16i16o; fold_bn and fuse_sum on. Throws blockdnn::error (invalid_arguments)
/// for any other tag.
net_options options_for(blockdnn::format_tag act);

/// The options the JIT kernels of the effective ISA want (blocked_tag_for: nChw16c on
/// avx512_core, nChw8c on avx2 and below).
net_options fastest_options();

/// Shape of a 2-D convolution as the torchvision blocks use it: square kernel k, stride s,
/// the same padding p on every side, no dilation, one group.
struct conv_shape {
    blockdnn::dim_t ic, oc, k, s, p;
};

/// torchvision's Conv2d(bias=False) + BatchNorm2d(eps = 1e-5) [+ ReLU] in inference.
/// Parameters: `<conv>.weight` {oc, ic, k, k}; `<bn>.weight`, `.bias`, `.running_mean`,
/// `.running_var` {oc}. With `residual`, the result is added to dst's old value (the shortcut)
/// before the relu; that needs options.fold_bn and options.fuse_sum. The conv takes its weights
/// (and, folded, its bias) at creation and reorders them once into its kernel's layout.
class conv_bn {
public:
    conv_bn(const std::string &conv, const std::string &bn, blockdnn::dim_t mb, blockdnn::dim_t ih, blockdnn::dim_t iw,
            const conv_shape &shape, bool relu, const net_options &options, const param_source &params,
            blockdnn::format_tag src_tag = blockdnn::format_tag::undef, bool residual = false);

    /// A new tensor holding the result for src (src_desc()).
    blockdnn::tensor operator()(const blockdnn::tensor &src) const;
    /// Writes the result into dst (dst_desc()); with `residual`, dst holds the shortcut.
    void run(const blockdnn::tensor &src, const blockdnn::tensor &dst) const;

    const blockdnn::tensor_desc &src_desc() const { return conv_.src_desc(); }
    const blockdnn::tensor_desc &dst_desc() const { return conv_.dst_desc(); }
    /// The convolution's implementation ("jit:avx512_core", "ref", ...).
    const char *impl_name() const { return conv_.impl_name(); }
    /// 2 * multiply-adds of the convolution.
    double flops() const;

    /// The parameters of one conv_bn, as loaded (and folded) for the conv's creation.
    struct params_t {
        blockdnn::tensor wei, bia, mean, var, scale, shift;
    };

private:
    conv_bn(const blockdnn::conv_desc &desc, blockdnn::format_tag src_tag, bool relu, const net_options &options,
            params_t p, bool residual);

    blockdnn::conv_fwd conv_;               // holds the (folded) weights in its kernel's layout
    std::optional<blockdnn::bnorm_fwd> bn_; // unfolded batch norm
    blockdnn::tensor mean_, var_, scale_, shift_;
};

/// A residual block: dst = relu(main(src) + shortcut(src)), where main is a chain of conv_bn
/// (relu after all but the last) and the shortcut is src itself or, when the shape changes, a
/// 1x1 strided conv_bn (torchvision's `downsample`). The add and the final relu are the last
/// conv's sum + relu post-ops (options.fuse_sum), or a binary add with a relu post-op.
class residual_block {
public:
    /// torchvision's BasicBlock (expansion 1): 3x3 conv stride s -> BN -> ReLU -> 3x3 conv -> BN.
    /// `prefix` is the block's state-dict prefix ("layer2.0."); parameters conv1, bn1, conv2,
    /// bn2 and, if stride != 1 or inplanes != planes, downsample.0 and downsample.1.
    static residual_block basic(const std::string &prefix, blockdnn::dim_t mb, blockdnn::dim_t ih, blockdnn::dim_t iw,
            blockdnn::dim_t inplanes, blockdnn::dim_t planes, blockdnn::dim_t stride, const net_options &options,
            const param_source &params);

    /// torchvision's Bottleneck (ResNet v1.5, expansion 4: the stride sits on the 3x3 conv):
    /// 1x1 conv -> BN -> ReLU -> 3x3 conv stride s -> BN -> ReLU -> 1x1 conv to 4 * planes -> BN.
    /// Parameters conv1..3, bn1..3, and downsample.0/.1 if stride != 1 or inplanes != 4 * planes.
    static residual_block bottleneck(const std::string &prefix, blockdnn::dim_t mb, blockdnn::dim_t ih,
            blockdnn::dim_t iw, blockdnn::dim_t inplanes, blockdnn::dim_t planes, blockdnn::dim_t stride,
            const net_options &options, const param_source &params);

    /// A new tensor holding the block's output for src (src_desc()); src is not written.
    blockdnn::tensor operator()(const blockdnn::tensor &src) const { return run(src, false); }
    /// As operator(), and may reuse src's memory for the result when `src_is_scratch`.
    blockdnn::tensor run(const blockdnn::tensor &src, bool src_is_scratch) const;

    const blockdnn::tensor_desc &src_desc() const { return main_.front().src_desc(); }
    const blockdnn::tensor_desc &dst_desc() const { return main_.back().dst_desc(); }
    /// Each conv's implementation, main chain then downsample, space-separated.
    std::string impl_names() const;
    /// 2 * multiply-adds of the block's convolutions.
    double flops() const;

private:
    residual_block(std::vector<conv_bn> main, std::optional<conv_bn> downsample, const net_options &options);

    std::vector<conv_bn> main_;
    std::optional<conv_bn> downsample_;
    std::optional<blockdnn::binary_fwd> add_relu_; // unfused residual add
};

/// Which ResNet. Layer l (0-based) has blocks[l] blocks of width << l planes (0 blocks: the
/// layer and those after it are absent); its first block has stride 2 for l > 0.
/// The ImageNet stem is a 7x7 stride-2 conv (pad 3), BN, ReLU and a 3x3 stride-2 max pool
/// (pad 1); the small stem is a 3x3 stride-2 conv (pad 1), BN, ReLU.
struct resnet_config {
    bool bottleneck = false;
    std::array<int, 4> blocks {2, 2, 2, 2};
    blockdnn::dim_t width = 64;
    blockdnn::dim_t in_channels = 3;
    blockdnn::dim_t num_classes = 1000;
    bool imagenet_stem = true;
};
inline constexpr resnet_config resnet18 {false, {2, 2, 2, 2}, 64, 3, 1000, true};
inline constexpr resnet_config resnet34 {false, {3, 4, 6, 3}, 64, 3, 1000, true};
inline constexpr resnet_config resnet50 {true, {3, 4, 6, 3}, 64, 3, 1000, true};
/// The Fashion-MNIST classifier of examples/train_fashion_mnist.py: 1x28x28 images, small
/// stem to 16 channels at 14x14, BasicBlocks of 16, 32 and 64 planes, 10 classes.
inline constexpr resnet_config fashion_resnet {false, {1, 1, 1, 0}, 16, 1, 10, false};

/// torchvision's ResNet forward in inference: stem, layer1..layer4, global average pool,
/// fully connected layer with bias (an inner_product over the {mb, C, 1, 1} pooled tensor).
/// Parameters use torchvision's state-dict names. All ops are created, and all parameters
/// loaded, folded and reordered, in the constructor; forward() only executes, and is const:
/// several threads or streams may run it at once on different inputs.
class resnet {
public:
    /// For src {mb, in_channels, ih, iw} in src_desc()'s layout: options.act if it is plain,
    /// else nchw (the first conv reads plain images and writes blocked ones, as oneDNN's
    /// first-layer kernels do). Throws what `params` throws, and blockdnn::error if the input is
    /// too small for the net (an op's output size < 1).
    resnet(const resnet_config &config, blockdnn::dim_t mb, blockdnn::dim_t ih, blockdnn::dim_t iw,
            const net_options &options, const param_source &params);

    /// Runs the net; returns the logits {mb, num_classes} (layout nc). Calls on_stage, if set,
    /// with "stem" (after the max pool, if any), "layer1" .. the last layer, "avgpool"
    /// ({mb, C, 1, 1}) and "logits". Throws blockdnn::error (invalid_arguments) if src's
    /// descriptor is not src_desc().
    blockdnn::tensor forward(const blockdnn::tensor &src, const stage_observer &on_stage = {}) const;

    const blockdnn::tensor_desc &src_desc() const { return stem_.src_desc(); }
    const blockdnn::tensor_desc &logits_desc() const { return fc_.dst_desc(); }
    /// Multiply-adds of one forward pass at this batch, times 2 (convs and fc).
    double flops() const { return flops_; }
    /// How many convs run each implementation, e.g. "jit:avx512_core x52, jit:avx512_core:first x1".
    std::string impl_summary() const;

private:
    conv_bn stem_;
    std::optional<blockdnn::pool_fwd> maxpool_;
    std::array<std::vector<residual_block>, 4> layers_;
    blockdnn::pool_fwd avgpool_;
    blockdnn::inner_product_fwd fc_; // holds its weights
    double flops_ = 0;
};

/// A new tensor holding the logical values of t in canonical order (nchw for 4-D, else t's
/// plain tag), whatever t's layout. For reading results.
blockdnn::tensor dense(const blockdnn::tensor &t);

/// Index of the largest of n values (the first one on ties).
int argmax(const float *v, int n);

} // namespace nets
