// SPDX-License-Identifier: Apache-2.0
// Setup the rnn_fwd and rnn_stack_fwd tests share: framework weights drawn as PyTorch
// initialises them and imported into the library's tensors, inputs and states, the oracle run
// per (layer, direction), the directions combined as dst_layer holds them, and the descriptor
// rules both ops check.
#pragma once

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "rnn_oracle.hpp"
#include "common/isa_param.hpp"
#include "common/test_util.hpp"
#include "testing/tolerances.hpp"

namespace rnn_test {

using blockdnn::dim_t;
using blockdnn::rnn_cell;
using blockdnn::rnn_desc;
using blockdnn::rnn_direction;
using blockdnn::tensor;
using blockdnn::tensor_desc;

inline std::vector<float> uniform(std::mt19937 &gen, std::size_t n, float k) {
    std::uniform_real_distribution<float> u(-k, k);
    std::vector<float> v(n);
    for (float &f : v) f = u(gen);
    return v;
}

inline tensor wrap(const tensor_desc &d, std::vector<float> &v) { return tensor(d, v.data()); }

/// Logical elements of t, in canonical order (empty for an empty tensor).
inline std::vector<float> logical(const tensor &t) {
    std::vector<float> v;
    if (t.empty()) return v;
    for_each_index(t.desc(), [&](const dim_t *idx) { v.push_back(t.f32()[t.desc().offset(idx)]); });
    return v;
}

/// "lstm:bi_concat l2t7mb3slc5dhc10" (vanilla cells add ":activation" after the direction).
inline std::string desc_text(const rnn_desc &d) {
    return std::string(to_string(d.cell)) + ":" + to_string(d.direction)
            + (d.cell == rnn_cell::vanilla_rnn ? std::string(":") + to_string(d.activation) : "") + " l"
            + std::to_string(d.l) + "t" + std::to_string(d.t) + "mb" + std::to_string(d.mb) + "slc"
            + std::to_string(d.slc) + "dhc" + std::to_string(d.dhc);
}

/// Draws case k's cell (k % 4), direction ((k / 4) % 4), vanilla activation and alpha, then l
/// in [1, 3]: the first draws of both random-stack tests.
inline void draw_cell(std::mt19937 &gen, int k, rnn_desc &d) {
    const rnn_cell cells[] = {rnn_cell::vanilla_rnn, rnn_cell::lstm, rnn_cell::gru, rnn_cell::lbr_gru};
    const rnn_direction dirs[] = {
            rnn_direction::l2r, rnn_direction::r2l, rnn_direction::bi_concat, rnn_direction::bi_sum};
    const blockdnn::eltwise_alg acts[] = {
            blockdnn::eltwise_alg::tanh, blockdnn::eltwise_alg::relu, blockdnn::eltwise_alg::sigmoid};
    auto pick = [&](dim_t lo, dim_t hi) { return std::uniform_int_distribution<dim_t>(lo, hi)(gen); };
    d.cell = cells[k % 4];
    d.direction = dirs[(k / 4) % 4];
    d.activation = acts[pick(0, 2)];
    d.alpha = d.activation == blockdnn::eltwise_alg::relu && pick(0, 1) ? 0.1f : 0.f;
    // Drawn for every cell so that the draws after them stay as they were; only vanilla_rnn
    // takes them.
    if (d.cell != rnn_cell::vanilla_rnn) d.activation = blockdnn::eltwise_alg::tanh, d.alpha = 0.f;
    d.l = pick(1, 3);
}

/// Draws the data layouts (tnc / ntc) and weight layouts (ldigo / ldgoi), in that order.
inline void draw_tags(std::mt19937 &gen, rnn_desc &d) {
    using ft = blockdnn::format_tag;
    auto coin = [&] { return std::uniform_int_distribution<dim_t>(0, 1)(gen) != 0; };
    d.src_layer_tag = coin() ? ft::tnc : ft::ntc;
    d.dst_layer_tag = coin() ? ft::tnc : ft::ntc;
    d.weights_layer_tag = coin() ? ft::ldigo : ft::ldgoi;
    d.weights_iter_tag = coin() ? ft::ldigo : ft::ldgoi;
}

/// One (layer, direction) of framework fw reading I channels, its W, R, b_ih and b_hh drawn in
/// that order from U(-1/sqrt(dhc), 1/sqrt(dhc)), PyTorch's initialisation.
inline rnn_oracle::layer_t random_layer(std::mt19937 &gen, blockdnn::rnn_framework fw, const rnn_desc &d, dim_t I) {
    const dim_t G = blockdnn::rnn_n_gates(d.cell), H = d.dhc;
    const float k = 1.f / std::sqrt(static_cast<float>(H));
    rnn_oracle::layer_t L;
    L.fw = fw;
    L.cell = d.cell;
    L.act = d.activation;
    L.alpha = d.alpha;
    L.I = I;
    L.H = H;
    L.W = uniform(gen, G * H * I, k);
    L.R = uniform(gen, G * H * H, k);
    L.b_ih = uniform(gen, G * H, k);
    L.b_hh = uniform(gen, G * H, k);
    return L;
}

/// Imports L's weights and biases into slice (lay, dir) of the library's weights_layer (wl),
/// weights_iter (wi) and bias tensors.
inline void import_layer(
        rnn_oracle::layer_t &L, const tensor &wl, const tensor &wi, const tensor &bias, dim_t lay, dim_t dir) {
    using ft = blockdnn::format_tag;
    const dim_t G = blockdnn::rnn_n_gates(L.cell), H = L.H;
    blockdnn::rnn_import_weights(L.fw, L.cell, wrap(tensor_desc({G * H, L.I}, ft::oi), L.W), wl, lay, dir);
    blockdnn::rnn_import_weights(L.fw, L.cell, wrap(tensor_desc({G * H, H}, ft::oi), L.R), wi, lay, dir);
    blockdnn::rnn_import_bias(L.fw, L.cell, wrap(tensor_desc({G * H}, ft::x), L.b_ih),
            wrap(tensor_desc({G * H}, ft::x), L.b_hh), bias, lay, dir);
}

/// A src_layer tensor of layout desc holding x, [t][mb][slc] in logical order.
inline tensor src_layer_of(const tensor_desc &desc, const std::vector<float> &x) {
    const tensor s(desc);
    std::size_t k = 0;
    for_each_index(desc, [&](const dim_t *idx) { s.f32()[desc.offset(idx)] = x[k++]; });
    return s;
}

/// Seeded initial states of layout desc: h from seed + 1, and for lstm c from seed + 2.
inline void random_states(const tensor_desc &desc, rnn_cell cell, unsigned seed, tensor &h, tensor &c) {
    h = tensor(desc);
    fill_random(h, seed + 1);
    if (cell == rnn_cell::lstm) {
        c = tensor(desc);
        fill_random(c, seed + 2);
    }
}

/// The states of a stack of D directions run through the oracle, each [l][D][mb][dhc]: the
/// initial ones read from src_iter / src_iter_c (empty: zeros), the final ones as computed.
struct oracle_states_t {
    dim_t D;
    std::vector<float> h0, c0, h, c;
    oracle_states_t(const rnn_desc &d, dim_t n_dirs, const tensor &src_iter, const tensor &src_iter_c)
        : D(n_dirs), h0(logical(src_iter)), c0(logical(src_iter_c)), h(d.l * n_dirs * d.mb * d.dhc, 0.f), c(h) {}
};

/// Runs the oracle's layer L over in [t][mb][I] as slice (lay, dir) of the stack whose states
/// st holds, writing its final states there. Returns [t][mb][dhc].
inline std::vector<float> oracle_layer(const rnn_oracle::layer_t &L, const std::vector<float> &in, const rnn_desc &d,
        dim_t lay, dim_t dir, oracle_states_t &st) {
    const dim_t N = d.mb, H = d.dhc, at = (lay * st.D + dir) * N * H;
    std::vector<float> h(N * H, 0.f), cs(N * H, 0.f);
    if (!st.h0.empty()) std::copy(st.h0.begin() + at, st.h0.begin() + at + N * H, h.begin());
    if (!st.c0.empty()) std::copy(st.c0.begin() + at, st.c0.begin() + at + N * H, cs.begin());
    const bool reverse = d.direction == rnn_direction::r2l || dir == 1;
    std::vector<float> out = rnn_oracle::run(L, in, d.t, N, reverse, h, cs);
    std::copy(h.begin(), h.end(), st.h.begin() + at);
    std::copy(cs.begin(), cs.end(), st.c.begin() + at);
    return out;
}

/// dst_layer [t][mb][dlc] from each direction's output [t][mb][dhc]: concatenated (bi_concat),
/// summed (bi_sum) or the one direction.
inline std::vector<float> combine_dirs(const rnn_desc &d, const std::vector<std::vector<float>> &outs) {
    const dim_t T = d.t, N = d.mb, H = d.dhc, dlc = d.direction == rnn_direction::bi_concat ? 2 * H : H;
    std::vector<float> dst(T * N * dlc, 0.f);
    for (dim_t t = 0; t < T; ++t)
        for (dim_t n = 0; n < N; ++n)
            for (dim_t ch = 0; ch < dlc; ++ch) {
                const dim_t k = (t * N + n) * H + ch % H;
                dst[(t * N + n) * dlc + ch] =
                        d.direction == rnn_direction::bi_sum ? outs[0][k] + outs[1][k] : outs[ch / H][k];
            }
    return dst;
}

struct result_t {
    tensor dst_layer, dst_iter, dst_iter_c;
};

/// Output tensors for op (an rnn_fwd or rnn_stack_fwd); dst_iter_c only for lstm.
template <class Op>
result_t make_result(const Op &op) {
    result_t r {tensor(op.dst_layer_desc()), tensor(op.dst_iter_desc()), tensor()};
    if (op.desc().cell == rnn_cell::lstm) r.dst_iter_c = tensor(op.dst_iter_desc());
    return r;
}

/// Expects r within tol::rnn of the oracle's dst_layer, final h and, for lstm, final c.
inline void expect_near_oracle(rnn_cell cell, const result_t &r, const std::vector<float> &want,
        const std::vector<float> &want_h, const std::vector<float> &want_c) {
    const std::vector<float> got = logical(r.dst_layer), got_h = logical(r.dst_iter);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_LE(tol::rel_err(got.data(), want.data(), got.size()), tol::rnn) << "dst_layer";
    EXPECT_LE(tol::rel_err(got_h.data(), want_h.data(), got_h.size()), tol::rnn) << "dst_iter";
    if (cell == rnn_cell::lstm) {
        const std::vector<float> got_c = logical(r.dst_iter_c);
        EXPECT_LE(tol::rel_err(got_c.data(), want_c.data(), got_c.size()), tol::rnn) << "dst_iter_c";
    }
}

/// Runs each test at every ISA level the machine has, dispatch capped there; impl() is the
/// entry that must serve it.
class isa_test : public bdtest::capped_isa_test<blockdnn::isa> {
protected:
    std::string impl() const {
        return GetParam() == blockdnn::isa::scalar ? "ref" : std::string("jit:") + to_string(GetParam());
    }
};

/// A small valid gru problem of l layers: t3 mb2 slc3 dhc4, l2r.
inline rnn_desc small_gru_desc(dim_t l) {
    rnn_desc d;
    d.cell = rnn_cell::gru;
    d.l = l;
    d.t = 3;
    d.mb = 2;
    d.slc = 3;
    d.dhc = 4;
    return d;
}

/// The descriptor rules rnn_fwd and rnn_stack_fwd share, each broken alone in
/// small_gru_desc(l): Op's constructor throws, naming the op (name), the field and its value.
template <class Op>
void expect_desc_errors(const char *name, dim_t l) {
    const rnn_desc base = small_gru_desc(l);
    using blockdnn::eltwise_alg;
    using ft = blockdnn::format_tag;
    const blockdnn::status bad = blockdnn::status::invalid_arguments;
    auto with = [&](auto change) {
        rnn_desc d = base;
        change(d);
        return [d] { Op op(d); };
    };
    expect_error(bad, {name, "l = 0", "positive"}, with([](rnn_desc &d) { d.l = 0; }));
    expect_error(bad, {name, "t = -1"}, with([](rnn_desc &d) { d.t = -1; }));
    expect_error(bad, {name, "mb = 0"}, with([](rnn_desc &d) { d.mb = 0; }));
    expect_error(bad, {name, "dhc = 0"}, with([](rnn_desc &d) { d.dhc = 0; }));
    expect_error(bad, {name, "slc = 0"}, with([](rnn_desc &d) { d.slc = 0; }));
    expect_error(bad, {name, "sic = 5", "dhc = 4"}, with([](rnn_desc &d) { d.sic = 5; }));
    expect_error(
            blockdnn::status::unimplemented, {name, "dic = 3", "projection"}, with([](rnn_desc &d) { d.dic = 3; }));
    expect_error(bad, {name, "activation = gelu_erf", "vanilla_rnn"}, with([](rnn_desc &d) {
        d.cell = rnn_cell::vanilla_rnn;
        d.activation = eltwise_alg::gelu_erf;
    }));
    expect_error(bad, {name, "activation = relu", "vanilla_rnn only", "lstm"}, with([](rnn_desc &d) {
        d.cell = rnn_cell::lstm;
        d.activation = eltwise_alg::relu;
    }));
    expect_error(bad, {name, "activation = sigmoid", "gru"}, with([](rnn_desc &d) {
        d.cell = rnn_cell::gru;
        d.activation = eltwise_alg::sigmoid;
    }));
    expect_error(bad, {name, "alpha = 0.5", "lbr_gru"}, with([](rnn_desc &d) {
        d.cell = rnn_cell::lbr_gru;
        d.alpha = 0.5f;
    }));
    expect_error(bad, {name, "alpha = 0.25", "vanilla_rnn with sigmoid"}, with([](rnn_desc &d) {
        d.cell = rnn_cell::vanilla_rnn;
        d.activation = eltwise_alg::sigmoid;
        d.alpha = 0.25f;
    }));
    expect_error(bad, {name, "alpha = inf", "not finite"}, with([](rnn_desc &d) {
        d.cell = rnn_cell::vanilla_rnn;
        d.activation = eltwise_alg::relu;
        d.alpha = std::numeric_limits<float>::infinity();
    }));
    expect_error(bad, {name, "src_layer_tag = nchw"}, with([](rnn_desc &d) { d.src_layer_tag = ft::nchw; }));
    expect_error(bad, {name, "dst_layer_tag = ldnc"}, with([](rnn_desc &d) { d.dst_layer_tag = ft::ldnc; }));
    expect_error(bad, {name, "weights_layer_tag = ldgo"}, with([](rnn_desc &d) { d.weights_layer_tag = ft::ldgo; }));
    expect_error(bad, {name, "weights_iter_tag = oihw"}, with([](rnn_desc &d) { d.weights_iter_tag = ft::oihw; }));
    expect_error(bad, {name, "cell = 9"}, with([](rnn_desc &d) { d.cell = static_cast<rnn_cell>(9); }));
    expect_error(bad, {name, "direction = 7"}, with([](rnn_desc &d) { d.direction = static_cast<rnn_direction>(7); }));
}

} // namespace rnn_test
