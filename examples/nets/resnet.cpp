// SPDX-License-Identifier: Apache-2.0
// ResNet blocks and networks from blockdnn's public ops (see resnet.hpp): parameter loading,
// batch-norm folding and reordering, op creation with the shapes torchvision uses, and the
// forward passes.
#include "nets/resnet.hpp"

#include <cstring>
#include <map>
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

conv_desc make_conv_desc(dim_t mb, dim_t ih, dim_t iw, const conv_shape &s, bool with_bias) {
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
    d.with_bias = with_bias;
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

// The conv's post-ops: with a folded batch norm, [sum +] relu; unfolded, none (the batch norm
// applies the relu).
post_ops conv_post_ops(const net_options &o, bool relu, bool residual) {
    post_ops po;
    if (!o.fold_bn) return po;
    if (residual) po.append_sum(1.f);
    if (relu) po.append_eltwise(eltwise_alg::relu);
    return po;
}

// conv_bn for the next conv of a chain, whose src is `prev`'s dst.
conv_bn after(const conv_bn &prev, const std::string &conv, const std::string &bn, const conv_shape &shape, bool relu,
        const net_options &options, const param_source &params, bool residual = false) {
    const tensor_desc &d = prev.dst_desc();
    return conv_bn(conv, bn, d.dim(0), d.dim(2), d.dim(3), shape, relu, options, params, format_tag::undef, residual);
}

dims_t spatial_of(const tensor_desc &d) { return {d.dim(2), d.dim(3)}; }

double conv_flops(const conv_desc &d) {
    return 2.0 * double(d.mb) * double(d.oc) * double(d.oh * d.ow) * double(d.ic / d.g) * double(d.kh * d.kw);
}

} // namespace

net_options options_for(format_tag act) {
    switch (act) {
    case format_tag::nchw:
    case format_tag::nhwc: return {act, format_tag::oihw};
    case format_tag::nChw8c: return {act, format_tag::OIhw8i8o};
    case format_tag::nChw16c: return {act, format_tag::OIhw16i16o};
    default:
        throw error(status::invalid_arguments,
                std::string("nets::options_for: no weight layout for activation layout ") + to_string(act));
    }
}

net_options fastest_options() { return options_for(blocked_tag_for(tensor_desc({1, 1, 1, 1}, format_tag::nchw))); }

tensor dense(const tensor &t) {
    const format_tag want = t.desc().ndims() == 4 ? format_tag::nchw : plain_tag_for(t.desc().tag());
    return t.desc().tag() == want ? t : reorder(t, want);
}

int argmax(const float *v, int n) {
    int best = 0;
    for (int i = 1; i < n; ++i)
        if (v[i] > v[best]) best = i;
    return best;
}

// ------------------------------------------------------------------ conv_bn

namespace {

conv_bn::params_t load_conv_bn(const std::string &conv, const std::string &bn, const conv_shape &shape,
        const net_options &options, const param_source &params) {
    conv_bn::params_t p;
    const dims_t wdims {shape.oc, shape.ic, shape.k, shape.k};
    p.wei = load(params, conv + ".weight", wdims, tensor_desc(wdims, format_tag::oihw), format_tag::oihw);
    p.mean = load_vector(params, bn + ".running_mean", shape.oc);
    p.var = load_vector(params, bn + ".running_var", shape.oc);
    p.scale = load_vector(params, bn + ".weight", shape.oc);
    p.shift = load_vector(params, bn + ".bias", shape.oc);
    if (options.fold_bn) { // in place, in the plain layout; the conv reorders once at creation
        p.bia = tensor(tensor_desc({shape.oc}, format_tag::x));
        bnorm_fold_into_conv(p.wei, tensor(), p.mean, p.var, p.scale, p.shift, bn_epsilon, p.wei, p.bia);
    }
    return p;
}

} // namespace

conv_bn::conv_bn(const std::string &conv, const std::string &bn, dim_t mb, dim_t ih, dim_t iw, const conv_shape &shape,
        bool relu, const net_options &options, const param_source &params, format_tag src_tag, bool residual)
    : conv_bn(make_conv_desc(mb, ih, iw, shape, options.fold_bn), src_tag, relu, options,
            load_conv_bn(conv, bn, shape, options, params), residual) {}

conv_bn::conv_bn(
        const conv_desc &desc, format_tag src_tag, bool relu, const net_options &options, params_t p, bool residual)
    : conv_(desc, src_tag == format_tag::undef ? options.act : src_tag, p.wei, p.bia, options.act,
            conv_post_ops(options, relu, residual)),
      mean_(p.mean), var_(p.var), scale_(p.scale), shift_(p.shift) {
    if (residual && !(options.fold_bn && options.fuse_sum))
        throw error(status::invalid_arguments, "nets::conv_bn: a residual conv needs fold_bn and fuse_sum");
    if (!options.fold_bn) bn_.emplace(make_bnorm_desc(conv_.dst_desc(), relu));
}

void conv_bn::run(const tensor &src, const tensor &dst) const {
    conv_.execute(src, dst);
    if (bn_) bn_->execute({dst, dst, mean_, var_, scale_, shift_});
}

