// SPDX-License-Identifier: Apache-2.0
// RNN API: the PyTorch / ONNX converters element by element, the tensor descriptors an op
// asks for, and every validation rule (message names the field and value; nothing written).
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "rnn_test_util.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;
using ft = format_tag;

namespace {

TEST(RnnApi, GateOrders) {
    // lstm: blockdnn i, f, c~, o. PyTorch i, f, g, o. ONNX i, o, f, c.
    const int pt_lstm[] = {0, 1, 2, 3}, onnx_lstm[] = {0, 3, 1, 2};
    // gru: blockdnn u(z), r, o~. PyTorch r, z, n. ONNX z, r, h.
    const int pt_gru[] = {1, 0, 2}, onnx_gru[] = {0, 1, 2};
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(rnn_gate_index(rnn_framework::pytorch, rnn_cell::lstm, k), pt_lstm[k]);
        EXPECT_EQ(rnn_gate_index(rnn_framework::onnx, rnn_cell::lstm, k), onnx_lstm[k]);
    }
    for (rnn_cell cell : {rnn_cell::gru, rnn_cell::lbr_gru})
        for (int k = 0; k < 3; ++k) {
            EXPECT_EQ(rnn_gate_index(rnn_framework::pytorch, cell, k), pt_gru[k]);
            EXPECT_EQ(rnn_gate_index(rnn_framework::onnx, cell, k), onnx_gru[k]);
        }
    EXPECT_EQ(rnn_gate_index(rnn_framework::onnx, rnn_cell::vanilla_rnn, 0), 0);
    expect_error(status::invalid_arguments, {"rnn_gate_index", "fw_gate = 3", "gru"},
            [] { rnn_gate_index(rnn_framework::pytorch, rnn_cell::gru, 3); });
}

// Every element lands where the gate table and the transpose say, in ldigo and ldgoi, and
// only the chosen (layer, direction) slice is written.
TEST(RnnApi, ImportWeightsElementByElement) {
    const dim_t L = 2, D = 2, I = 3, H = 5;
    for (rnn_framework fw : {rnn_framework::pytorch, rnn_framework::onnx})
        for (rnn_cell cell : {rnn_cell::vanilla_rnn, rnn_cell::lstm, rnn_cell::gru, rnn_cell::lbr_gru})
            for (ft tag : {ft::ldigo, ft::ldgoi}) {
                const dim_t G = rnn_n_gates(cell);
                const tensor src(tensor_desc({G * H, I}, ft::oi));
                for (dim_t k = 0; k < G * H * I; ++k) src.f32()[k] = static_cast<float>(k + 1);
                const tensor w(tensor_desc({L, D, I, G, H}, tag));
                rnn_import_weights(fw, cell, src, w, 1, 0);
                dim_t bad = 0, written = 0;
                for_each_index(w.desc(), [&](const dim_t *idx) {
                    const float v = w.f32()[w.desc().offset(idx)];
                    if (idx[0] != 1 || idx[1] != 0) {
                        bad += v != 0.f;
                        return;
                    }
                    ++written;
                    // Find the framework gate k whose blockdnn index is idx[3].
                    dim_t k = 0;
                    while (rnn_gate_index(fw, cell, static_cast<int>(k)) != idx[3]) ++k;
                    bad += v != static_cast<float>((k * H + idx[4]) * I + idx[2] + 1);
                });
                EXPECT_EQ(bad, 0) << to_string(fw) << " " << to_string(cell) << " " << to_string(tag);
                EXPECT_EQ(written, I * G * H);
            }
}

