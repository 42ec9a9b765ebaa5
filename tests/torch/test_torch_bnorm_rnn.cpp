// SPDX-License-Identifier: Apache-2.0
// PyTorch as oracle for batch normalization and the recurrent ops: the cases that
// tests/torch/gen_bnorm.py and gen_rnn.py write at build time (nn.BatchNorm1d/2d/3d in train
// and eval mode; nn.RNN / nn.LSTM / nn.GRU, 1 and 2 layers, one direction and bidirectional,
// with and without initial states, batch_first, and nn.RNN(10, 10) on a (100, 10) input)
// run through blockdnn, converting PyTorch's parameters with rnn_import_*. Each case is listed
// with its error; the counts are printed.
#include <cstring>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "common/test_util.hpp"
#include "testing/tolerances.hpp"
#include "torch/torch_data.hpp"

using namespace blockdnn;
using ft = format_tag;

namespace {

std::vector<std::string> cases_with_prefix(const std::string &prefix) {
    std::vector<std::string> v;
    for (const auto &e : std::filesystem::directory_iterator(torch_data::cases_dir())) {
        const std::string name = e.path().filename().string();
        if (name.rfind(prefix, 0) == 0) v.push_back(name);
    }
    std::sort(v.begin(), v.end());
    return v;
}

tensor to_tensor(const torch_data::array_t &a, const tensor_desc &d) {
    EXPECT_EQ(static_cast<dim_t>(a.data.size()), d.nelems()) << d.str();
    tensor t(d);
    std::memcpy(t.f32(), a.data.data(), std::min<std::size_t>(a.data.size(), d.nelems()) * 4);
    return t;
}

double err_of(const tensor &got, const torch_data::array_t &want) {
    if (static_cast<dim_t>(want.data.size()) != got.desc().nelems()) return INFINITY;
    return tol::rel_err(got.f32(), want.data.data(), want.data.size());
}

struct tally_t {
    int run = 0, failed = 0;
    void line(const std::string &name, const std::string &what, double err, double bound) {
        ++run;
        const bool ok = err <= bound;
        failed += !ok;
        std::printf("  %s %s: %s max err %.3g (tol %.3g)\n", ok ? "ok    " : "FAILED", name.c_str(), what.c_str(), err,
                bound);
    }
};

// ------------------------------------------------------------------ batch norm

void check_bnorm(const std::string &name, tally_t &tally) {
    const auto meta = torch_data::load(name, "meta").data;
    const bool train = meta[0] != 0, affine = meta[1] != 0, relu = meta[2] != 0;
    const float eps = meta[3], momentum = meta[4];
    const auto x = torch_data::load(name, "x");
    const int nd = static_cast<int>(x.dims.size());
    const ft tags[] = {ft::undef, ft::undef, ft::nc, ft::ncw, ft::nchw, ft::ncdhw};
    const tensor_desc sd(dims_t(x.dims.begin(), x.dims.end()), tags[nd]);
    const dim_t C = sd.dim(1);
    const tensor_desc cd({C}, ft::x);
    const tensor src = to_tensor(x, sd);
    tensor scale, shift;
    bnorm_flags flags = relu ? bnorm_flags::fuse_relu : bnorm_flags::none;
    if (affine) {
        scale = to_tensor(torch_data::load(name, "weight"), cd);
        shift = to_tensor(torch_data::load(name, "bias"), cd);
        flags = flags | bnorm_flags::use_scale | bnorm_flags::use_shift;
    }
    const tensor rm0 = to_tensor(torch_data::load(name, "rm0"), cd), rv0 = to_tensor(torch_data::load(name, "rv0"), cd);
    const bnorm_mode mode = train ? bnorm_mode::training : bnorm_mode::inference;
    const tensor dst(sd), mean = train ? tensor(cd) : rm0, var = train ? tensor(cd) : rv0;
    bnorm_fwd({mode, sd, {}, eps, flags}).execute({src, dst, mean, var, scale, shift});
    tally.line(name, "y", err_of(dst, torch_data::load(name, "y")), tol::bnorm);
    if (train) {
        // PyTorch: running = (1 - momentum) * running + momentum * batch, unbiased variance.
        bnorm_update_running_stats(mean, var, sd.nelems() / C, momentum, true, rm0, rv0);
        tally.line(name, "running_mean", err_of(rm0, torch_data::load(name, "rm1")), tol::bnorm_stats);
        tally.line(name, "running_var", err_of(rv0, torch_data::load(name, "rv1")), tol::bnorm_stats);
    }
    if (nd > 2) {
        // Blocked: against PyTorch too (the reference repeats the plain run's bits; JIT
        // implementations walk each layout in its own order).
        const tensor src_b = to_blocked(src), dst_b(src_b.desc());
        const tensor mean_b = train ? tensor(cd) : mean, var_b = train ? tensor(cd) : var;
        bnorm_fwd({mode, src_b.desc(), {}, eps, flags}).execute({src_b, dst_b, mean_b, var_b, scale, shift});
        const tensor back = to_dense(dst_b);
        tally.line(name, std::string("y in ") + to_string(src_b.desc().tag()),
                err_of(back, torch_data::load(name, "y")), tol::bnorm);
    }
}

TEST(TorchCrossCheck, BatchNorm) {
    if (torch_data::cases_dir().empty()) GTEST_SKIP() << "PyTorch cases not generated (no python3-torch)";
    tally_t tally;
    std::printf("pytorch BatchNorm\n");
    const auto names = cases_with_prefix("bnorm_");
    for (const std::string &n : names) check_bnorm(n, tally);
    std::printf("pytorch BatchNorm: %zu cases, %d checks, %d failed\n", names.size(), tally.run, tally.failed);
    EXPECT_EQ(names.size(), 13u);
    EXPECT_EQ(tally.failed, 0);
}

// ------------------------------------------------------------------ RNN, LSTM, GRU

struct rnn_case_t {
    std::string name;
    rnn_cell cell;
    eltwise_alg act = eltwise_alg::tanh;
    dim_t L, D, I, H, T, N;
    bool batch_first, states;
    ft tag;
};

rnn_case_t read_rnn_case(const std::string &name) {
    const auto m = torch_data::load(name, "meta").data;
    rnn_case_t c;
    c.name = name;
    const int kind = static_cast<int>(m[0]);
    c.cell = kind == 2 ? rnn_cell::lstm : kind == 3 ? rnn_cell::lbr_gru : rnn_cell::vanilla_rnn;
    c.act = kind == 1 ? eltwise_alg::relu : eltwise_alg::tanh;
    c.L = static_cast<dim_t>(m[1]);
    c.D = m[2] != 0 ? 2 : 1;
    c.batch_first = m[3] != 0;
    c.states = m[4] != 0;
    c.I = static_cast<dim_t>(m[5]);
    c.H = static_cast<dim_t>(m[6]);
    const auto x = torch_data::load(name, "x");
    if (x.dims.size() == 2) { // unbatched (T, I)
        c.T = x.dims[0];
        c.N = 1;
    } else {
        c.T = x.dims[c.batch_first ? 1 : 0];
        c.N = x.dims[c.batch_first ? 0 : 1];
    }
    c.tag = c.batch_first ? ft::ntc : ft::tnc;
    return c;
}

tensor param(const rnn_case_t &c, const std::string &pname, const tensor_desc &d) {
    return to_tensor(torch_data::load(c.name, pname), d);
}

// Imports PyTorch's layer `k` (both directions) into slice (lay, *) of the op's tensors.
void import_layer(
        const rnn_case_t &c, dim_t k, dim_t slc, const tensor &wl, const tensor &wi, const tensor &b, dim_t lay) {
    const dim_t G = rnn_n_gates(c.cell), H = c.H;
    for (dim_t dir = 0; dir < c.D; ++dir) {
        const std::string sfx = "_l" + std::to_string(k) + (dir ? "_reverse" : "");
        rnn_import_weights(rnn_framework::pytorch, c.cell,
                param(c, "weight_ih" + sfx, tensor_desc({G * H, slc}, ft::oi)), wl, lay, dir);
        rnn_import_weights(rnn_framework::pytorch, c.cell, param(c, "weight_hh" + sfx, tensor_desc({G * H, H}, ft::oi)),
                wi, lay, dir);
        rnn_import_bias(rnn_framework::pytorch, c.cell, param(c, "bias_ih" + sfx, tensor_desc({G * H}, ft::x)),
                param(c, "bias_hh" + sfx, tensor_desc({G * H}, ft::x)), b, lay, dir);
    }
}

rnn_desc desc_for(const rnn_case_t &c, dim_t layers, dim_t slc) {
    rnn_desc d;
    d.cell = c.cell;
    d.activation = c.act;
    d.direction = c.D == 2 ? rnn_direction::bi_concat : rnn_direction::l2r;
    d.l = layers;
    d.t = c.T;
    d.mb = c.N;
    d.slc = slc;
    d.dhc = c.H;
    d.src_layer_tag = d.dst_layer_tag = c.tag;
    return d;
}

// States (L * D, N, H) of PyTorch are (l, d, n, c): layer k's part is a contiguous slice.
tensor state_slice(const rnn_case_t &c, const char *name, dim_t k, dim_t layers) {
    if (!c.states) return {};
    const auto a = torch_data::load(c.name, name);
    tensor t(tensor_desc({layers, c.D, c.N, c.H}, ft::ldnc));
    std::memcpy(t.f32(), a.data.data() + k * c.D * c.N * c.H, t.desc().size_bytes());
    return t;
}

void check_rnn(const std::string &name, tally_t &tally) {
    const rnn_case_t c = read_rnn_case(name);
    const bool lstm = c.cell == rnn_cell::lstm;
    const tensor_desc hn_desc({c.L, c.D, c.N, c.H}, ft::ldnc);
    // PyTorch's stacking: layer k + 1 reads both directions of layer k, so one op per layer.
    tensor in = to_tensor(torch_data::load(name, "x"), tensor_desc({c.T, c.N, c.I}, c.tag));
    const tensor hn(hn_desc), cn(hn_desc);
    for (dim_t k = 0; k < c.L; ++k) {
        const rnn_fwd op(desc_for(c, 1, in.desc().dim(2)));
        const tensor wl(op.weights_layer_desc()), wi(op.weights_iter_desc()), b(op.bias_desc());
        import_layer(c, k, in.desc().dim(2), wl, wi, b, 0);
        const tensor out(op.dst_layer_desc()), h(op.dst_iter_desc()), cs = lstm ? tensor(op.dst_iter_desc()) : tensor();
        op.execute(
                {in, state_slice(c, "h0", k, 1), lstm ? state_slice(c, "c0", k, 1) : tensor(), wl, wi, b, out, h, cs});
        const dim_t per_layer = c.D * c.N * c.H;
        std::memcpy(hn.f32() + k * per_layer, h.f32(), per_layer * 4);
        if (lstm) std::memcpy(cn.f32() + k * per_layer, cs.f32(), per_layer * 4);
        in = out;
    }
    tally.line(name, "out", err_of(in, torch_data::load(name, "out")), tol::rnn);
    tally.line(name, "h_n", err_of(hn, torch_data::load(name, "hn")), tol::rnn);
    if (lstm) tally.line(name, "c_n", err_of(cn, torch_data::load(name, "cn")), tol::rnn);

    // A unidirectional stack of equal widths is also one blockdnn op with l layers.
    if (c.L > 1 && c.D == 1 && c.I == c.H) {
        const rnn_fwd op(desc_for(c, c.L, c.I));
        const tensor wl(op.weights_layer_desc()), wi(op.weights_iter_desc()), b(op.bias_desc());
        for (dim_t k = 0; k < c.L; ++k) import_layer(c, k, c.I, wl, wi, b, k);
        const tensor out(op.dst_layer_desc()), h(op.dst_iter_desc()), cs = lstm ? tensor(op.dst_iter_desc()) : tensor();
        op.execute({to_tensor(torch_data::load(name, "x"), op.src_layer_desc()), state_slice(c, "h0", 0, c.L),
                lstm ? state_slice(c, "c0", 0, c.L) : tensor(), wl, wi, b, out, h, cs});
        tally.line(name, "out (one op, l=" + std::to_string(c.L) + ")", err_of(out, torch_data::load(name, "out")),
                tol::rnn);
        tally.line(name, "h_n (one op)", err_of(h, torch_data::load(name, "hn")), tol::rnn);
        tally.line(name, "one op vs per-layer ops",
                std::memcmp(out.f32(), in.f32(), out.desc().size_bytes()) == 0 ? 0.0 : INFINITY, 0.0);
    }
}

TEST(TorchCrossCheck, RnnLstmGru) {
    if (torch_data::cases_dir().empty()) GTEST_SKIP() << "PyTorch cases not generated (no python3-torch)";
    // At every ISA level the machine has: the reference and each JIT implementation.
    isa_guard guard;
    for (isa level : available_isas()) {
        set_max_isa(level);
        tally_t tally;
        std::printf("pytorch RNN/LSTM/GRU at %s\n", to_string(level));
        const auto names = cases_with_prefix("rnn_");
        for (const std::string &n : names) check_rnn(n, tally);
        std::printf("pytorch RNN/LSTM/GRU at %s: %zu cases, %d checks, %d failed\n", to_string(level), names.size(),
                tally.run, tally.failed);
        EXPECT_EQ(names.size(), 41u);
        EXPECT_EQ(tally.failed, 0) << to_string(level);
    }
}

} // namespace
