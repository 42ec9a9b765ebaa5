// SPDX-License-Identifier: Apache-2.0
// RNN forward: seeded random stacks (every cell, direction, layer count, with and without
// initial states, both data and weight layouts) against the framework-convention oracle, and
// exact invariants: bidirectional halves equal separate l2r / r2l runs, an l-layer stack
// equals l chained one-layer runs, a sequence split in two with the states carried over
// equals one run, batch rows are independent, gru equals lbr_gru where the two must agree.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "rnn_test_util.hpp"
#include "common/test_util.hpp"
#include "testing/tolerances.hpp"

using namespace blockdnn;
using namespace rnn_test;
using ft = format_tag;

namespace {

struct case_t {
    rnn_desc d;
    rnn_framework fw = rnn_framework::pytorch;
    bool with_states = false;
    unsigned seed = 0;
    std::string str() const {
        return desc_text(d) + " " + to_string(fw) + (with_states ? " states" : "") + " " + to_string(d.src_layer_tag)
                + "/" + to_string(d.weights_layer_tag) + " seed " + std::to_string(seed);
    }
};

// Framework weights of every (layer, direction), the library tensors imported from them, and
// the inputs.
struct setup_t {
    std::vector<std::vector<rnn_oracle::layer_t>> fw; // [dir][layer]
    tensor src_layer, src_iter, src_iter_c, wl, wi, bias;
    std::vector<float> x; // [t][mb][slc]
};

setup_t make_setup(const case_t &c, const rnn_fwd &op) {
    const rnn_desc &d = op.desc();
    std::mt19937 gen(c.seed);
    setup_t s;
    s.wl = tensor(op.weights_layer_desc());
    s.wi = tensor(op.weights_iter_desc());
    s.bias = tensor(op.bias_desc());
    s.fw.resize(op.n_dirs());
    for (dim_t dir = 0; dir < op.n_dirs(); ++dir)
        for (dim_t lay = 0; lay < d.l; ++lay) {
            rnn_oracle::layer_t L = random_layer(gen, c.fw, d, lay == 0 ? d.slc : d.dhc);
            import_layer(L, s.wl, s.wi, s.bias, lay, dir);
            s.fw[dir].push_back(std::move(L));
        }
    s.x = uniform(gen, d.t * d.mb * d.slc, 1.f);
    s.src_layer = src_layer_of(op.src_layer_desc(), s.x);
    if (c.with_states) random_states(op.src_iter_desc(), d.cell, c.seed, s.src_iter, s.src_iter_c);
    return s;
}

result_t run(const rnn_fwd &op, const setup_t &s) {
    const result_t r = make_result(op);
    op.execute({s.src_layer, s.src_iter, s.src_iter_c, s.wl, s.wi, s.bias, r.dst_layer, r.dst_iter, r.dst_iter_c});
    return r;
}

// The whole stack through the oracle: dst_layer [t][mb][dlc] and final states [l][d][mb][dhc].
void oracle_stack(const rnn_fwd &op, const setup_t &s, std::vector<float> &dst, std::vector<float> &h_out,
        std::vector<float> &c_out) {
    const rnn_desc &d = op.desc();
    const dim_t D = op.n_dirs();
    oracle_states_t st(d, D, s.src_iter, s.src_iter_c);
    std::vector<std::vector<float>> last(D);
    for (dim_t dir = 0; dir < D; ++dir) {
        std::vector<float> in = s.x;
        for (dim_t lay = 0; lay < d.l; ++lay) in = oracle_layer(s.fw[dir][lay], in, d, lay, dir, st);
        last[dir] = std::move(in);
    }
    dst = combine_dirs(d, last);
    h_out = std::move(st.h);
    c_out = std::move(st.c);
}

// Slice (lay, dir) of a tensor whose first two dims are (l, d), as a (1, 1, ...) tensor.
tensor slice(const tensor &t, dim_t lay, dim_t dir) {
    if (t.empty()) return {};
    dims_t dims = t.desc().dims();
    dims[0] = dims[1] = 1;
    tensor s(tensor_desc(dims, t.desc().tag()));
    for_each_index(s.desc(), [&](const dim_t *idx) {
        dim_t src_idx[max_ndims];
        std::copy(idx, idx + s.desc().ndims(), src_idx);
        src_idx[0] = lay;
        src_idx[1] = dir;
        s.f32()[s.desc().offset(idx)] = t.f32()[t.desc().offset(src_idx)];
    });
    return s;
}

// Runs one (lay, dir) slice of the stack as its own one-layer op on src (t, mb, channels).
result_t run_single(
        const rnn_desc &full, rnn_direction dir_mode, const setup_t &s, const tensor &src, dim_t lay, dim_t dir) {
    rnn_desc d = full;
    d.l = 1;
    d.direction = dir_mode;
    d.slc = src.desc().dim(2);
    d.src_layer_tag = src.desc().tag();
    const rnn_fwd op(d);
    setup_t one;
    one.src_layer = src;
    one.src_iter = slice(s.src_iter, lay, dir);
    one.src_iter_c = slice(s.src_iter_c, lay, dir);
    one.wl = slice(s.wl, lay, dir);
    one.wi = slice(s.wi, lay, dir);
    one.bias = slice(s.bias, lay, dir);
    return run(op, one);
}

case_t random_case(std::mt19937 &gen, int k) {
    // Every cell and every direction equally often; the rest drawn from the brief's ranges.
    auto pick = [&](dim_t lo, dim_t hi) { return std::uniform_int_distribution<dim_t>(lo, hi)(gen); };
    case_t c;
    draw_cell(gen, k, c.d);
    c.d.t = pick(1, 30);
    c.d.mb = pick(1, 9);
    c.d.dhc = pick(1, 70);
    c.d.slc = c.d.l > 1 ? c.d.dhc : pick(1, 70);
    // Keep each case's work (t * l * mb * dhc * (slc + dhc) multiply-adds per gate) small enough
    // for the sanitizer run: shrink dhc, then t, until it fits.
    auto work = [&] { return c.d.t * c.d.l * c.d.mb * c.d.dhc * (c.d.slc + c.d.dhc); };
    while (work() > 400000 && c.d.dhc > 4) {
        c.d.dhc = c.d.dhc * 2 / 3;
        if (c.d.l > 1) c.d.slc = c.d.dhc;
    }
    while (work() > 400000 && c.d.t > 1) c.d.t /= 2;
    draw_tags(gen, c.d);
    c.fw = pick(0, 1) ? rnn_framework::pytorch : rnn_framework::onnx;
    c.with_states = (k / 16) % 2 == 0;
    c.seed = static_cast<unsigned>(gen());
    return c;
}

// Each test runs at every ISA level the machine has: the reference (scalar) and the JIT
// entries (test_rnn_jit compares those with the reference in depth).
class RnnIsa : public rnn_test::isa_test {};

// 32 seeded cases: each cell x direction with and without initial states.
TEST_P(RnnIsa, RandomStacksMatchOracleAndInvariants) {
    std::mt19937 gen(20240601);
    for (int k = 0; k < 32; ++k) {
        const case_t c = random_case(gen, k);
        SCOPED_TRACE(c.str());
        const rnn_fwd op(c.d);
        ASSERT_EQ(op.impl_name(), impl());
        const setup_t s = make_setup(c, op);
        const result_t r = run(op, s);

        std::vector<float> want, want_h, want_c;
        oracle_stack(op, s, want, want_h, want_c);
        expect_near_oracle(c.d.cell, r, want, want_h, want_c);
        const std::vector<float> got = logical(r.dst_layer), got_h = logical(r.dst_iter);

        // Each direction as its own stack of one-layer ops, chained: bit-identical.
        const dim_t D = op.n_dirs(), H = c.d.dhc, N = c.d.mb;
        std::vector<std::vector<float>> halves(D);
        for (dim_t dir = 0; dir < D; ++dir) {
            const rnn_direction mode =
                    c.d.direction == rnn_direction::r2l || dir == 1 ? rnn_direction::r2l : rnn_direction::l2r;
            tensor in = s.src_layer;
            for (dim_t lay = 0; lay < c.d.l; ++lay) {
                const result_t one = run_single(c.d, mode, s, in, lay, dir);
                const std::vector<float> h1 = logical(one.dst_iter);
                EXPECT_EQ(0, std::memcmp(h1.data(), &got_h[(lay * D + dir) * N * H], h1.size() * 4))
                        << "dst_iter of layer " << lay << " dir " << dir;
                if (c.d.cell == rnn_cell::lstm) {
                    const std::vector<float> c1 = logical(one.dst_iter_c), call = logical(r.dst_iter_c);
                    EXPECT_EQ(0, std::memcmp(c1.data(), &call[(lay * D + dir) * N * H], c1.size() * 4))
                            << "dst_iter_c of layer " << lay << " dir " << dir;
                }
                in = one.dst_layer;
            }
            halves[dir] = logical(in);
        }
        const std::vector<float> joined = combine_dirs(c.d, halves);
        ASSERT_EQ(joined.size(), got.size());
        dim_t mismatches = 0;
        for (std::size_t k = 0; k < got.size(); ++k) mismatches += std::memcmp(&joined[k], &got[k], 4) != 0;
        EXPECT_EQ(mismatches, 0) << "dst_layer vs separate directions / chained layers";
    }
}

// A sequence run in two parts, the final states of the first fed as the initial states of
// the second, equals one run over the whole sequence (l2r); row n of a batch equals a batch
// of that row alone.
TEST_P(RnnIsa, SplitSequenceAndBatchRowsAreExact) {
    for (rnn_cell cell : {rnn_cell::vanilla_rnn, rnn_cell::lstm, rnn_cell::gru, rnn_cell::lbr_gru}) {
        SCOPED_TRACE(to_string(cell));
        case_t c;
        c.d.cell = cell;
        c.d.l = 2;
        c.d.t = 7;
        c.d.mb = 3;
        c.d.slc = c.d.dhc = 5;
        c.with_states = true;
        c.seed = 99;
        const rnn_fwd op(c.d);
        const setup_t s = make_setup(c, op);
        const result_t all = run(op, s);

        rnn_desc d1 = c.d, d2 = c.d;
        d1.t = 3;
        d2.t = 4;
        const rnn_fwd op1(d1), op2(d2);
        setup_t s1 = s, s2 = s;
        s1.src_layer = tensor(op1.src_layer_desc());
        s2.src_layer = tensor(op2.src_layer_desc());
        const dim_t per_t = c.d.mb * c.d.slc;
        std::memcpy(s1.src_layer.f32(), s.src_layer.f32(), 3 * per_t * 4);
        std::memcpy(s2.src_layer.f32(), s.src_layer.f32() + 3 * per_t, 4 * per_t * 4);
        const result_t r1 = run(op1, s1);
        s2.src_iter = r1.dst_iter;
        s2.src_iter_c = r1.dst_iter_c;
        const result_t r2 = run(op2, s2);
        const dim_t out_t = c.d.mb * c.d.dhc;
        EXPECT_EQ(0, std::memcmp(r1.dst_layer.f32(), all.dst_layer.f32(), 3 * out_t * 4));
        EXPECT_EQ(0, std::memcmp(r2.dst_layer.f32(), all.dst_layer.f32() + 3 * out_t, 4 * out_t * 4));
        EXPECT_EQ(0, std::memcmp(r2.dst_iter.f32(), all.dst_iter.f32(), all.dst_iter.desc().size_bytes()));

        rnn_desc d_row = c.d;
        d_row.mb = 1;
        const rnn_fwd op_row(d_row);
        for (dim_t n = 0; n < c.d.mb; ++n) {
            setup_t sr = s;
            sr.src_layer = tensor(op_row.src_layer_desc());
            sr.src_iter = tensor(op_row.src_iter_desc());
            sr.src_iter_c = cell == rnn_cell::lstm ? tensor(op_row.src_iter_desc()) : tensor();
            for (dim_t t = 0; t < c.d.t; ++t)
                std::memcpy(
                        sr.src_layer.f32() + t * c.d.slc, s.src_layer.f32() + (t * c.d.mb + n) * c.d.slc, c.d.slc * 4);
            for (dim_t ld = 0; ld < c.d.l; ++ld) {
                std::memcpy(
                        sr.src_iter.f32() + ld * c.d.dhc, s.src_iter.f32() + (ld * c.d.mb + n) * c.d.dhc, c.d.dhc * 4);
                if (cell == rnn_cell::lstm)
                    std::memcpy(sr.src_iter_c.f32() + ld * c.d.dhc, s.src_iter_c.f32() + (ld * c.d.mb + n) * c.d.dhc,
                            c.d.dhc * 4);
            }
            const result_t rr = run(op_row, sr);
            for (dim_t t = 0; t < c.d.t; ++t)
                EXPECT_EQ(0,
                        std::memcmp(rr.dst_layer.f32() + t * c.d.dhc, all.dst_layer.f32() + (t * c.d.mb + n) * c.d.dhc,
                                c.d.dhc * 4))
                        << "row " << n << " t " << t;
        }
    }
}

// With h_{t-1} = 0 and B_u' = 0 the two GRU forms coincide (T = 1); with a nonzero h they
// differ, so the reset gate really sits on different sides of U_o.
TEST_P(RnnIsa, GruAndLbrGruAgreeOnlyWhereTheyMust) {
    rnn_desc d;
    d.t = 1;
    d.mb = 2;
    d.slc = 3;
    d.dhc = 4;
    d.cell = rnn_cell::gru;
    const rnn_fwd gru(d);
    d.cell = rnn_cell::lbr_gru;
    const rnn_fwd lbr(d);
    const tensor src(gru.src_layer_desc()), wl(gru.weights_layer_desc()), wi(gru.weights_iter_desc());
    const tensor b3(gru.bias_desc()), b4(lbr.bias_desc()), h0(gru.src_iter_desc());
    fill_random(src, 1);
    fill_random(wl, 2);
    fill_random(wi, 3);
    fill_random(b3, 4);
    fill_random(h0, 5);
    for (dim_t k = 0; k < 12; ++k) b4.f32()[k] = b3.f32()[k]; // gates u, r, o~; B_u' stays 0
    const tensor a(gru.dst_layer_desc()), b(gru.dst_layer_desc());
    gru.execute({.src_layer = src, .weights_layer = wl, .weights_iter = wi, .bias = b3, .dst_layer = a});
    lbr.execute({.src_layer = src, .weights_layer = wl, .weights_iter = wi, .bias = b4, .dst_layer = b});
    EXPECT_EQ(0, std::memcmp(a.f32(), b.f32(), a.desc().size_bytes()));
    gru.execute(
            {.src_layer = src, .src_iter = h0, .weights_layer = wl, .weights_iter = wi, .bias = b3, .dst_layer = a});
    lbr.execute(
            {.src_layer = src, .src_iter = h0, .weights_layer = wl, .weights_iter = wi, .bias = b4, .dst_layer = b});
    EXPECT_GT(tol::rel_err(a.f32(), b.f32(), 8), 1e-4);
}

// One LSTM step with one channel, by hand.
TEST_P(RnnIsa, LstmOneStepByHand) {
    rnn_desc d;
    d.slc = d.dhc = 1;
    const rnn_fwd op(d);
    const tensor x(op.src_layer_desc()), wl(op.weights_layer_desc()), wi(op.weights_iter_desc());
    const tensor b(op.bias_desc()), h0(op.src_iter_desc()), c0(op.src_iter_desc());
    x.f32()[0] = 0.5f;
    h0.f32()[0] = -0.25f;
    c0.f32()[0] = 2.f;
    const float W[] = {0.1f, 0.2f, 0.3f, 0.4f}, U[] = {-0.5f, 0.6f, -0.7f, 0.8f}, B[] = {0.01f, 0.02f, 0.03f, 0.04f};
    for (int g = 0; g < 4; ++g) {
        wl.f32()[g] = W[g];
        wi.f32()[g] = U[g];
        b.f32()[g] = B[g];
    }
    const tensor y(op.dst_layer_desc()), hT(op.dst_iter_desc()), cT(op.dst_iter_desc());
    op.execute({x, h0, c0, wl, wi, b, y, hT, cT});
    auto s = [](double v) { return 1 / (1 + std::exp(-v)); };
    auto pre = [&](int g) { return W[g] * 0.5 + U[g] * -0.25 + B[g]; };
    const double c = s(pre(1)) * 2 + s(pre(0)) * std::tanh(pre(2));
    const double h = s(pre(3)) * std::tanh(c);
    EXPECT_NEAR(cT.f32()[0], c, 1e-7);
    EXPECT_NEAR(hT.f32()[0], h, 1e-7);
    EXPECT_EQ(y.f32()[0], hT.f32()[0]);
}

INSTANTIATE_TEST_SUITE_P(Isa, RnnIsa, ::testing::Values(isa::scalar, isa::avx2, isa::avx512_core), bdtest::case_name());

} // namespace
