// SPDX-License-Identifier: Apache-2.0
// ONNX conformance for batch normalization and the recurrent ops: every BatchNormalization,
// RNN, LSTM and GRU case of Debian's libonnx-testdata (node tests and the pytorch-converted
// BatchNorm cases) is run through blockdnn and compared with ONNX's stored outputs. Each case
// is listed as run, skipped (an attribute or input blockdnn does not support, with the reason)
// or failed, and the counts are printed. Batch norm also runs in a blocked layout, which
// must give the same bits.
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "conformance/onnx_data.hpp"
#include "common/test_util.hpp"
#include "testing/tolerances.hpp"

using namespace blockdnn;
using ft = format_tag;
using onnx_data::array_t;
using onnx_data::case_t;
using onnx_data::node_t;

namespace {

// Thrown to skip a case, with the reason.
struct unsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void only_attributes(const node_t &n, const std::set<std::string> &known) {
    for (const auto &[name, a] : n.attrs)
        if (!known.count(name)) throw unsupported("attribute '" + name + "' is not supported");
}

dims_t to_dims(const array_t &a) { return dims_t(a.dims.begin(), a.dims.end()); }

// A tensor holding a copy of a's data, read as `desc` (a's memory order must be desc's).
tensor from_array(const array_t &a, const tensor_desc &desc) {
    if (static_cast<dim_t>(a.data.size()) != desc.nelems())
        throw std::runtime_error(a.name + " has " + std::to_string(a.data.size()) + " values, expected "
                + std::to_string(desc.nelems()));
    tensor t(desc);
    std::memcpy(t.f32(), a.data.data(), a.data.size() * 4);
    return t;
}

std::vector<float> values(const tensor &t) { return {t.f32(), t.f32() + t.desc().nelems()}; }

// Outputs compared in the current case; a case that compares none fails.
thread_local int n_compared = 0;

// Checks one output against the expected array of the same graph output name; returns an
// error text, or "" if it matches within tol (or is not a graph output).
std::string compare(const case_t &c, const std::string &name, const std::vector<float> &got, double tol) {
    for (const array_t &e : c.expected) {
        if (e.name != name) continue;
        ++n_compared;
        const double err = tol::rel_err(got, e.data);
        if (!(err <= tol)) {
            std::ostringstream os;
            os << name << " error " << std::scientific << err << " > " << tol << "; ";
            return os.str();
        }
        return "";
    }
    return "";
}

// ------------------------------------------------------------------ BatchNormalization

ft plain_tag(int ndims) {
    switch (ndims) {
    case 2: return ft::nc;
    case 3: return ft::ncw;
    case 4: return ft::nchw;
    default: return ft::ncdhw;
    }
}

ft blocked_tag(int ndims) {
    switch (ndims) {
    case 3: return ft::nCw16c;
    case 4: return ft::nChw8c;
    case 5: return ft::nCdhw16c;
    default: return ft::nc;
    }
}

// Returns "" on success or the failure text.
std::string run_bnorm(const case_t &c) {
    if (c.nodes.size() != 1) throw unsupported("graph has " + std::to_string(c.nodes.size()) + " nodes");
    const node_t &n = c.nodes[0];
    only_attributes(n, {"epsilon", "momentum", "training_mode", "is_test", "spatial"});
    if (n.get_i("spatial", 1) != 1) throw unsupported("spatial = 0 (per-element statistics)");
    if (n.inputs.size() != 5) throw unsupported(std::to_string(n.inputs.size()) + " inputs");
    const bool training = n.get_i("training_mode", 0) != 0;
    if (n.outputs.size() > 3) throw unsupported("saved_mean / saved_var outputs (opset < 14)");
    const array_t &X = c.value(n.inputs[0]);
    const int nd = static_cast<int>(X.dims.size());
    if (nd < 2 || nd > 5) throw unsupported("input with " + std::to_string(nd) + " dims");
    const tensor_desc sd(to_dims(X), plain_tag(nd));
    const dim_t C = sd.dim(1);
    const tensor_desc cd({C}, ft::x);
    const tensor src = from_array(X, sd), scale = from_array(c.value(n.inputs[1]), cd),
                 shift = from_array(c.value(n.inputs[2]), cd), mean_in = from_array(c.value(n.inputs[3]), cd),
                 var_in = from_array(c.value(n.inputs[4]), cd);
    const float eps = n.get_f("epsilon", 1e-5f), momentum = n.get_f("momentum", 0.9f);
    const bnorm_flags flags = bnorm_flags::use_scale | bnorm_flags::use_shift;
    const bnorm_mode mode = training ? bnorm_mode::training : bnorm_mode::inference;

    const bnorm_fwd op({mode, sd, {}, eps, flags});
    const tensor dst(sd), mean(cd), var(cd);
    if (training) op.execute({src, dst, mean, var, scale, shift});
    else op.execute({src, dst, mean_in, var_in, scale, shift});
    std::string err = compare(c, n.outputs[0], values(dst), tol::bnorm);
    if (training && n.outputs.size() == 3) {
        // ONNX: running = input * momentum + batch * (1 - momentum), biased variance.
        const tensor rm = from_array(c.value(n.inputs[3]), cd), rv = from_array(c.value(n.inputs[4]), cd);
        bnorm_update_running_stats(mean, var, sd.nelems() / C, 1.f - momentum, false, rm, rv);
        err += compare(c, n.outputs[1], values(rm), tol::bnorm_stats);
        err += compare(c, n.outputs[2], values(rv), tol::bnorm_stats);
    }
    if (nd > 2) {
        // The same in a blocked layout, against ONNX's output too (the reference gives the plain
        // run's bits; JIT implementations walk each layout in its own order).
        const tensor src_b = reorder(src, blocked_tag(nd)), dst_b(src_b.desc());
        const tensor mean_b = training ? tensor(cd) : mean_in, var_b = training ? tensor(cd) : var_in;
        bnorm_fwd({mode, src_b.desc(), {}, eps, flags}).execute({src_b, dst_b, mean_b, var_b, scale, shift});
        const tensor back = reorder(dst_b, sd.tag());
        const std::string err_b = compare(c, n.outputs[0], values(back), tol::bnorm);
        if (!err_b.empty()) err += std::string(" blocked ") + to_string(blocked_tag(nd)) + ": " + err_b;
    }
    return err;
}

// ------------------------------------------------------------------ RNN, LSTM, GRU

// ONNX's per-direction activation list must be the op's default (or, for RNN, one blockdnn
// has) in every direction.
eltwise_alg rnn_activation(const node_t &n, rnn_cell cell, dim_t D) {
    std::vector<std::string> want;
    if (cell == rnn_cell::vanilla_rnn) want = {"Tanh"};
    else if (cell == rnn_cell::lstm) want = {"Sigmoid", "Tanh", "Tanh"};
    else want = {"Sigmoid", "Tanh"};
    if (!n.has("activations")) return eltwise_alg::tanh;
    if (n.has("activation_alpha") || n.has("activation_beta")) throw unsupported("activation_alpha / activation_beta");
    const std::vector<std::string> &got = n.attrs.at("activations").strings;
    if (static_cast<dim_t>(got.size()) != D * static_cast<dim_t>(want.size()))
        throw unsupported("activations list of " + std::to_string(got.size()) + " entries");
    if (cell == rnn_cell::vanilla_rnn) {
        for (const std::string &a : got)
            if (a != got[0]) throw unsupported("different activations per direction");
        if (got[0] == "Tanh") return eltwise_alg::tanh;
        if (got[0] == "Relu") return eltwise_alg::relu;
        if (got[0] == "Sigmoid") return eltwise_alg::sigmoid;
        throw unsupported("activation " + got[0]);
    }
    for (std::size_t k = 0; k < got.size(); ++k)
        if (got[k] != want[k % want.size()]) throw unsupported("activation " + got[k] + " (only the defaults)");
    return eltwise_alg::tanh;
}

bool given(const case_t &c, const node_t &n, std::size_t k) { return n.inputs.size() > k && c.has_value(n.inputs[k]); }

std::string run_rnn(const case_t &c) {
    if (c.nodes.size() != 1) throw unsupported("graph has " + std::to_string(c.nodes.size()) + " nodes");
    const node_t &n = c.nodes[0];
    const rnn_cell cell = n.op_type == "LSTM" ? rnn_cell::lstm
            : n.op_type == "GRU"              ? (n.get_i("linear_before_reset", 0) ? rnn_cell::lbr_gru : rnn_cell::gru)
                                              : rnn_cell::vanilla_rnn;
    only_attributes(n,
            {"hidden_size", "direction", "layout", "activations", "activation_alpha", "activation_beta", "clip",
                    "input_forget", "linear_before_reset"});
    if (n.has("clip")) throw unsupported("clip (cell clipping)");
    if (n.get_i("input_forget", 0) != 0) throw unsupported("input_forget = 1 (coupled input and forget gates)");
    if (given(c, n, 7)) throw unsupported("peepholes (input P)");
    const std::string direction = n.get_s("direction", "forward");
    const dim_t D = direction == "bidirectional" ? 2 : 1;
    const bool batchwise = n.get_i("layout", 0) == 1;
    const eltwise_alg act = rnn_activation(n, cell, D);

    const array_t &X = c.value(n.inputs[0]);
    const dim_t T = batchwise ? X.dims[1] : X.dims[0], N = batchwise ? X.dims[0] : X.dims[1], I = X.dims[2];
    const dim_t H = n.get_i("hidden_size", 0), G = rnn_n_gates(cell);
    if (given(c, n, 4))
        for (float len : c.value(n.inputs[4]).data)
            if (static_cast<dim_t>(len) != T) throw unsupported("sequence_lens shorter than the sequence");

    rnn_desc d;
    d.cell = cell;
    d.activation = act;
    d.direction = D == 2 ? rnn_direction::bi_concat : direction == "reverse" ? rnn_direction::r2l : rnn_direction::l2r;
    d.t = T;
    d.mb = N;
    d.slc = I;
    d.dhc = H;
    d.src_layer_tag = batchwise ? ft::ntc : ft::tnc; // ONNX X memory is [T][N][I] or [N][T][I]
    const rnn_fwd op(d);

    const tensor wl(op.weights_layer_desc()), wi(op.weights_iter_desc()), bias(op.bias_desc());
    const array_t &W = c.value(n.inputs[1]), &R = c.value(n.inputs[2]);
    for (dim_t dir = 0; dir < D; ++dir) {
        std::vector<float> w(W.data.begin() + dir * G * H * I, W.data.begin() + (dir + 1) * G * H * I);
        std::vector<float> r(R.data.begin() + dir * G * H * H, R.data.begin() + (dir + 1) * G * H * H);
        rnn_import_weights(rnn_framework::onnx, cell, tensor(tensor_desc({G * H, I}, ft::oi), w.data()), wl, 0, dir);
        rnn_import_weights(rnn_framework::onnx, cell, tensor(tensor_desc({G * H, H}, ft::oi), r.data()), wi, 0, dir);
        if (given(c, n, 3)) {
            const array_t &B = c.value(n.inputs[3]); // [D][2 * G * H]: Wb then Rb
            std::vector<float> wb(B.data.begin() + dir * 2 * G * H, B.data.begin() + dir * 2 * G * H + G * H);
            std::vector<float> rb(B.data.begin() + dir * 2 * G * H + G * H, B.data.begin() + (dir + 1) * 2 * G * H);
            rnn_import_bias(rnn_framework::onnx, cell, tensor(tensor_desc({G * H}, ft::x), wb.data()),
                    tensor(tensor_desc({G * H}, ft::x), rb.data()), bias, 0, dir);
        }
    }
    // ONNX states are [D][N][H] (layout 0) or [N][D][H] (layout 1); blockdnn's are (l, d, n, c).
    auto state_in = [&](std::size_t k) {
        if (!given(c, n, k)) return tensor();
        const array_t &a = c.value(n.inputs[k]);
        tensor t(op.src_iter_desc());
        for (dim_t dir = 0; dir < D; ++dir)
            for (dim_t b = 0; b < N; ++b)
                for (dim_t h = 0; h < H; ++h)
                    t.f32()[(dir * N + b) * H + h] = a.data[batchwise ? (b * D + dir) * H + h : (dir * N + b) * H + h];
        return t;
    };
    const tensor src = from_array(X, op.src_layer_desc());
    const tensor dst(op.dst_layer_desc()), hT(op.dst_iter_desc());
    const tensor cT = cell == rnn_cell::lstm ? tensor(op.dst_iter_desc()) : tensor();
    op.execute({src, state_in(5), cell == rnn_cell::lstm ? state_in(6) : tensor(), wl, wi, bias, dst, hT, cT});

    // Back to ONNX's layouts: Y [T][D][N][H] or [N][T][D][H]; Y_h, Y_c [D][N][H] or [N][D][H].
    std::vector<float> Y(T * D * N * H), Yh(D * N * H), Yc(D * N * H);
    for (dim_t t = 0; t < T; ++t)
        for (dim_t dir = 0; dir < D; ++dir)
            for (dim_t b = 0; b < N; ++b)
                for (dim_t h = 0; h < H; ++h) {
                    const float v = dst.f32()[(t * N + b) * D * H + dir * H + h]; // tnc, [l2r | r2l]
                    Y[batchwise ? ((b * T + t) * D + dir) * H + h : ((t * D + dir) * N + b) * H + h] = v;
                }
    for (dim_t dir = 0; dir < D; ++dir)
        for (dim_t b = 0; b < N; ++b)
            for (dim_t h = 0; h < H; ++h) {
                const dim_t at = batchwise ? (b * D + dir) * H + h : (dir * N + b) * H + h;
                Yh[at] = hT.f32()[(dir * N + b) * H + h];
                if (!cT.empty()) Yc[at] = cT.f32()[(dir * N + b) * H + h];
            }
    std::string err;
    if (n.outputs.size() > 0 && !n.outputs[0].empty()) err += compare(c, n.outputs[0], Y, tol::rnn);
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) err += compare(c, n.outputs[1], Yh, tol::rnn);
    if (n.outputs.size() > 2 && !n.outputs[2].empty()) err += compare(c, n.outputs[2], Yc, tol::rnn);
    return err;
}