TEST(RnnApi, ImportBiasSumsAndLbrSplit) {
    const dim_t H = 2;
    auto vec = [&](dim_t n, float base) {
        tensor t(tensor_desc({n}, ft::x));
        for (dim_t k = 0; k < n; ++k) t.f32()[k] = base + static_cast<float>(k);
        return t;
    };
    {
        // lstm, ONNX order i, o, f, c: blockdnn gate g gets b_ih + b_hh of the ONNX gate.
        const tensor b_ih = vec(4 * H, 0.f), b_hh = vec(4 * H, 100.f), bias(tensor_desc({1, 1, 4, H}, ft::ldgo));
        rnn_import_bias(rnn_framework::onnx, rnn_cell::lstm, b_ih, b_hh, bias, 0, 0);
        const int onnx_of[] = {0, 2, 3, 1}; // blockdnn i, f, c~, o -> ONNX row block
        for (dim_t g = 0; g < 4; ++g)
            for (dim_t o = 0; o < H; ++o) {
                const float k = static_cast<float>(onnx_of[g] * H + o);
                EXPECT_EQ(bias.f32()[g * H + o], k + (100.f + k)) << g << " " << o;
            }
    }
    {
        // lbr_gru, PyTorch order r, z, n: u <- z, r <- r sums; o~ <- b_in, B_u' <- b_hn.
        const tensor b_ih = vec(3 * H, 0.f), b_hh = vec(3 * H, 100.f), bias(tensor_desc({1, 2, 4, H}, ft::ldgo));
        rnn_import_bias(rnn_framework::pytorch, rnn_cell::lbr_gru, b_ih, b_hh, bias, 0, 1);
        const float *b = bias.f32() + 4 * H; // direction 1
        for (dim_t o = 0; o < H; ++o) {
            const float r = static_cast<float>(o), z = static_cast<float>(H + o), n = static_cast<float>(2 * H + o);
            EXPECT_EQ(b[0 * H + o], z + 100.f + z);
            EXPECT_EQ(b[1 * H + o], r + 100.f + r);
            EXPECT_EQ(b[2 * H + o], n);
            EXPECT_EQ(b[3 * H + o], 100.f + n);
            EXPECT_EQ(bias.f32()[o], 0.f); // direction 0 untouched
        }
        // b_hh absent: zeros in its place.
        rnn_import_bias(rnn_framework::pytorch, rnn_cell::lbr_gru, b_ih, tensor(), bias, 0, 1);
        EXPECT_EQ(b[0], static_cast<float>(H));
        EXPECT_EQ(b[3 * H], 0.f);
    }
}

TEST(RnnApi, Descriptors) {
    rnn_desc d;
    d.cell = rnn_cell::lbr_gru;
    d.direction = rnn_direction::bi_concat;
    d.l = 2;
    d.t = 7;
    d.mb = 3;
    d.slc = d.dhc = 6;
    d.src_layer_tag = ft::ntc;
    d.weights_iter_tag = ft::ldgoi;
    const rnn_fwd op(d);
    EXPECT_EQ(op.desc().sic, 6);
    EXPECT_EQ(op.desc().dic, 6);
    EXPECT_EQ(op.n_dirs(), 2);
    EXPECT_EQ(op.src_layer_desc(), tensor_desc({7, 3, 6}, ft::ntc));
    EXPECT_EQ(op.weights_layer_desc(), tensor_desc({2, 2, 6, 3, 6}, ft::ldigo));
    EXPECT_EQ(op.weights_iter_desc(), tensor_desc({2, 2, 6, 3, 6}, ft::ldgoi));
    EXPECT_EQ(op.bias_desc(), tensor_desc({2, 2, 4, 6}, ft::ldgo));
    EXPECT_EQ(op.src_iter_desc(), tensor_desc({2, 2, 3, 6}, ft::ldnc));
    EXPECT_EQ(op.dst_layer_desc(), tensor_desc({7, 3, 12}, ft::tnc));
    d.direction = rnn_direction::bi_sum;
    EXPECT_EQ(rnn_fwd(d).dst_layer_desc(), tensor_desc({7, 3, 6}, ft::tnc));
}

rnn_desc base_desc() { return rnn_test::small_gru_desc(1); }