tensor conv_bn::operator()(const tensor &src) const {
    const tensor dst(conv_.dst_desc());
    run(src, dst);
    return dst;
}

double conv_bn::flops() const { return conv_flops(conv_.desc()); }

// ------------------------------------------------------------------ residual_block

residual_block::residual_block(std::vector<conv_bn> main, std::optional<conv_bn> downsample, const net_options &options)
    : main_(std::move(main)), downsample_(std::move(downsample)) {
    if (!(options.fold_bn && options.fuse_sum))
        add_relu_.emplace(binary_alg::add, main_.back().dst_desc(),
                downsample_ ? downsample_->dst_desc() : main_.front().src_desc(), main_.back().dst_desc(),
                post_ops().append_eltwise(eltwise_alg::relu));
}

residual_block residual_block::basic(const std::string &prefix, dim_t mb, dim_t ih, dim_t iw, dim_t inplanes,
        dim_t planes, dim_t stride, const net_options &options, const param_source &params) {
    const bool fused = options.fold_bn && options.fuse_sum;
    std::vector<conv_bn> main;
    main.emplace_back(prefix + "conv1", prefix + "bn1", mb, ih, iw, conv_shape {inplanes, planes, 3, stride, 1}, true,
            options, params);
    main.push_back(after(
            main.back(), prefix + "conv2", prefix + "bn2", {planes, planes, 3, 1, 1}, fused, options, params, fused));
    std::optional<conv_bn> down;
    if (stride != 1 || inplanes != planes)
        down.emplace(prefix + "downsample.0", prefix + "downsample.1", mb, ih, iw,
                conv_shape {inplanes, planes, 1, stride, 0}, false, options, params);
    return residual_block(std::move(main), std::move(down), options);
}

residual_block residual_block::bottleneck(const std::string &prefix, dim_t mb, dim_t ih, dim_t iw, dim_t inplanes,
        dim_t planes, dim_t stride, const net_options &options, const param_source &params) {
    constexpr dim_t expansion = 4;
    const bool fused = options.fold_bn && options.fuse_sum;
    std::vector<conv_bn> main;
    main.emplace_back(prefix + "conv1", prefix + "bn1", mb, ih, iw, conv_shape {inplanes, planes, 1, 1, 0}, true,
            options, params);
    main.push_back(after(
            main.back(), prefix + "conv2", prefix + "bn2", {planes, planes, 3, stride, 1}, true, options, params));
    main.push_back(after(main.back(), prefix + "conv3", prefix + "bn3", {planes, planes * expansion, 1, 1, 0}, fused,
            options, params, fused));
    std::optional<conv_bn> down;
    if (stride != 1 || inplanes != planes * expansion)
        down.emplace(prefix + "downsample.0", prefix + "downsample.1", mb, ih, iw,
                conv_shape {inplanes, planes * expansion, 1, stride, 0}, false, options, params);
    return residual_block(std::move(main), std::move(down), options);
}

tensor residual_block::run(const tensor &src, bool src_is_scratch) const {
    tensor x = src;
    for (std::size_t k = 0; k + 1 < main_.size(); ++k) x = main_[k](x);
    if (add_relu_) {
        const tensor out = main_.back()(x);
        add_relu_->execute(out, downsample_ ? (*downsample_)(src) : src, out); // out = relu(out + shortcut)
        return out;
    }
    // Fused: the last conv adds its result onto the shortcut, in the shortcut's memory.
    tensor out;
    if (downsample_) out = (*downsample_)(src);
    else if (src_is_scratch) out = src;
    else {
        out = tensor(src.desc());
        std::memcpy(out.data(), src.data(), src.desc().size_bytes());
    }
    main_.back().run(x, out);
    return out;
}

std::string residual_block::impl_names() const {
    std::string s;
    for (const conv_bn &c : main_) s += std::string(s.empty() ? "" : " ") + c.impl_name();
    if (downsample_) s += std::string(" ") + downsample_->impl_name();
    return s;
}

