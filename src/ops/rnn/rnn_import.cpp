// SPDX-License-Identifier: Apache-2.0
// Converters from PyTorch's and ONNX's RNN weights ([gates * hidden, input] per layer and
// direction, their own gate orders) into blockdnn's ldigo / ldgoi weights and ldgo bias.
#include "blockdnn/rnn.hpp"
#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "core/utils.hpp"

namespace blockdnn {

using impl::fail;
using impl::launch;

namespace {

// Framework gate k -> blockdnn gate (i, f, c~, o for lstm; u, r, o~ for the grus).
constexpr int pytorch_lstm[] = {0, 1, 2, 3}; // i, f, g, o
constexpr int onnx_lstm[] = {0, 3, 1, 2};    // i, o, f, c
constexpr int pytorch_gru[] = {1, 0, 2};     // r, z, n
constexpr int onnx_gru[] = {0, 1, 2};        // z, r, h

void check_slice(const char *fn, const tensor_desc &d, const char *field, dim_t layer, dim_t dir) {
    if (layer < 0 || layer >= d.dim(0))
        fail(status::invalid_arguments, fn, ": layer = ", layer, " is outside [0, ", d.dim(0), ") of ", field, " ",
                d.str());
    if (dir < 0 || dir >= d.dim(1))
        fail(status::invalid_arguments, fn, ": dir = ", dir, " is outside [0, ", d.dim(1), ") of ", field, " ",
                d.str());
}

// A cast integer outside rnn_framework would otherwise be read as onnx's gate order.
void check_framework(const char *fn, rnn_framework fw) {
    if (fw != rnn_framework::pytorch && fw != rnn_framework::onnx)
        fail(status::invalid_arguments, fn, ": fw = ", static_cast<int>(fw),
                " is not an rnn_framework (pytorch, onnx)");
}

} // namespace

const char *to_string(rnn_framework fw) {
    return fw == rnn_framework::pytorch ? "pytorch" : fw == rnn_framework::onnx ? "onnx" : "unknown";
}

int rnn_gate_index(rnn_framework fw, rnn_cell cell, int fw_gate) {
    check_framework("rnn_gate_index", fw);
    const int g = rnn_n_gates(cell);
    if (fw_gate < 0 || fw_gate >= g)
        fail(status::invalid_arguments, "rnn_gate_index: fw_gate = ", fw_gate, " is outside [0, ", g, ") for ",
                to_string(cell));
    switch (cell) {
    case rnn_cell::vanilla_rnn: return 0;
    case rnn_cell::lstm: return fw == rnn_framework::pytorch ? pytorch_lstm[fw_gate] : onnx_lstm[fw_gate];
    case rnn_cell::gru:
    case rnn_cell::lbr_gru: return fw == rnn_framework::pytorch ? pytorch_gru[fw_gate] : onnx_gru[fw_gate];
    }
    return 0;
}

void rnn_import_weights(
        rnn_framework fw, rnn_cell cell, const tensor &src, const tensor &weights, dim_t layer, dim_t dir) {
    constexpr const char *fn = "rnn_import_weights";
    check_framework(fn, fw);
    if (src.empty()) fail(status::invalid_arguments, fn, ": src has no memory");
    if (weights.empty()) fail(status::invalid_arguments, fn, ": weights has no memory");
    const tensor_desc &sd = src.desc(), &wd = weights.desc();
    if (wd.tag() != format_tag::ldigo && wd.tag() != format_tag::ldgoi)
        fail(status::invalid_arguments, fn, ": weights layout ", to_string(wd.tag()), " must be ldigo or ldgoi");
    if (sd.tag() != format_tag::oi)
        fail(status::invalid_arguments, fn, ": src layout ", to_string(sd.tag()),
                " must be oi ([gates * hidden, input], row-major)");
    const dim_t G = rnn_n_gates(cell), I = wd.dim(2), H = wd.dim(4);
    if (wd.dim(3) != G)
        fail(status::invalid_arguments, fn, ": weights dims[3] (g) = ", wd.dim(3), ", expected ", G, " gates for ",
                to_string(cell));
    if (sd.dim(0) != G * H || sd.dim(1) != I)
        fail(status::invalid_arguments, fn, ": src is ", sd.str(), ", expected {gates * dhc, i} = {", G * H, ", ", I,
                "} for weights ", wd.str());
    check_slice(fn, wd, "weights", layer, dir);
    // The copy transposes element by element, so a src inside weights would read values it
    // already overwrote.
    impl::check_no_overlap(fn, "weights", weights, "src", src);
    // The work holds copies of the tensors, which keep their memory alive while it is queued.
    launch(
            {fn, nullptr, isa::scalar, nullptr}, {}, [] { return std::string(); },
            [=] {
                for (dim_t k = 0; k < G; ++k) {
                    const dim_t g = rnn_gate_index(fw, cell, static_cast<int>(k));
                    for (dim_t o = 0; o < H; ++o)
                        for (dim_t i = 0; i < I; ++i) {
                            const dim_t s_idx[] = {k * H + o, i}, w_idx[] = {layer, dir, i, g, o};
                            weights.f32()[wd.offset(w_idx)] = src.f32()[sd.offset(s_idx)];
                        }
                }
            });
}

void rnn_import_bias(rnn_framework fw, rnn_cell cell, const tensor &b_ih, const tensor &b_hh, const tensor &bias,
        dim_t layer, dim_t dir) {
    // The checks in the denormals mode, and the caller's MXCSR (flags too) as it was on return.
    const impl::mxcsr_scope fp(get_denormals_mode());
    constexpr const char *fn = "rnn_import_bias";
    check_framework(fn, fw);
    if (bias.empty()) fail(status::invalid_arguments, fn, ": bias has no memory");
    const tensor_desc &bd = bias.desc();
    if (bd.tag() != format_tag::ldgo)
        fail(status::invalid_arguments, fn, ": bias layout ", to_string(bd.tag()), " must be ldgo");
    const dim_t G = rnn_n_gates(cell), GB = rnn_n_bias_gates(cell), H = bd.dim(3);
    if (bd.dim(2) != GB)
        fail(status::invalid_arguments, fn, ": bias dims[2] (g) = ", bd.dim(2), ", expected ", GB, " bias gates for ",
                to_string(cell));
    const std::pair<const tensor *, const char *> vs[] = {{&b_ih, "b_ih"}, {&b_hh, "b_hh"}};
    for (const auto &[t, name] : vs) {
        if (t->empty()) continue;
        const tensor_desc &d = t->desc();
        if (d.tag() != format_tag::x || d.dim(0) != G * H)
            fail(status::invalid_arguments, fn, ": ", name, " is ", d.str(), ", expected x:", G * H,
                    " (gates * dhc) for bias ", bd.str());
    }
    check_slice(fn, bd, "bias", layer, dir);
    for (const auto &[t, name] : vs) impl::check_no_overlap(fn, "bias", bias, name, *t);
    // The work holds copies of the tensors, which keep their memory alive while it is queued.
    launch(
            {fn, nullptr, isa::scalar, nullptr}, {}, [] { return std::string(); },
            [=] {
                auto at = [](const tensor &t, dim_t k) { return t.empty() ? 0.f : t.f32()[k]; };
                for (dim_t k = 0; k < G; ++k) {
                    const dim_t g = rnn_gate_index(fw, cell, static_cast<int>(k));
                    const bool split = cell == rnn_cell::lbr_gru && g == 2; // candidate: b_ih to B_o, b_hh to B_u'
                    for (dim_t o = 0; o < H; ++o) {
                        const float ih = at(b_ih, k * H + o), hh = at(b_hh, k * H + o);
                        const dim_t idx[] = {layer, dir, g, o};
                        bias.f32()[bd.offset(idx)] = split ? ih : ih + hh;
                        if (split) {
                            const dim_t extra[] = {layer, dir, 3, o};
                            bias.f32()[bd.offset(extra)] = hh;
                        }
                    }
                }
            });
}

} // namespace blockdnn