TEST(RnnApi, DescErrors) {
    rnn_test::expect_desc_errors<rnn_fwd>("rnn_fwd", 1);
    // Past the first layer rnn_fwd reads dhc channels through the same weights_layer.
    rnn_desc d = base_desc();
    d.l = 2;
    expect_error(status::invalid_arguments, {"rnn_fwd", "slc = 3", "dhc = 4", "l = 2"}, [&] { rnn_fwd op(d); });
}

// Each rule at execute: the message names the tensor, dim and values; outputs stay untouched.
TEST(RnnApi, ExecuteErrorsWriteNothing) {
    const status bad = status::invalid_arguments;
    const rnn_fwd op(base_desc()); // gru, t3 mb2 slc3 dhc4, l2r
    const tensor src(op.src_layer_desc()), wl(op.weights_layer_desc()), wi(op.weights_iter_desc());
    const tensor bias(op.bias_desc()), h0(op.src_iter_desc()), dst(op.dst_layer_desc()), hT(op.dst_iter_desc());
    fill_random(src, 1);
    fill_random(wl, 2);
    fill_random(wi, 3);
    for (const tensor &t : {dst, hT})
        for (dim_t k = 0; k < t.desc().nelems(); ++k) t.f32()[k] = 42.f;
    rnn_fwd_args ok {src, h0, {}, wl, wi, bias, dst, hT, {}};
    auto with = [&](auto change) {
        rnn_fwd_args a = ok;
        change(a);
        return [&op, a] { op.execute(a); };
    };
    // Hidden size differing between the weights / states and the op.
    expect_error(bad, {"rnn_fwd", "weights_iter", "dims[4] (o) = 5", "dhc = 4"}, with([](rnn_fwd_args &a) {
        a.weights_iter = tensor(tensor_desc({1, 1, 4, 3, 5}, ft::ldigo));
    }));
    expect_error(bad, {"rnn_fwd", "weights_iter", "dims[2] (i) = 5", "sic = 4"}, with([](rnn_fwd_args &a) {
        a.weights_iter = tensor(tensor_desc({1, 1, 5, 3, 4}, ft::ldigo));
    }));
    expect_error(bad, {"rnn_fwd", "weights_layer", "dims[4] (o) = 6", "dhc = 4"}, with([](rnn_fwd_args &a) {
        a.weights_layer = tensor(tensor_desc({1, 1, 3, 3, 6}, ft::ldigo));
    }));
    expect_error(bad, {"rnn_fwd", "src_iter", "dims[3] (c) = 5", "dhc = 4"}, with([](rnn_fwd_args &a) {
        a.src_iter = tensor(tensor_desc({1, 1, 2, 5}, ft::ldnc));
    }));
    expect_error(bad, {"rnn_fwd", "dst_iter", "dims[0] (l) = 2", "l = 1"}, with([](rnn_fwd_args &a) {
        a.dst_iter = tensor(tensor_desc({2, 1, 2, 4}, ft::ldnc));
    }));
    expect_error(bad, {"rnn_fwd", "weights_layer", "dims[3] (g) = 4", "gates = 3"}, with([](rnn_fwd_args &a) {
        a.weights_layer = tensor(tensor_desc({1, 1, 3, 4, 4}, ft::ldigo));
    }));
    expect_error(bad, {"rnn_fwd", "bias", "dims[2] (g) = 4", "bias gates = 3"}, with([](rnn_fwd_args &a) {
        a.bias = tensor(tensor_desc({1, 1, 4, 4}, ft::ldgo));
    }));
    expect_error(bad, {"rnn_fwd", "src_layer", "dims[2] (c) = 4", "slc = 3"}, with([](rnn_fwd_args &a) {
        a.src_layer = tensor(tensor_desc({3, 2, 4}, ft::tnc));
    }));
    expect_error(bad, {"rnn_fwd", "src_layer", "dims[1] (n) = 5", "mb = 2"}, with([](rnn_fwd_args &a) {
        a.src_layer = tensor(tensor_desc({3, 5, 3}, ft::tnc));
    }));
    expect_error(bad, {"rnn_fwd", "dst_layer", "dims[0] (t) = 4", "t = 3"}, with([](rnn_fwd_args &a) {
        a.dst_layer = tensor(tensor_desc({4, 2, 4}, ft::tnc));
    }));
    // Wrong layouts.
    expect_error(bad, {"rnn_fwd", "src_layer layout ntc", "expected tnc"}, with([](rnn_fwd_args &a) {
        a.src_layer = tensor(tensor_desc({3, 2, 3}, ft::ntc));
    }));
    expect_error(bad, {"rnn_fwd", "weights_iter layout ldgoi", "expected ldigo"}, with([](rnn_fwd_args &a) {
        a.weights_iter = tensor(tensor_desc({1, 1, 4, 3, 4}, ft::ldgoi));
    }));
    expect_error(bad, {"rnn_fwd", "src_iter layout nchw"}, with([](rnn_fwd_args &a) {
        a.src_iter = tensor(tensor_desc({1, 1, 2, 4}, ft::nchw));
    }));
    // Missing, misplaced and overlapping tensors.
    expect_error(bad, {"rnn_fwd", "weights_layer", "required"}, with([](rnn_fwd_args &a) { a.weights_layer = {}; }));
    expect_error(bad, {"rnn_fwd", "dst_layer", "required"}, with([](rnn_fwd_args &a) { a.dst_layer = {}; }));
    expect_error(bad, {"rnn_fwd", "src_layer", "required"}, with([](rnn_fwd_args &a) { a.src_layer = {}; }));
    expect_error(bad, {"rnn_fwd", "src_iter_c", "gru", "no cell state"}, with([](rnn_fwd_args &a) {
        a.src_iter_c = tensor(tensor_desc({1, 1, 2, 4}, ft::ldnc));
    }));
    expect_error(bad, {"rnn_fwd", "dst_iter_c", "gru"}, with([](rnn_fwd_args &a) {
        a.dst_iter_c = tensor(tensor_desc({1, 1, 2, 4}, ft::ldnc));
    }));
    expect_error(bad, {"rnn_fwd", "dst_iter (", ") overlaps src_iter ("},
            with([&](rnn_fwd_args &a) { a.dst_iter = tensor(h0.desc(), h0.data()); }));
    expect_error(bad, {"rnn_fwd", "dst_layer (", ") overlaps src_layer ("},
            with([&](rnn_fwd_args &a) { a.dst_layer = tensor(dst.desc(), src.data()); }));
    for (const tensor &t : {dst, hT})
        for (dim_t k = 0; k < t.desc().nelems(); ++k) ASSERT_EQ(t.f32()[k], 42.f) << "written by a failed call";
    // And the untouched arguments run.
    op.execute(ok);
    EXPECT_NE(dst.f32()[0], 42.f);
}

