// SPDX-License-Identifier: Apache-2.0
// rnn_stack_fwd, PyTorch's stacks: seeded random stacks (every cell and direction, l = 1..3,
// slc != dhc, odd sizes, mb 1) against the framework oracle chained as PyTorch chains layers
// (layer k + 1 reads both directions of layer k) and, bit for bit, against single-layer rnn_fwd
// ops chained by hand; weights at creation equal weights at execute; streams give the
// synchronous result; every refusal names the field and writes nothing.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "rnn_test_util.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;
using namespace rnn_test;
using ft = format_tag;

namespace {

struct case_t {
    rnn_desc d;
    bool with_states = false;
    unsigned seed = 0;
    std::string str() const {
        return desc_text(d) + (with_states ? " states" : "") + " " + to_string(d.src_layer_tag) + ":"
                + to_string(d.weights_layer_tag) + ":" + to_string(d.weights_iter_tag) + ":"
                + to_string(d.dst_layer_tag) + " seed " + std::to_string(seed);
    }
};

// PyTorch's parameters of every (layer, direction), the library's per-layer tensors imported
// from them, and the inputs.
struct setup_t {
    std::vector<std::vector<rnn_oracle::layer_t>> fw; // [layer][dir]
    std::vector<rnn_layer_weights> weights;
    tensor src_layer, src_iter, src_iter_c;
    std::vector<float> x; // [t][mb][slc]
};

setup_t make_setup(const case_t &c, const rnn_stack_fwd &op) {
    const rnn_desc &d = op.desc();
    std::mt19937 gen(c.seed);
    setup_t s;
    s.fw.resize(d.l);
    for (dim_t lay = 0; lay < d.l; ++lay) {
        rnn_layer_weights w {
                tensor(op.weights_layer_desc(lay)), tensor(op.weights_iter_desc(lay)), tensor(op.bias_desc(lay))};
        for (dim_t dir = 0; dir < op.n_dirs(); ++dir) {
            rnn_oracle::layer_t L = random_layer(gen, rnn_framework::pytorch, d, op.layer_slc(lay));
            import_layer(L, w.weights_layer, w.weights_iter, w.bias, 0, dir);
            s.fw[lay].push_back(std::move(L));
        }
        s.weights.push_back(w);
    }
    s.x = uniform(gen, d.t * d.mb * d.slc, 1.f);
    s.src_layer = src_layer_of(op.src_layer_desc(), s.x);
    if (c.with_states) random_states(op.src_iter_desc(), d.cell, c.seed, s.src_iter, s.src_iter_c);
    return s;
}

rnn_stack_fwd_args args_of(const setup_t &s, const result_t &r, bool with_weights) {
    rnn_stack_fwd_args a;
    a.src_layer = s.src_layer;
    a.src_iter = s.src_iter;
    a.src_iter_c = s.src_iter_c;
    if (with_weights) a.weights = s.weights;
    a.dst_layer = r.dst_layer;
    a.dst_iter = r.dst_iter;
    a.dst_iter_c = r.dst_iter_c;
    return a;
}

result_t run(const rnn_stack_fwd &op, const setup_t &s) {
    const result_t r = make_result(op);
    op.execute(args_of(s, r, true));
    return r;
}

// The stack as PyTorch computes it, from the oracle's single layers: layer k + 1 reads layer
// k's outputs combined as the direction says. dst [t][mb][dlc], states [l][d][mb][dhc].
void oracle_stack(const rnn_stack_fwd &op, const setup_t &s, std::vector<float> &dst, std::vector<float> &h_out,
        std::vector<float> &c_out) {
    const rnn_desc &d = op.desc();
    const dim_t D = op.n_dirs();
    oracle_states_t st(d, D, s.src_iter, s.src_iter_c);
    std::vector<float> in = s.x;
    for (dim_t lay = 0; lay < d.l; ++lay) {
        std::vector<std::vector<float>> outs(D);
        for (dim_t dir = 0; dir < D; ++dir) outs[dir] = oracle_layer(s.fw[lay][dir], in, d, lay, dir, st);
        in = combine_dirs(d, outs);
    }
    dst = std::move(in);
    h_out = std::move(st.h);
    c_out = std::move(st.c);
}

// Layer `lay`'s slice (1, d, mb, dhc) of a stack state tensor, copied.
tensor layer_state(const tensor &t, dim_t lay) {
    if (t.empty()) return {};
    dims_t dims = t.desc().dims();
    dims[0] = 1;
    tensor s(tensor_desc(dims, ft::ldnc));
    const dim_t n = s.desc().nelems();
    std::memcpy(s.f32(), t.f32() + lay * n, n * sizeof(float));
    return s;
}

// The stack by hand: one rnn_fwd per layer (l = 1), each reading the previous one's dst_layer
// (tnc between layers), the states sliced per layer.
result_t chain_by_hand(const rnn_stack_fwd &stack, const setup_t &s) {
    const rnn_desc &d = stack.desc();
    result_t all = make_result(stack);
    tensor in = s.src_layer;
    for (dim_t lay = 0; lay < d.l; ++lay) {
        rnn_desc ld = d;
        ld.l = 1;
        ld.slc = stack.layer_slc(lay);
        ld.src_layer_tag = in.desc().tag();
        if (lay < d.l - 1) ld.dst_layer_tag = ft::tnc;
        const rnn_fwd op(ld);
        const tensor out(op.dst_layer_desc()), h(op.dst_iter_desc());
        const tensor c = d.cell == rnn_cell::lstm ? tensor(op.dst_iter_desc()) : tensor();
        const rnn_layer_weights &w = s.weights[lay];
        op.execute({in, layer_state(s.src_iter, lay), layer_state(s.src_iter_c, lay), w.weights_layer, w.weights_iter,
                w.bias, out, h, c});
        const dim_t n = h.desc().nelems();
        std::memcpy(all.dst_iter.f32() + lay * n, h.f32(), n * sizeof(float));
        if (!c.empty()) std::memcpy(all.dst_iter_c.f32() + lay * n, c.f32(), n * sizeof(float));
        in = out;
    }
    all.dst_layer = in;
    return all;
}

bool same_bits(const tensor &a, const tensor &b) {
    if (a.empty() || b.empty()) return a.empty() == b.empty();
    return a.desc() == b.desc() && std::memcmp(a.data(), b.data(), a.desc().size_bytes()) == 0;
}

case_t random_case(std::mt19937 &gen, int k) {
    // Every cell and direction equally often, with and without initial states; slc drawn apart
    // from dhc, so most stacks are ones rnn_fwd refuses.
    auto pick = [&](dim_t lo, dim_t hi) { return std::uniform_int_distribution<dim_t>(lo, hi)(gen); };
    case_t c;
    draw_cell(gen, k, c.d);
    c.d.t = pick(1, 12);
    c.d.mb = k % 5 == 0 ? 1 : pick(1, 9);
    c.d.dhc = pick(1, 40);
    c.d.slc = pick(1, 40);
    draw_tags(gen, c.d);
    c.with_states = (k / 16) % 2 == 0;
    c.seed = static_cast<unsigned>(gen());
    return c;
}

class RnnStackIsa : public rnn_test::isa_test {};

void expect_matches_oracle(const rnn_stack_fwd &op, const setup_t &s, const result_t &r) {
    std::vector<float> want, want_h, want_c;
    oracle_stack(op, s, want, want_h, want_c);
    expect_near_oracle(op.desc().cell, r, want, want_h, want_c);
}

// 32 seeded cases: each cell x direction with and without initial states.
TEST_P(RnnStackIsa, RandomStacksMatchOracleAndChainedLayers) {
    const unsigned seed = 20261202;
    std::mt19937 gen(seed);
    for (int k = 0; k < 32; ++k) {
        const case_t c = random_case(gen, k);
        SCOPED_TRACE(c.str() + " (cases from seed " + std::to_string(seed) + ")");
        const rnn_stack_fwd op(c.d);
        ASSERT_EQ(op.impl_name(), impl());
        const setup_t s = make_setup(c, op);
        const result_t r = run(op, s);
        expect_matches_oracle(op, s, r);

        // The same layers run by hand through rnn_fwd: the same arithmetic, so the same bits.
        const result_t hand = chain_by_hand(op, s);
        EXPECT_TRUE(same_bits(r.dst_layer, hand.dst_layer)) << "dst_layer vs rnn_fwd per layer";
        EXPECT_TRUE(same_bits(r.dst_iter, hand.dst_iter)) << "dst_iter vs rnn_fwd per layer";
        EXPECT_TRUE(same_bits(r.dst_iter_c, hand.dst_iter_c)) << "dst_iter_c vs rnn_fwd per layer";

        // Weights given at creation: the same bits, and execute takes none.
        const rnn_stack_fwd held(c.d, s.weights);
        ASSERT_EQ(held.impl_name(), impl());
        const result_t r2 = make_result(held);
        held.execute(args_of(s, r2, false));
        EXPECT_TRUE(same_bits(r.dst_layer, r2.dst_layer)) << "weights at creation";
        EXPECT_TRUE(same_bits(r.dst_iter, r2.dst_iter)) << "weights at creation";
        EXPECT_TRUE(same_bits(r.dst_iter_c, r2.dst_iter_c)) << "weights at creation";
    }
}

// PyTorch's most common stacked LSTM, nn.LSTM(5, 10, num_layers=2, bidirectional=True), which
// rnn_fwd refuses, with batch 1 and with an odd batch, batch_first (ntc) or not; and a
// 3-layer GRU and RNN whose input is wider than the hidden state.
TEST_P(RnnStackIsa, PytorchShapes) {
    struct shape_t {
        rnn_cell cell;
        rnn_direction dir;
        dim_t l, t, mb, slc, dhc;
        ft data_tag;
    };
    const shape_t shapes[] = {
            {rnn_cell::lstm, rnn_direction::bi_concat, 2, 7, 1, 5, 10, ft::tnc},
            {rnn_cell::lstm, rnn_direction::bi_concat, 2, 6, 3, 5, 10, ft::ntc},
            {rnn_cell::lstm, rnn_direction::l2r, 2, 4, 1, 5, 10, ft::tnc},
            {rnn_cell::lbr_gru, rnn_direction::bi_concat, 3, 5, 7, 33, 17, ft::ntc},
            {rnn_cell::vanilla_rnn, rnn_direction::l2r, 3, 9, 2, 20, 3, ft::tnc},
    };
    for (const shape_t &sh : shapes)
        for (bool with_states : {false, true}) {
            case_t c;
            c.d.cell = sh.cell;
            c.d.direction = sh.dir;
            c.d.l = sh.l;
            c.d.t = sh.t;
            c.d.mb = sh.mb;
            c.d.slc = sh.slc;
            c.d.dhc = sh.dhc;
            c.d.src_layer_tag = c.d.dst_layer_tag = sh.data_tag;
            c.with_states = with_states;
            c.seed = 7;
            SCOPED_TRACE(c.str());
            const rnn_stack_fwd op(c.d);
            EXPECT_EQ(op.impl_name(), impl());
            const setup_t s = make_setup(c, op);
            expect_matches_oracle(op, s, run(op, s));
        }
}

INSTANTIATE_TEST_SUITE_P(
        Isa, RnnStackIsa, ::testing::Values(isa::scalar, isa::avx2, isa::avx512_core), bdtest::case_name());

case_t stream_case() {
    case_t c;
    c.d.cell = rnn_cell::lstm;
    c.d.direction = rnn_direction::bi_concat;
    c.d.l = 3;
    c.d.t = 9;
    c.d.mb = 3;
    c.d.slc = 7;
    c.d.dhc = 12;
    c.with_states = true;
    c.seed = 11;
    return c;
}

// On a stream the result equals the synchronous one: weights at execute and at creation,
// several executions of one op queued on two streams at once (each has its own intermediate
// buffers), and an input written by work queued before the op on the same stream.
TEST(RnnStack, StreamsGiveTheSynchronousResult) {
    const case_t c = stream_case();
    const rnn_stack_fwd op(c.d);
    const setup_t s = make_setup(c, op);
    const rnn_stack_fwd held(c.d, s.weights);
    const result_t want = run(op, s);

    stream s1, s2;
    constexpr int n = 4;
    std::vector<result_t> got;
    for (int k = 0; k < n; ++k) got.push_back(make_result(op));
    {
        stream_scope on(s1);
        op.execute(args_of(s, got[0], true));
        held.execute(args_of(s, got[1], false));
    }
    {
        stream_scope on(s2);
        op.execute(args_of(s, got[2], true));
        held.execute(args_of(s, got[3], false));
    }
    s1.synchronize();
    s2.synchronize();
    for (int k = 0; k < n; ++k) {
        SCOPED_TRACE("execution " + std::to_string(k));
        EXPECT_TRUE(same_bits(want.dst_layer, got[k].dst_layer));
        EXPECT_TRUE(same_bits(want.dst_iter, got[k].dst_iter));
        EXPECT_TRUE(same_bits(want.dst_iter_c, got[k].dst_iter_c));
    }

    // The input is written by a reorder queued first: the op, queued after it, reads it.
    const tensor x(op.src_layer_desc());
    setup_t s_late = s;
    s_late.src_layer = x;
    const result_t late = make_result(op);
    {
        stream_scope on(s1);
        reorder(s.src_layer, x);
        op.execute(args_of(s_late, late, true));
    }
    s1.synchronize();
    EXPECT_TRUE(same_bits(want.dst_layer, late.dst_layer));
    EXPECT_TRUE(same_bits(want.dst_iter, late.dst_iter));
}

// An op queued on a stream keeps running after the caller's handles to its tensors are gone.
TEST(RnnStack, QueuedWorkKeepsItsTensors) {
    const case_t c = stream_case();
    const rnn_stack_fwd op(c.d);
    const result_t want = run(op, make_setup(c, op));
    const tensor dst(op.dst_layer_desc());
    stream s1;
    {
        const setup_t s = make_setup(c, op);
        stream_scope on(s1);
        op.execute({.src_layer = s.src_layer,
                .src_iter = s.src_iter,
                .src_iter_c = s.src_iter_c,
                .weights = s.weights,
                .dst_layer = dst});
    }
    s1.synchronize();
    EXPECT_TRUE(same_bits(want.dst_layer, dst));
}

TEST(RnnStack, Descriptors) {
    rnn_desc d;
    d.cell = rnn_cell::lbr_gru;
    d.direction = rnn_direction::bi_concat;
    d.l = 3;
    d.t = 7;
    d.mb = 2;
    d.slc = 5;
    d.dhc = 6;
    d.src_layer_tag = ft::ntc;
    d.weights_iter_tag = ft::ldgoi;
    const rnn_stack_fwd op(d);
    EXPECT_EQ(op.desc().sic, 6);
    EXPECT_EQ(op.desc().dic, 6);
    EXPECT_EQ(op.n_dirs(), 2);
    EXPECT_EQ(op.layer_slc(0), 5);
    EXPECT_EQ(op.layer_slc(1), 12);
    EXPECT_EQ(op.layer_slc(2), 12);
    EXPECT_EQ(op.src_layer_desc(), tensor_desc({7, 2, 5}, ft::ntc));
    EXPECT_EQ(op.dst_layer_desc(), tensor_desc({7, 2, 12}, ft::tnc));
    EXPECT_EQ(op.src_iter_desc(), tensor_desc({3, 2, 2, 6}, ft::ldnc));
    EXPECT_EQ(op.dst_iter_desc(), tensor_desc({3, 2, 2, 6}, ft::ldnc));
    EXPECT_EQ(op.weights_layer_desc(0), tensor_desc({1, 2, 5, 3, 6}, ft::ldigo));
    EXPECT_EQ(op.weights_layer_desc(2), tensor_desc({1, 2, 12, 3, 6}, ft::ldigo));
    EXPECT_EQ(op.weights_iter_desc(1), tensor_desc({1, 2, 6, 3, 6}, ft::ldgoi));
    EXPECT_EQ(op.bias_desc(1), tensor_desc({1, 2, 4, 6}, ft::ldgo));
    // Each layer is a single-layer rnn_fwd; the first reads the stack's src_layer layout.
    EXPECT_EQ(op.layer(0).desc().l, 1);
    EXPECT_EQ(op.layer(0).src_layer_desc(), tensor_desc({7, 2, 5}, ft::ntc));
    EXPECT_EQ(op.layer(1).src_layer_desc(), tensor_desc({7, 2, 12}, ft::tnc));
    EXPECT_EQ(op.impl_name(), std::string(op.layer(0).impl_name()));
    EXPECT_NE(op.impl_info().find("layer 2: "), std::string::npos) << op.impl_info();
    EXPECT_NE(op.str().find("lbr_gru:bi_concat l3t7mb2slc5"), std::string::npos) << op.str();
    d.direction = rnn_direction::bi_sum;
    const rnn_stack_fwd sum(d);
    EXPECT_EQ(sum.layer_slc(1), 6);
    EXPECT_EQ(sum.dst_layer_desc(), tensor_desc({7, 2, 6}, ft::tnc));
    d.direction = rnn_direction::r2l;
    EXPECT_EQ(rnn_stack_fwd(d).src_iter_desc(), tensor_desc({3, 1, 2, 6}, ft::ldnc));
    expect_error(status::invalid_arguments, {"rnn_stack_fwd", "layer", "k = 3", "l = 3"}, [&] { op.layer(3); });
    expect_error(status::invalid_arguments, {"rnn_stack_fwd", "k = -1"}, [&] { op.weights_layer_desc(-1); });
}

rnn_desc base_desc() { return small_gru_desc(2); }

TEST(RnnStack, DescErrors) {
    const status bad = status::invalid_arguments;
    expect_desc_errors<rnn_stack_fwd>("rnn_stack_fwd", 2);
    // rnn_fwd refuses slc != dhc with l > 1 and points to the stack, which takes it.
    expect_error(bad, {"rnn_fwd", "slc = 3", "dhc = 4", "l = 2", "rnn_stack_fwd"}, [] { rnn_fwd op(base_desc()); });
    EXPECT_EQ(rnn_stack_fwd(base_desc()).layer_slc(1), 4);
}

// Weights given at creation: their count and each entry's shape, the entry named.
TEST(RnnStack, CreationWeightErrors) {
    const status bad = status::invalid_arguments;
    const rnn_desc d = base_desc();
    const rnn_stack_fwd op(d);
    std::vector<rnn_layer_weights> ok;
    for (dim_t k = 0; k < d.l; ++k)
        ok.push_back({tensor(op.weights_layer_desc(k)), tensor(op.weights_iter_desc(k)), tensor(op.bias_desc(k))});
    expect_error(bad, {"rnn_stack_fwd", "weights has 1 entries", "l = 2"},
            [&] { rnn_stack_fwd(d, std::span(ok).first(1)); });
    auto with = [&](auto change) {
        std::vector<rnn_layer_weights> w = ok;
        change(w);
        return [d, w] { rnn_stack_fwd o(d, w); };
    };
    // Layer 1 reads dhc channels, not slc.
    expect_error(bad, {"rnn_stack_fwd", "weights[1].weights_layer", "dims[2] (i) = 3", "dhc = 4"},
            with([&](std::vector<rnn_layer_weights> &w) { w[1].weights_layer = tensor(op.weights_layer_desc(0)); }));
    expect_error(bad, {"rnn_stack_fwd", "weights[0].weights_iter", "required"},
            with([](std::vector<rnn_layer_weights> &w) { w[0].weights_iter = {}; }));
    expect_error(bad, {"rnn_stack_fwd", "weights[1].bias", "dims[2] (g) = 4", "bias gates = 3"},
            with([](std::vector<rnn_layer_weights> &w) {
                w[1].bias = tensor(tensor_desc({1, 1, 4, 4}, ft::ldgo));
            }));
    // A bias may be left out.
    std::vector<rnn_layer_weights> no_bias = ok;
    no_bias[0].bias = {};
    EXPECT_NO_THROW(rnn_stack_fwd(d, no_bias));
}

// Each rule at execute: the message names the tensor or weights entry; outputs untouched.
TEST(RnnStack, ExecuteErrorsWriteNothing) {
    const status bad = status::invalid_arguments;
    const rnn_desc d = base_desc(); // gru, l2 t3 mb2 slc3 dhc4, l2r
    const rnn_stack_fwd op(d);
    case_t c;
    c.d = d;
    c.with_states = true;
    c.seed = 5;
    const setup_t s = make_setup(c, op);
    const result_t r = make_result(op);
    for (const tensor &t : {r.dst_layer, r.dst_iter})
        for (dim_t k = 0; k < t.desc().nelems(); ++k) t.f32()[k] = 42.f;
    const rnn_stack_fwd_args ok = args_of(s, r, true);
    auto with = [&](auto change) {
        rnn_stack_fwd_args a = ok;
        change(a);
        return [&op, a] { op.execute(a); };
    };
    using A = rnn_stack_fwd_args;
    expect_error(bad, {"rnn_stack_fwd", "src_layer", "required"}, with([](A &a) { a.src_layer = {}; }));
    expect_error(bad, {"rnn_stack_fwd", "dst_layer", "required"}, with([](A &a) { a.dst_layer = {}; }));
    expect_error(bad, {"rnn_stack_fwd", "src_layer dims[2] (c) = 4", "slc = 3"}, with([](A &a) {
        a.src_layer = tensor(tensor_desc({3, 2, 4}, ft::tnc));
    }));
    expect_error(bad, {"rnn_stack_fwd", "src_layer layout ntc"}, with([](A &a) {
        a.src_layer = tensor(tensor_desc({3, 2, 3}, ft::ntc));
    }));
    expect_error(bad, {"rnn_stack_fwd", "src_iter dims[0] (l) = 1", "l = 2"}, with([](A &a) {
        a.src_iter = tensor(tensor_desc({1, 1, 2, 4}, ft::ldnc));
    }));
    expect_error(bad, {"rnn_stack_fwd", "dst_iter dims[3] (c) = 5", "dhc = 4"}, with([](A &a) {
        a.dst_iter = tensor(tensor_desc({2, 1, 2, 5}, ft::ldnc));
    }));
    expect_error(bad, {"rnn_stack_fwd", "dst_layer dims[0] (t) = 4", "t = 3"}, with([](A &a) {
        a.dst_layer = tensor(tensor_desc({4, 2, 4}, ft::tnc));
    }));
    expect_error(bad, {"rnn_stack_fwd", "src_iter_c", "gru", "no cell state"}, with([](A &a) {
        a.src_iter_c = tensor(tensor_desc({2, 1, 2, 4}, ft::ldnc));
    }));
    expect_error(bad, {"rnn_stack_fwd", "dst_iter_c", "gru"}, with([](A &a) {
        a.dst_iter_c = tensor(tensor_desc({2, 1, 2, 4}, ft::ldnc));
    }));
    expect_error(bad, {"rnn_stack_fwd", "weights has 0 entries", "l = 2"}, with([](A &a) { a.weights.clear(); }));
    expect_error(bad, {"rnn_stack_fwd", "weights[1].weights_iter dims[4] (o) = 5", "dhc = 4"}, with([](A &a) {
        a.weights[1].weights_iter = tensor(tensor_desc({1, 1, 4, 3, 5}, ft::ldigo));
    }));
    expect_error(bad, {"rnn_stack_fwd", "weights[0].weights_layer", "required"},
            with([](A &a) { a.weights[0].weights_layer = {}; }));
    expect_error(bad, {"rnn_stack_fwd", "dst_iter", "overlaps src_iter"},
            with([&](A &a) { a.dst_iter = tensor(s.src_iter.desc(), s.src_iter.data()); }));
    expect_error(bad, {"rnn_stack_fwd", "dst_layer", "overlaps", "weights[1].weights_layer"},
            with([&](A &a) { a.dst_layer = tensor(op.dst_layer_desc(), s.weights[1].weights_layer.data()); }));
    // An op holding its weights refuses more.
    const rnn_stack_fwd held(d, s.weights);
    expect_error(bad, {"rnn_stack_fwd", "weights has 2 entries", "given at creation"}, [&] { held.execute(ok); });
    for (const tensor &t : {r.dst_layer, r.dst_iter})
        for (dim_t k = 0; k < t.desc().nelems(); ++k) ASSERT_EQ(t.f32()[k], 42.f) << "written by a failed call";
    // Refusals inside a stream_scope come at the call too, and nothing is queued.
    stream s1;
    {
        stream_scope on(s1);
        expect_error(bad, {"rnn_stack_fwd", "weights has 0 entries"}, with([](A &a) { a.weights.clear(); }));
    }
    s1.synchronize();
    for (dim_t k = 0; k < r.dst_layer.desc().nelems(); ++k) ASSERT_EQ(r.dst_layer.f32()[k], 42.f);
    // And the untouched arguments run.
    op.execute(ok);
    EXPECT_NE(r.dst_layer.f32()[0], 42.f);
}

} // namespace
