// SPDX-License-Identifier: Apache-2.0
// ResNets (He et al., "Deep Residual Learning for Image Recognition", arXiv:1512.03385) as
// torchvision defines them, built from blockdnn's public ops only: for tests and examples.
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

/// The layouts a net runs in: every activation in `act`, every conv weight (and the fc
/// weight, viewed as {oc, ic, 1, 1}) in `wei`. Batch-norm statistics and biases are `x`.
struct net_layouts {
    blockdnn::format_tag act = blockdnn::format_tag::nchw;
    blockdnn::format_tag wei = blockdnn::format_tag::oihw;
};

/// The weight layout that goes with an activation layout: nchw/nhwc -> oihw,
/// nChw8c -> OIhw8i8o, nChw16c -> OIhw16i16o. Throws blockdnn::error (invalid_arguments) for
/// any other tag.
net_layouts layouts_for(blockdnn::format_tag act);

/// Shape of a 2-D convolution as the torchvision blocks use it: square kernel k, stride s,
/// the same padding p on every side, no bias, no dilation, one group.
struct conv_shape {
    blockdnn::dim_t ic, oc, k, s, p;
};

/// torchvision's Conv2d(bias=False) + BatchNorm2d(eps = 1e-5) [+ ReLU]: a conv_fwd, then a
/// bnorm_fwd in inference mode (running statistics, scale and shift; relu fused into it)
/// run in place on the conv's output. The batch norm is its own op, not folded into the conv
/// weights. Parameters: `<conv>.weight` {oc, ic, k, k}; `<bn>.weight`, `.bias`,
/// `.running_mean`, `.running_var` {oc}.
class conv_bn {
public:
    conv_bn(const std::string &conv, const std::string &bn, blockdnn::dim_t mb, blockdnn::dim_t ih,
            blockdnn::dim_t iw, const conv_shape &shape, bool relu, const net_layouts &layouts,
            const param_source &params);

    /// A new tensor holding the result for src (src_desc()).
    blockdnn::tensor operator()(const blockdnn::tensor &src) const;

    const blockdnn::tensor_desc &src_desc() const { return conv_.src_desc(); }
    const blockdnn::tensor_desc &dst_desc() const { return conv_.dst_desc(); }

private:
    blockdnn::conv_fwd conv_;
    blockdnn::bnorm_fwd bn_;
    blockdnn::tensor wei_, mean_, var_, scale_, shift_;
};

/// A residual block: dst = relu(main(src) + shortcut(src)), where main is a chain of conv_bn
/// (relu after all but the last) and the shortcut is src itself or, when the shape changes, a
/// 1x1 strided conv_bn (torchvision's `downsample`). The add and the final relu are one binary
/// add with a relu post-op, in place on main's output.
class residual_block {
public:
    /// torchvision's BasicBlock (expansion 1): 3x3 conv stride s -> BN -> ReLU -> 3x3 conv -> BN.
    /// `prefix` is the block's state-dict prefix ("layer2.0."); parameters conv1, bn1, conv2,
    /// bn2 and, if stride != 1 or inplanes != planes, downsample.0 and downsample.1.
    static residual_block basic(const std::string &prefix, blockdnn::dim_t mb, blockdnn::dim_t ih,
            blockdnn::dim_t iw, blockdnn::dim_t inplanes, blockdnn::dim_t planes, blockdnn::dim_t stride,
            const net_layouts &layouts, const param_source &params);

    /// torchvision's Bottleneck (ResNet v1.5, expansion 4: the stride sits on the 3x3 conv):
    /// 1x1 conv -> BN -> ReLU -> 3x3 conv stride s -> BN -> ReLU -> 1x1 conv to 4 * planes -> BN.
    /// Parameters conv1..3, bn1..3, and downsample.0/.1 if stride != 1 or inplanes != 4 * planes.
    static residual_block bottleneck(const std::string &prefix, blockdnn::dim_t mb, blockdnn::dim_t ih,
            blockdnn::dim_t iw, blockdnn::dim_t inplanes, blockdnn::dim_t planes, blockdnn::dim_t stride,
            const net_layouts &layouts, const param_source &params);

    /// A new tensor holding the block's output for src (src_desc()).
    blockdnn::tensor operator()(const blockdnn::tensor &src) const;

    const blockdnn::tensor_desc &src_desc() const { return main_.front().src_desc(); }
    const blockdnn::tensor_desc &dst_desc() const { return main_.back().dst_desc(); }

private:
    residual_block(std::vector<conv_bn> main, std::optional<conv_bn> downsample);

    std::vector<conv_bn> main_;
    std::optional<conv_bn> downsample_;
    blockdnn::binary add_relu_;
};

/// Which ResNet: block kind and the number of blocks in layer1..layer4.
struct resnet_config {
    bool bottleneck = false;
    std::array<int, 4> blocks {2, 2, 2, 2};
    blockdnn::dim_t num_classes = 1000;
};
inline constexpr resnet_config resnet18 {false, {2, 2, 2, 2}, 1000};
inline constexpr resnet_config resnet34 {false, {3, 4, 6, 3}, 1000};
inline constexpr resnet_config resnet50 {true, {3, 4, 6, 3}, 1000};

/// torchvision's ResNet forward in inference: stem (7x7 conv stride 2 pad 3, BN, ReLU, max
/// pool 3x3 stride 2 pad 1), layer1..layer4 (64, 128, 256, 512 planes; the first block of
/// layer2..4 has stride 2), global average pool, fully connected layer with bias (an
/// inner_product over the {mb, C, 1, 1} pooled tensor). Parameters use torchvision's
/// state-dict names. All ops are created, and all parameters loaded and reordered, in the
/// constructor; forward() only executes.
class resnet {
public:
    /// For src {mb, 3, ih, iw} in layouts.act. Throws what `params` throws, and
    /// blockdnn::error if the input is too small for the net (an op's output size < 1).
    resnet(const resnet_config &config, blockdnn::dim_t mb, blockdnn::dim_t ih, blockdnn::dim_t iw,
            const net_layouts &layouts, const param_source &params);

    /// Runs the net; returns the logits {mb, num_classes} (layout nc). Calls on_stage, if set,
    /// with "stem" (after the max pool), "layer1" .. "layer4", "avgpool" ({mb, C, 1, 1}) and
    /// "logits". Throws blockdnn::error (invalid_arguments) if src's descriptor is not src_desc().
    blockdnn::tensor forward(const blockdnn::tensor &src, const stage_observer &on_stage = {}) const;

    const blockdnn::tensor_desc &src_desc() const { return stem_.src_desc(); }

private:
    conv_bn stem_;
    blockdnn::pool_fwd maxpool_;
    std::array<std::vector<residual_block>, 4> layers_;
    blockdnn::pool_fwd avgpool_;
    blockdnn::inner_product_fwd fc_;
    blockdnn::tensor fc_wei_, fc_bia_;
};

} // namespace nets