TEST(RnnApi, ImportErrors) {
    const status bad = status::invalid_arguments;
    const tensor w(tensor_desc({2, 1, 3, 4, 5}, ft::ldigo)), src(tensor_desc({20, 3}, ft::oi));
    expect_error(bad, {"rnn_import_weights", "weights dims[3] (g) = 4", "3 gates", "gru"}, [&] {
        rnn_import_weights(rnn_framework::pytorch, rnn_cell::gru, tensor(tensor_desc({15, 3}, ft::oi)), w, 0, 0);
    });
    // A cast integer for the framework used to be read as onnx's gate order.
    const auto fw77 = static_cast<rnn_framework>(77);
    expect_error(bad, {"rnn_import_weights", "fw = 77", "not an rnn_framework"},
            [&] { rnn_import_weights(fw77, rnn_cell::lstm, src, w, 0, 0); });
    expect_error(bad, {"rnn_import_bias", "fw = 77"}, [&] {
        rnn_import_bias(fw77, rnn_cell::lstm, {}, {}, tensor(tensor_desc({2, 1, 4, 5}, ft::ldgo)), 0, 0);
    });
    expect_error(bad, {"rnn_gate_index", "fw = 77"}, [&] { rnn_gate_index(fw77, rnn_cell::lstm, 0); });
    EXPECT_STREQ(to_string(fw77), "unknown");
    // rnn_n_gates used to answer 0 for a cast integer.
    expect_error(bad, {"rnn_n_gates", "cell = 77", "not an rnn_cell"}, [] { rnn_n_gates(static_cast<rnn_cell>(77)); });
    expect_error(bad, {"rnn_n_bias_gates", "cell = 77"}, [] { rnn_n_bias_gates(static_cast<rnn_cell>(77)); });
    expect_error(bad, {"rnn_import_weights", "src is oi:21x3", "{20, 3}"}, [&] {
        rnn_import_weights(rnn_framework::onnx, rnn_cell::lstm, tensor(tensor_desc({21, 3}, ft::oi)), w, 0, 0);
    });
    expect_error(bad, {"rnn_import_weights", "src layout io"}, [&] {
        rnn_import_weights(rnn_framework::onnx, rnn_cell::lstm, tensor(tensor_desc({20, 3}, ft::io)), w, 0, 0);
    });
    expect_error(bad, {"rnn_import_weights", "layer = 2", "[0, 2)"},
            [&] { rnn_import_weights(rnn_framework::onnx, rnn_cell::lstm, src, w, 2, 0); });
    expect_error(bad, {"rnn_import_weights", "dir = 1", "[0, 1)"},
            [&] { rnn_import_weights(rnn_framework::onnx, rnn_cell::lstm, src, w, 0, 1); });
    expect_error(bad, {"rnn_import_weights", "weights layout ldgo"}, [&] {
        rnn_import_weights(rnn_framework::onnx, rnn_cell::lstm, src, tensor(tensor_desc({1, 1, 4, 5}, ft::ldgo)), 0, 0);
    });
    expect_error(bad, {"rnn_import_weights", "src has no memory"},
            [&] { rnn_import_weights(rnn_framework::onnx, rnn_cell::lstm, tensor(), w, 0, 0); });
    const tensor bias(tensor_desc({1, 1, 3, 5}, ft::ldgo));
    expect_error(bad, {"rnn_import_bias", "dims[2] (g) = 3", "4 bias gates", "lbr_gru"},
            [&] { rnn_import_bias(rnn_framework::pytorch, rnn_cell::lbr_gru, tensor(), tensor(), bias, 0, 0); });
    expect_error(bad, {"rnn_import_bias", "b_hh is x:14", "x:15"}, [&] {
        rnn_import_bias(rnn_framework::pytorch, rnn_cell::gru, tensor(), tensor(tensor_desc({14}, ft::x)), bias, 0, 0);
    });
    // In place, PyTorch's [gates * dhc, i] matrix in the weights' own memory: the transposing
    // copy would overwrite what it reads later.
    expect_error(bad, {"rnn_import_weights", "weights (", ") overlaps src (", "in memory"}, [&] {
        rnn_import_weights(
                rnn_framework::pytorch, rnn_cell::lstm, tensor(tensor_desc({20, 3}, ft::oi), w.data()), w, 0, 0);
    });
    expect_error(bad, {"rnn_import_bias", "bias (", ") overlaps b_hh ("}, [&] {
        rnn_import_bias(rnn_framework::pytorch, rnn_cell::gru, tensor(), tensor(tensor_desc({15}, ft::x), bias.data()),
                bias, 0, 0);
    });
    for (dim_t k = 0; k < w.desc().nelems(); ++k) ASSERT_EQ(w.f32()[k], 0.f);
    for (dim_t k = 0; k < bias.desc().nelems(); ++k) ASSERT_EQ(bias.f32()[k], 0.f);
}

} // namespace
