// SPDX-License-Identifier: Apache-2.0
// The stacked LSTM of lstm.hpp: PyTorch parameters converted into rnn_fwd's ldigo / ldgo.
#include "nets/lstm.hpp"

#include <cstring>
#include <stdexcept>

namespace nets {

using namespace blockdnn;

namespace {

tensor from_params(const param_source &params, const std::string &name, const dims_t &dims, format_tag tag) {
    const std::vector<float> v = params(name, dims);
    const tensor t(tensor_desc(dims, tag));
    if (static_cast<dim_t>(v.size()) != t.desc().nelems())
        throw std::runtime_error("nets::lstm: parameter " + name + " has " + std::to_string(v.size()) + " values");
    std::memcpy(t.f32(), v.data(), v.size() * sizeof(float));
    return t;
}

// One rnn_fwd for PyTorch layers [first, first + l), all reading `slc` channels.
rnn_fwd make_op(dim_t first, dim_t l, dim_t t, dim_t mb, dim_t slc, dim_t hidden, const param_source &params) {
    rnn_desc d;
    d.cell = rnn_cell::lstm;
    d.l = l;
    d.t = t;
    d.mb = mb;
    d.slc = slc;
    d.dhc = hidden;
    const dim_t G = 4;
    const tensor wl(tensor_desc({l, 1, slc, G, hidden}, format_tag::ldigo));
    const tensor wi(tensor_desc({l, 1, hidden, G, hidden}, format_tag::ldigo));
    const tensor b(tensor_desc({l, 1, G, hidden}, format_tag::ldgo));
    for (dim_t k = 0; k < l; ++k) {
        const std::string s = std::to_string(first + k);
        const auto fw = rnn_framework::pytorch;
        rnn_import_weights(fw, rnn_cell::lstm,
                from_params(params, "weight_ih_l" + s, {G * hidden, slc}, format_tag::oi), wl, k, 0);
        rnn_import_weights(fw, rnn_cell::lstm,
                from_params(params, "weight_hh_l" + s, {G * hidden, hidden}, format_tag::oi), wi, k, 0);
        rnn_import_bias(fw, rnn_cell::lstm, from_params(params, "bias_ih_l" + s, {G * hidden}, format_tag::x),
                from_params(params, "bias_hh_l" + s, {G * hidden}, format_tag::x), b, k, 0);
    }
    return rnn_fwd(d, wl, wi, b);
}

} // namespace

lstm::lstm(dim_t layers, dim_t t, dim_t mb, dim_t input_size, dim_t hidden_size, const param_source &params) {
    if (layers < 1) throw error(status::invalid_arguments, "nets::lstm: layers = " + std::to_string(layers) + " < 1");
    dim_t first = 0;
    if (input_size != hidden_size) {
        ops_.push_back(make_op(0, 1, t, mb, input_size, hidden_size, params));
        first = 1;
    }
    if (first < layers) ops_.push_back(make_op(first, layers - first, t, mb, hidden_size, hidden_size, params));
    for (dim_t k = 0; k < layers; ++k)
        flops_ += 2.0 * double(t * mb) * double(4 * hidden_size)
                * double((k == 0 ? input_size : hidden_size) + hidden_size);
}

tensor lstm::forward(const tensor &src) const {
    tensor x = src;
    for (const rnn_fwd &op : ops_) {
        const tensor dst(op.dst_layer_desc());
        op.execute({.src_layer = x, .dst_layer = dst});
        x = dst;
    }
    return x;
}

std::string lstm::impl_names() const {
    std::string s;
    for (const rnn_fwd &op : ops_) s += std::string(s.empty() ? "" : " ") + op.impl_name();
    return s;
}

} // namespace nets