// Runs every case of `suite` holding one of `ops` through `run`, reporting each.
void run_suite(onnx_data::report_t &rep, const std::string &suite, const std::vector<std::string> &ops,
        std::string (*run)(const case_t &)) {
    for (const std::string &name : onnx_data::find_cases(suite, ops)) {
        const std::string label = suite + "/" + name;
        try {
            const case_t c = onnx_data::load_case(onnx_data::data_root() + "/" + suite + "/" + name);
            n_compared = 0;
            std::string err = run(c);
            if (n_compared == 0) err += "no output was compared";
            if (err.empty()) rep.ran(label);
            else rep.failed(label, err);
        } catch (const unsupported &e) {
            rep.skipped(label, e.what());
        } catch (const std::exception &e) {
            rep.failed(label, e.what());
        }
    }
}

TEST(OnnxConformance, BatchNormalization) {
    onnx_data::report_t rep("onnx BatchNormalization");
    run_suite(rep, "node", {"BatchNormalization"}, run_bnorm);
    run_suite(rep, "pytorch-converted", {"BatchNormalization"}, run_bnorm);
    rep.print();
    EXPECT_EQ(rep.n_failed(), 0);
    EXPECT_GE(rep.run(), 9) << "4 node cases (2 training_mode) and 5 pytorch-converted BatchNorm cases expected";
}

// At every ISA level the machine has: the reference and each JIT implementation.
TEST(OnnxConformance, RnnLstmGru) {
    isa_guard guard;
    for (isa level : available_isas()) {
        set_max_isa(level);
        onnx_data::report_t rep(std::string("onnx RNN/LSTM/GRU at ") + to_string(level));
        run_suite(rep, "node", {"RNN", "LSTM", "GRU"}, run_rnn);
        run_suite(rep, "pytorch-converted", {"RNN", "LSTM", "GRU"}, run_rnn);
        run_suite(rep, "pytorch-operator", {"RNN", "LSTM", "GRU"}, run_rnn);
        rep.print();
        EXPECT_EQ(rep.n_failed(), 0) << to_string(level);
        EXPECT_GE(rep.run(), 11) << "12 node cases expected, peepholes skipped";
    }
}

} // namespace