double residual_block::flops() const {
    double f = downsample_ ? downsample_->flops() : 0;
    for (const conv_bn &c : main_) f += c.flops();
    return f;
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

conv_bn make_stem(
        const resnet_config &cfg, dim_t mb, dim_t ih, dim_t iw, const net_options &o, const param_source &params) {
    // Blocked nets read plain images: the first-layer kernels take nchw src and blocked dst.
    const format_tag src_tag = (o.act == format_tag::nChw16c || o.act == format_tag::nChw8c) ? format_tag::nchw : o.act;
    const conv_shape s = cfg.imagenet_stem ? conv_shape {cfg.in_channels, cfg.width, 7, 2, 3}
                                           : conv_shape {cfg.in_channels, cfg.width, 3, 2, 1};
    return conv_bn("conv1", "bn1", mb, ih, iw, s, true, o, params, src_tag);
}

std::array<std::vector<residual_block>, 4> make_layers(
        const resnet_config &cfg, const tensor_desc &src, const net_options &options, const param_source &params) {
    std::array<std::vector<residual_block>, 4> layers;
    const dim_t mb = src.dim(0);
    dims_t hw = spatial_of(src);
    dim_t inplanes = src.dim(1);
    for (int l = 0; l < 4 && cfg.blocks[std::size_t(l)] > 0; ++l) {
        const dim_t planes = cfg.width << l;
        for (int b = 0; b < cfg.blocks[static_cast<std::size_t>(l)]; ++b) {
            const std::string prefix = "layer" + std::to_string(l + 1) + "." + std::to_string(b) + ".";
            const dim_t stride = (l > 0 && b == 0) ? 2 : 1;
            auto &layer = layers[static_cast<std::size_t>(l)];
            layer.push_back(cfg.bottleneck ? residual_block::bottleneck(
                                    prefix, mb, hw[0], hw[1], inplanes, planes, stride, options, params)
                                           : residual_block::basic(prefix, mb, hw[0], hw[1], inplanes, planes, stride,
                                                   options, params));
            hw = spatial_of(layer.back().dst_desc());
            inplanes = layer.back().dst_desc().dim(1);
        }
    }
    return layers;
}

const tensor_desc &last_desc(const std::array<std::vector<residual_block>, 4> &layers, const tensor_desc &stem) {
    for (auto l = layers.rbegin(); l != layers.rend(); ++l)
        if (!l->empty()) return l->back().dst_desc();
    return stem;
}

// The classifier, created with its weights (packed once for the GEMM). PyTorch's fc.weight
// {k, c} holds the same elements in the same order as oihw {k, c, 1, 1}, the row-major matrix
// the inner product's GEMM reads (a blocked layout would send it to the reference).
inner_product_fwd make_fc(
        const tensor_desc &pooled, dim_t num_classes, const net_options &options, const param_source &params) {
    inner_product_desc d;
    d.ndims = 4;
    d.mb = pooled.dim(0);
    d.ic = pooled.dim(1);
    d.oc = num_classes;
    d.with_bias = true;
    const dim_t c = d.ic, k = d.oc;
    const tensor wei = load(params, "fc.weight", {k, c}, tensor_desc({k, c, 1, 1}, format_tag::oihw), format_tag::oihw);
    return inner_product_fwd(d, options.act, wei, load_vector(params, "fc.bias", k));
}

} // namespace

resnet::resnet(const resnet_config &config, dim_t mb, dim_t ih, dim_t iw, const net_options &options,
        const param_source &params)
    : stem_(make_stem(config, mb, ih, iw, options, params)),
      maxpool_(config.imagenet_stem
                      ? std::optional<pool_fwd>(std::in_place, maxpool_desc(stem_.dst_desc()), options.act, options.act)
                      : std::nullopt),
      layers_(make_layers(config, maxpool_ ? maxpool_->dst_desc() : stem_.dst_desc(), options, params)),
      avgpool_(pool_desc::global(pool_alg::avg_exclude_pad,
                       last_desc(layers_, maxpool_ ? maxpool_->dst_desc() : stem_.dst_desc()).dims()),
              options.act, options.act),
      fc_(make_fc(avgpool_.dst_desc(), config.num_classes, options, params)) {
    const dim_t c = avgpool_.dst_desc().dim(1), k = config.num_classes;
    flops_ = stem_.flops() + 2.0 * double(mb) * double(c) * double(k);
    for (const auto &layer : layers_)
        for (const residual_block &b : layer) flops_ += b.flops();
}

tensor resnet::forward(const tensor &src, const stage_observer &on_stage) const {
    const auto notify = [&](const std::string &stage, const tensor &t) {
        if (on_stage) on_stage(stage, t);
    };
    tensor x = stem_(src);
    if (maxpool_) {
        const tensor pooled(maxpool_->dst_desc());
        maxpool_->execute(x, pooled);
        x = pooled;
    }
    notify("stem", x);
    for (std::size_t l = 0; l < layers_.size() && !layers_[l].empty(); ++l) {
        // Activations between blocks are this call's own, so a block may write over its src,
        // unless an observer may still hold it.
        for (const residual_block &b : layers_[l]) x = b.run(x, !on_stage);
        notify("layer" + std::to_string(l + 1), x);
    }
    const tensor pooled(avgpool_.dst_desc());
    avgpool_.execute(x, pooled);
    notify("avgpool", pooled);
    const tensor logits(fc_.dst_desc());
    fc_.execute(pooled, logits);
    notify("logits", logits);
    return logits;
}

std::string resnet::impl_summary() const {
    std::map<std::string, int> count;
    ++count[stem_.impl_name()];
    for (const auto &layer : layers_)
        for (const residual_block &b : layer) {
            const std::string names = b.impl_names();
            for (std::size_t p = 0; p < names.size();) {
                const std::size_t e = std::min(names.find(' ', p), names.size());
                ++count[names.substr(p, e - p)];
                p = e + 1;
            }
        }
    std::string s;
    for (const auto &[name, n] : count) s += (s.empty() ? "" : ", ") + name + " x" + std::to_string(n);
    return s;
}

} // namespace nets
