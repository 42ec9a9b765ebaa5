// SPDX-License-Identifier: Apache-2.0
// ResNet blocks and networks from blockdnn's public ops (see resnet.hpp): parameter loading
// and reordering, op creation with the shapes torchvision uses, and the forward passes.
#include "nets/resnet.hpp"

#include <cstring>
#include <stdexcept>

namespace nets {

using namespace blockdnn;

namespace {

// A tensor in layout `tag` holding parameter `name`, which the source gives in PyTorch shape
// `torch_dims` and which is read as the plain descriptor `plain` (same element order).
tensor load(const param_source &params, const std::string &name, const dims_t &torch_dims, const tensor_desc &plain,
        format_tag tag) {
    const std::vector<float> v = params(name, torch_dims);
    if (static_cast<dim_t>(v.size()) != plain.nelems())
        throw std::runtime_error("nets: parameter " + name + " has " + std::to_string(v.size()) + " values, expected "
                + std::to_string(plain.nelems()));
    tensor t(plain);
    std::memcpy(t.f32(), v.data(), v.size() * sizeof(float));
    return tag == plain.tag() ? t : reorder(t, tag);
}

tensor load_vector(const param_source &params, const std::string &name, dim_t n) {
    return load(params, name, {n}, tensor_desc({n}, format_tag::x), format_tag::x);
}

conv_desc make_conv_desc(dim_t mb, dim_t ih, dim_t iw, const conv_shape &s) {
    conv_desc d;
    d.ndims = 4;
    d.mb = mb;
    d.ic = s.ic;
    d.oc = s.oc;
    d.ih = ih;
    d.iw = iw;
    d.kh = d.kw = s.k;
    d.sh = d.sw = s.s;
    d.ph = d.pw = d.ph_r = d.pw_r = s.p; // PyTorch pads both sides alike
    d.infer_dst_dims();
    return d;
}

// torchvision's BatchNorm2d default.
constexpr float bn_epsilon = 1e-5f;

bnorm_desc make_bnorm_desc(const tensor_desc &act, bool relu) {
    bnorm_flags flags = bnorm_flags::use_scale | bnorm_flags::use_shift;
    if (relu) flags = flags | bnorm_flags::fuse_relu;
    return {bnorm_mode::inference, act, {}, bn_epsilon, flags};
}

// conv_bn for the next conv of a chain, whose src is `prev`'s dst.
conv_bn after(const conv_bn &prev, const std::string &conv, const std::string &bn, const conv_shape &shape, bool relu,
        const net_layouts &layouts, const param_source &params) {
    const tensor_desc &d = prev.dst_desc();
    return conv_bn(conv, bn, d.dim(0), d.dim(2), d.dim(3), shape, relu, layouts, params);
}

dims_t spatial_of(const tensor_desc &d) { return {d.dim(2), d.dim(3)}; }

} // namespace

net_layouts layouts_for(format_tag act) {
    switch (act) {
    case format_tag::nchw:
    case format_tag::nhwc: return {act, format_tag::oihw};
    case format_tag::nChw8c: return {act, format_tag::OIhw8i8o};
    case format_tag::nChw16c: return {act, format_tag::OIhw16i16o};
    default:
        throw error(status::invalid_arguments,
                std::string("nets::layouts_for: no weight layout for activation layout ") + to_string(act));
    }
}

// ------------------------------------------------------------------ conv_bn

conv_bn::conv_bn(const std::string &conv, const std::string &bn, dim_t mb, dim_t ih, dim_t iw, const conv_shape &shape,
        bool relu, const net_layouts &layouts, const param_source &params)
    : conv_(make_conv_desc(mb, ih, iw, shape), layouts.act, layouts.wei, layouts.act),
      bn_(make_bnorm_desc(conv_.dst_desc(), relu)) {
    const dims_t wdims {shape.oc, shape.ic, shape.k, shape.k};
    wei_ = load(params, conv + ".weight", wdims, tensor_desc(wdims, format_tag::oihw), layouts.wei);
    mean_ = load_vector(params, bn + ".running_mean", shape.oc);
    var_ = load_vector(params, bn + ".running_var", shape.oc);
    scale_ = load_vector(params, bn + ".weight", shape.oc);
    shift_ = load_vector(params, bn + ".bias", shape.oc);
}

tensor conv_bn::operator()(const tensor &src) const {
    const tensor dst(conv_.dst_desc());
    conv_.execute(src, wei_, dst);
    bn_.execute({dst, dst, mean_, var_, scale_, shift_});
    return dst;
}

// ------------------------------------------------------------------ residual_block

residual_block::residual_block(std::vector<conv_bn> main, std::optional<conv_bn> downsample)
    : main_(std::move(main)), downsample_(std::move(downsample)),
      add_relu_(binary_alg::add, main_.back().dst_desc(),
              downsample_ ? downsample_->dst_desc() : main_.front().src_desc(), main_.back().dst_desc(),
              post_ops().append_eltwise(eltwise_alg::relu)) {}

residual_block residual_block::basic(const std::string &prefix, dim_t mb, dim_t ih, dim_t iw, dim_t inplanes,
        dim_t planes, dim_t stride, const net_layouts &layouts, const param_source &params) {
    std::vector<conv_bn> main;
    main.emplace_back(prefix + "conv1", prefix + "bn1", mb, ih, iw, conv_shape {inplanes, planes, 3, stride, 1}, true,
            layouts, params);
    main.push_back(after(main.back(), prefix + "conv2", prefix + "bn2", {planes, planes, 3, 1, 1}, false, layouts, params));
    std::optional<conv_bn> down;
    if (stride != 1 || inplanes != planes)
        down.emplace(prefix + "downsample.0", prefix + "downsample.1", mb, ih, iw,
                conv_shape {inplanes, planes, 1, stride, 0}, false, layouts, params);
    return residual_block(std::move(main), std::move(down));
}

residual_block residual_block::bottleneck(const std::string &prefix, dim_t mb, dim_t ih, dim_t iw, dim_t inplanes,
        dim_t planes, dim_t stride, const net_layouts &layouts, const param_source &params) {
    constexpr dim_t expansion = 4;
    std::vector<conv_bn> main;
    main.emplace_back(prefix + "conv1", prefix + "bn1", mb, ih, iw, conv_shape {inplanes, planes, 1, 1, 0}, true,
            layouts, params);
    main.push_back(after(main.back(), prefix + "conv2", prefix + "bn2", {planes, planes, 3, stride, 1}, true, layouts,
            params));
    main.push_back(after(main.back(), prefix + "conv3", prefix + "bn3", {planes, planes * expansion, 1, 1, 0}, false,
            layouts, params));
    std::optional<conv_bn> down;
    if (stride != 1 || inplanes != planes * expansion)
        down.emplace(prefix + "downsample.0", prefix + "downsample.1", mb, ih, iw,
                conv_shape {inplanes, planes * expansion, 1, stride, 0}, false, layouts, params);
    return residual_block(std::move(main), std::move(down));
}

tensor residual_block::operator()(const tensor &src) const {
    tensor out = src;
    for (const conv_bn &c : main_) out = c(out);
    const tensor shortcut = downsample_ ? (*downsample_)(src) : src;
    add_relu_.execute(out, shortcut, out); // in place: out = relu(out + shortcut)
    return out;
}

// ------------------------------------------------------------------ resnet

namespace {

pool_desc maxpool_desc(const tensor_desc &src) {
    pool_desc d;
    d.alg = pool_alg::max;
    d.mb = src.dim(0);
    d.ic = src.dim(1);
    d.ih = src.dim(2);
    d.iw = src.dim(3);
    d.kh = d.kw = 3;
    d.sh = d.sw = 2;
    d.ph = d.pw = d.ph_r = d.pw_r = 1;
    d.infer_dst_dims();
    return d;
}

std::array<std::vector<residual_block>, 4> make_layers(const resnet_config &cfg, const tensor_desc &src,
        const net_layouts &layouts, const param_source &params) {
    std::array<std::vector<residual_block>, 4> layers;
    const dim_t mb = src.dim(0);
    dims_t hw = spatial_of(src);
    dim_t inplanes = src.dim(1);
    for (int l = 0; l < 4; ++l) {
        const dim_t planes = dim_t {64} << l;
        for (int b = 0; b < cfg.blocks[static_cast<std::size_t>(l)]; ++b) {
            const std::string prefix = "layer" + std::to_string(l + 1) + "." + std::to_string(b) + ".";
            const dim_t stride = (l > 0 && b == 0) ? 2 : 1;
            auto &layer = layers[static_cast<std::size_t>(l)];
            layer.push_back(cfg.bottleneck
                            ? residual_block::bottleneck(prefix, mb, hw[0], hw[1], inplanes, planes, stride, layouts, params)
                            : residual_block::basic(prefix, mb, hw[0], hw[1], inplanes, planes, stride, layouts, params));
            hw = spatial_of(layer.back().dst_desc());
            inplanes = layer.back().dst_desc().dim(1);
        }
    }
    return layers;
}

inner_product_desc fc_desc(const tensor_desc &pooled, dim_t num_classes) {
    inner_product_desc d;
    d.ndims = 4;
    d.mb = pooled.dim(0);
    d.ic = pooled.dim(1);
    d.oc = num_classes;
    d.with_bias = true;
    return d;
}

} // namespace

resnet::resnet(const resnet_config &config, dim_t mb, dim_t ih, dim_t iw, const net_layouts &layouts,
        const param_source &params)
    : stem_("conv1", "bn1", mb, ih, iw, conv_shape {3, 64, 7, 2, 3}, true, layouts, params),
      maxpool_(maxpool_desc(stem_.dst_desc()), layouts.act, layouts.act),
      layers_(make_layers(config, maxpool_.dst_desc(), layouts, params)),
      avgpool_(pool_desc::global(pool_alg::avg_exclude_pad, layers_[3].back().dst_desc().dims()), layouts.act,
              layouts.act),
      fc_(fc_desc(avgpool_.dst_desc(), config.num_classes), layouts.act, layouts.wei) {
    const dim_t c = avgpool_.dst_desc().dim(1), k = config.num_classes;
    // PyTorch's fc.weight {k, c} holds the same elements in the same order as oihw {k, c, 1, 1}.
    fc_wei_ = load(params, "fc.weight", {k, c}, tensor_desc({k, c, 1, 1}, format_tag::oihw), layouts.wei);
    fc_bia_ = load_vector(params, "fc.bias", k);
}

tensor resnet::forward(const tensor &src, const stage_observer &on_stage) const {
    const auto notify = [&](const std::string &stage, const tensor &t) {
        if (on_stage) on_stage(stage, t);
    };
    const tensor stem = stem_(src);
    tensor x(maxpool_.dst_desc());
    maxpool_.execute(stem, x);
    notify("stem", x);
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        for (const residual_block &b : layers_[l]) x = b(x);
        notify("layer" + std::to_string(l + 1), x);
    }
    const tensor pooled(avgpool_.dst_desc());
    avgpool_.execute(x, pooled);
    notify("avgpool", pooled);
    const tensor logits(fc_.dst_desc());
    fc_.execute(pooled, fc_wei_, fc_bia_, logits);
    notify("logits", logits);
    return logits;
}

} // namespace nets
