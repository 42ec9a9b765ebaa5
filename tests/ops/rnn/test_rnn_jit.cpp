// SPDX-License-Identifier: Apache-2.0
// The JIT RNN forward (jit:avx512_core, jit:avx2) against the library's reference through the
// public API, per ISA: seeded random problems (every cell kind and direction mode, T 1-30,
// mb 1-9, channels 1-70, layers 1-3, with and without initial states and bias, tnc / ntc,
// ldigo / ldgoi, weights given at creation or at execute), problems of oneDNN's benchdnn rnn
// lists (batch files in tests/data/rnn), the tiny benchmark shapes; results identical for 1 and
// 2 threads; the engine's blocking. The PyTorch and ONNX cross-checks (test_torch_bnorm_rnn,
// test_onnx_bnorm_rnn) run every ISA too.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/machine_model.hpp"
#include "core/utils.hpp"
#include "ops/rnn/rnn_jit.hpp"
#include "common/isa_param.hpp"
#include "common/test_util.hpp"
#include "common/descriptor_lists.hpp"
#include "testing/batch.hpp"
#include "testing/tolerances.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

struct inputs_t {
    tensor src, src_iter, src_iter_c, wl, wi, bias;
};
struct outputs_t {
    tensor dst, dst_iter, dst_iter_c;
};

// Inputs in [-1, 1); weights scaled by 1.5 / sqrt(fan-in) so that pre-activations are of order
// 1 (the frameworks' initialization) and the cells are not all saturated.
inputs_t make_inputs(const rnn_fwd &op, unsigned seed, bool states, bool bias) {
    const rnn_desc &d = op.desc();
    inputs_t in;
    in.src = tensor(op.src_layer_desc());
    fill_random(in.src, seed);
    if (states) {
        in.src_iter = tensor(op.src_iter_desc());
        fill_random(in.src_iter, seed + 1);
        if (d.cell == rnn_cell::lstm) {
            in.src_iter_c = tensor(op.src_iter_desc());
            fill_random(in.src_iter_c, seed + 2);
        }
    }
    auto weights = [&](const tensor_desc &td, dim_t fan_in, unsigned s) {
        tensor t(td);
        fill_random(t, s);
        const float k = 1.5f / std::sqrt(static_cast<float>(fan_in));
        for (dim_t i = 0; i < td.nelems(); ++i) t.f32()[i] *= k;
        return t;
    };
    in.wl = weights(op.weights_layer_desc(), d.slc, seed + 3);
    in.wi = weights(op.weights_iter_desc(), d.dhc, seed + 4);
    if (bias) {
        in.bias = tensor(op.bias_desc());
        fill_random(in.bias, seed + 5);
    }
    return in;
}

outputs_t run(const rnn_fwd &op, const inputs_t &in, bool weights_at_creation) {
    outputs_t o;
    o.dst = tensor(op.dst_layer_desc());
    o.dst_iter = tensor(op.dst_iter_desc());
    if (op.desc().cell == rnn_cell::lstm) o.dst_iter_c = tensor(op.dst_iter_desc());
    rnn_fwd_args a {in.src, in.src_iter, in.src_iter_c, in.wl, in.wi, in.bias, o.dst, o.dst_iter, o.dst_iter_c};
    if (weights_at_creation) a.weights_layer = a.weights_iter = a.bias = tensor();
    op.execute(a);
    return o;
}

double err(const tensor &got, const tensor &want) {
    if (got.empty()) return 0;
    return tol::rel_err(got.f32(), want.f32(), static_cast<std::size_t>(got.desc().nelems()));
}

std::string isa_impl(isa level) { return std::string("jit:") + to_string(level); }

// One problem on `level` (must dispatch to its JIT entry) against the reference.
void check(isa level, const rnn_desc &d, unsigned seed, bool states, bool bias, bool at_creation,
        const std::string &what) {
    const std::string ctx = cat(what, " ", to_string(make_rnn_prb(d)), states ? " states" : " no-states",
            bias ? "" : " no-bias", at_creation ? " weights-at-creation" : "", " seed ", seed);
    SCOPED_TRACE(ctx);
    isa_guard guard;
    set_max_isa(isa::scalar);
    const rnn_fwd ref(d);
    ASSERT_STREQ(ref.impl_name(), "ref");
    const inputs_t in = make_inputs(ref, seed, states, bias);
    const outputs_t want = run(ref, in, false);
    set_max_isa(level);
    const rnn_fwd jit = at_creation ? rnn_fwd(d, in.wl, in.wi, in.bias) : rnn_fwd(d);
    ASSERT_EQ(jit.impl_name(), isa_impl(level));
    const outputs_t got = run(jit, in, at_creation);
    EXPECT_LE(err(got.dst, want.dst), tol::rnn) << "dst_layer";
    EXPECT_LE(err(got.dst_iter, want.dst_iter), tol::rnn) << "dst_iter";
    EXPECT_LE(err(got.dst_iter_c, want.dst_iter_c), tol::rnn) << "dst_iter_c";
}

class RnnJit : public bdtest::isa_test<isa> {};

struct cell_case_t {
    rnn_cell cell;
    eltwise_alg act;
    float alpha;
};
const cell_case_t cell_cases[] = {
        {rnn_cell::vanilla_rnn, eltwise_alg::tanh, 0.f},
        {rnn_cell::vanilla_rnn, eltwise_alg::relu, 0.1f},
        {rnn_cell::vanilla_rnn, eltwise_alg::sigmoid, 0.f},
        {rnn_cell::lstm, eltwise_alg::tanh, 0.f},
        {rnn_cell::gru, eltwise_alg::tanh, 0.f},
        {rnn_cell::lbr_gru, eltwise_alg::tanh, 0.f},
};
const rnn_direction dirs[] = {rnn_direction::l2r, rnn_direction::r2l, rnn_direction::bi_concat, rnn_direction::bi_sum};

// A random problem: small sizes mostly, up to T 30, mb 9, 70 channels, 3 layers.
rnn_desc random_desc(std::mt19937 &gen, const cell_case_t &cc, rnn_direction dir) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
    rnn_desc d;
    d.cell = cc.cell, d.activation = cc.act, d.alpha = cc.alpha, d.direction = dir;
    d.l = pick(1, 3);
    d.t = pick(1, 30);
    d.mb = pick(1, 9);
    d.dhc = pick(0, 3) == 0 ? pick(33, 70) : pick(1, 32);
    d.slc = d.l > 1 ? d.dhc : pick(1, 70);
    d.src_layer_tag = pick(0, 1) ? format_tag::ntc : format_tag::tnc;
    d.dst_layer_tag = pick(0, 1) ? format_tag::ntc : format_tag::tnc;
    d.weights_layer_tag = pick(0, 3) == 0 ? format_tag::ldgoi : format_tag::ldigo;
    d.weights_iter_tag = pick(0, 3) == 0 ? format_tag::ldgoi : format_tag::ldigo;
    return d;
}

// One problem of a list: the desc, its number in the list (which seeds the data and picks
// the variants: states, bias, weights at creation) and its name in the list; or a list that
// could not be read (`error`).
struct listed_case_t {
    rnn_desc d;
    int k = 0;
    std::string what;
    std::string error;
};

// "p7_lstm_bi_concat": the problem's number, cell and direction (the sizes are in the trace).
std::string random_name(const listed_case_t &c) {
    return cat("p", c.k, "_", to_string(c.d.cell), "_", to_string(c.d.direction));
}

// Two random problems of each cell and direction.
std::vector<listed_case_t> random_problems() {
    std::vector<listed_case_t> v;
    std::mt19937 gen(777);
    int k = 0;
    for (const cell_case_t &cc : cell_cases)
        for (rnn_direction dir : dirs)
            for (int rep = 0; rep < 2; ++rep, ++k) v.push_back({random_desc(gen, cc, dir), k, cat("#", k), {}});
    return v;
}

class RnnJitRandom : public bdtest::isa_test<bdtest::isa_case_t<listed_case_t>> {};

TEST_P(RnnJitRandom, AgainstRef) {
    const unsigned seed = 777;
    const listed_case_t &c = GetParam().desc;
    const int k = c.k, rep = k % 2;
    check(level(), c.d, seed + 10 * k, rep == 0 || k % 3 == 0, k % 5 != 1, k % 2 == 1, c.what);
}

INSTANTIATE_TEST_SUITE_P(Seeded, RnnJitRandom,
        ::testing::ValuesIn(bdtest::isa_cases({isa::avx512_core, isa::avx2}, random_problems(), random_name)),
        bdtest::case_name());

// benchdnn's rnn lists, each a batch file in benchdnn syntax, $BLOCKDNN_TEST_DATA/rnn/<list>
// (set by tests/meson.build), read by the library's batch reader (testing/batch.hpp) as
// blockdnn-bench reads them. The files keep the problems where sic = dhc (blockdnn has no
// projection) and the reference takes well under a second; the rest, and benchdnn's options,
// are commented out. Each problem runs with every cell, directions in turn.
const char *const benchdnn_lists[] = {"shapes_small", "shapes_small_gru", "shapes_large", "shapes_large_gru",
        "shapes_inference", "option_set_gnmt_encoder", "option_set_gnmt_decoder"};

// A case that fails with `error` (a list that could not be read or parsed), named `what`.
listed_case_t error_case(const std::string &what, const std::string &error) {
    listed_case_t c;
    c.what = what;
    c.error = error;
    return c;
}

// Every shape of the lists with each cell, directions in turn.
std::vector<listed_case_t> benchdnn_problems() {
    // Multiply-adds above which a problem runs with one cell kind (in turn), not all four: the
    // reference's cost, under the sanitizers especially.
    constexpr double big = 4e6;
    const char *root = bdtest::test_data_root();
    if (!root) return {error_case("BLOCKDNN_TEST_DATA_unset", bdtest::test_data_unset)};
    std::vector<listed_case_t> v;
    int k = 0, i = 0;
    for (const char *list : benchdnn_lists) {
        std::vector<bdrv::problem_t> problems;
        try {
            problems = bdtest::read_descriptor_list(root, "rnn", list);
        } catch (const std::exception &e) {
            v.push_back(error_case(cat(list, "_unreadable"), e.what()));
            continue;
        }
        for (const bdrv::problem_t &prob : problems) {
            const std::string &text = prob.desc;
            ++i;
            rnn_desc parsed;
            try {
                parsed = parse_rnn_desc(text);
            } catch (const std::exception &e) {
                v.push_back(error_case(cat(list, "_unparsable", i), cat(prob.where, ": ", e.what())));
                continue;
            }
            const rnn_cell all[] = {rnn_cell::vanilla_rnn, rnn_cell::lstm, rnn_cell::gru, rnn_cell::lbr_gru};
            for (int ci = 0; ci < 4; ++ci) {
                rnn_desc base;
                base.cell = all[ci], base.direction = dirs[k % 4];
                rnn_desc d = parsed;
                d.cell = base.cell, d.direction = base.direction;
                const double macs = static_cast<double>(d.l * d.t * d.mb * d.dhc) * (d.slc + d.dhc) * 4
                        * (base.direction == rnn_direction::l2r || base.direction == rnn_direction::r2l ? 1 : 2);
                if (macs > big && ci != i % 4) continue;
                v.push_back({d, k, text, {}});
                ++k;
            }
        }
    }
    return v;
}

// "lstm_l2r_l8t3mb12_sic16_n_uniform_": the cell, the direction and the descriptor as listed.
std::string benchdnn_name(const listed_case_t &c) {
    if (!c.error.empty()) return c.what;
    return cat(to_string(c.d.cell), "_", to_string(c.d.direction), "_", c.what);
}

class RnnJitBenchdnn : public bdtest::isa_test<bdtest::isa_case_t<listed_case_t>> {
protected:
    // A list that could not be read fails on every machine, before the ISA check skips.
    void SetUp() override {
        if (!GetParam().desc.error.empty()) FAIL() << GetParam().desc.error;
        isa_test::SetUp();
    }
};

TEST_P(RnnJitBenchdnn, AgainstRef) {
    const listed_case_t &c = GetParam().desc;
    check(level(), c.d, 5000 + c.k, c.k % 2 == 0, true, c.k % 3 == 0, c.what);
}

INSTANTIATE_TEST_SUITE_P(Lists, RnnJitBenchdnn,
        ::testing::ValuesIn(bdtest::isa_cases({isa::avx512_core, isa::avx2}, benchdnn_problems(), benchdnn_name)),
        bdtest::case_name());

TEST_P(RnnJit, BenchmarkShapesSmall) {
    // The tiny benchmark shapes, nn.RNN(10, 10) on a (100, 10) input among them.
    int k = 0;
    for (const cell_case_t &cc : cell_cases)
        for (dim_t mb : {1, 10}) {
            rnn_desc d;
            d.cell = cc.cell, d.activation = cc.act, d.alpha = cc.alpha;
            d.t = 100, d.mb = mb, d.slc = d.dhc = 10;
            check(level(), d, 99 + k, true, true, true, "bench");
            ++k;
        }
}

TEST_P(RnnJit, ManyRowsAndPanels) {
    // mb 17: several row blocks of the step brgemm and a tail, so on AVX2 LSTM, vanilla (dhc 64)
    // and GRU (u and r, dhc 64) run a call per ld block (call_n < part_n); on AVX-512 nothing
    // splits, and GRU's parts are blocks of U narrower than the panel. Several panels (a partial
    // last one at dhc 36), 2 layers, both directions.
    const machine_model_override_t pin {machine_model_t {}};
    int k = 0;
    for (const cell_case_t &cc : cell_cases)
        for (dim_t dhc : {36, 64}) {
            rnn_desc d;
            d.cell = cc.cell, d.activation = cc.act, d.alpha = cc.alpha;
            d.direction = rnn_direction::bi_concat;
            d.l = 2, d.t = 4, d.mb = 17, d.slc = d.dhc = dhc;
            if (level() == isa::avx2 && d.cell == rnn_cell::lstm) {
                rnn_fwd_jit_conf_t c;
                std::string why;
                ASSERT_EQ(init_conf_rnn_fwd_jit(c, make_rnn_prb(d), level(), {1, -1}, why), status::success) << why;
                EXPECT_LT(c.call_n[0], c.part_n[0]) << to_string(c);
            }
            check(level(), d, 700 + k, k % 2 == 0, true, k % 3 == 0, "many rows");
            ++k;
        }
}

TEST_P(RnnJit, OneAndTwoThreadsIdentical) {
    // The engine directly, its split path (units over threads) forced on problems with several
    // panels: results bit for bit those of one thread.
    const unsigned seed = 4242;
    std::mt19937 gen(seed);
    int k = 0;
    for (const cell_case_t &cc : cell_cases)
        for (rnn_direction dir : {rnn_direction::l2r, rnn_direction::bi_concat}) {
            rnn_desc d = random_desc(gen, cc, dir);
            d.dhc = 70; // with mb 9, several panels for every cell on both ISAs
            d.mb = 9;
            if (d.l > 1) d.slc = 70;
            d.sic = d.dic = 0;
            const rnn_prb_t p = make_rnn_prb(d);
            SCOPED_TRACE(cat(to_string(p), " seed ", seed, " #", k));
            std::unique_ptr<rnn_fwd_jit_t> one, two;
            std::string why;
            ASSERT_EQ(rnn_fwd_jit_t::create(one, p, level(), why, {1, -1}), status::success) << why;
            ASSERT_EQ(rnn_fwd_jit_t::create(two, p, level(), why, {2, 0}), status::success) << why;
            EXPECT_EQ(two->conf().max_threads, 2);
            isa_guard guard;
            set_max_isa(isa::scalar);
            const inputs_t in = make_inputs(rnn_fwd(d), seed + k++, true, true);
            outputs_t o[2];
            for (int i = 0; i < 2; ++i) {
                const rnn_fwd_jit_t &e = i ? *two : *one;
                o[i].dst = tensor(p.dst_layer);
                o[i].dst_iter = tensor(p.states);
                o[i].dst_iter_c = tensor(p.states);
                rnn_args_t m;
                m.src_layer = in.src.f32(), m.src_iter = in.src_iter.f32();
                m.src_iter_c = in.src_iter_c.empty() ? nullptr : in.src_iter_c.f32();
                m.wei_layer = in.wl.f32(), m.wei_iter = in.wi.f32(), m.bias = in.bias.f32();
                m.dst_layer = o[i].dst.f32(), m.dst_iter = o[i].dst_iter.f32(), m.dst_iter_c = o[i].dst_iter_c.f32();
                e.execute(m);
            }
            EXPECT_EQ(0, std::memcmp(o[0].dst.f32(), o[1].dst.f32(), o[0].dst.desc().size_bytes()));
            EXPECT_EQ(0, std::memcmp(o[0].dst_iter.f32(), o[1].dst_iter.f32(), o[0].dst_iter.desc().size_bytes()));
            EXPECT_EQ(
                    0, std::memcmp(o[0].dst_iter_c.f32(), o[1].dst_iter_c.f32(), o[0].dst_iter_c.desc().size_bytes()));
        }
}

INSTANTIATE_TEST_SUITE_P(Isa, RnnJit, ::testing::Values(isa::avx512_core, isa::avx2), bdtest::case_name());

TEST(RnnJitDispatch, OrderAndCap) {
    // Best first: jit:avx512_core, then jit:avx2, then ref, as the cap comes down.
    rnn_desc d;
    d.t = 3, d.mb = 2, d.slc = d.dhc = 5;
    isa_guard guard;
    for (isa level : available_isas()) {
        set_max_isa(level);
        EXPECT_EQ(std::string(rnn_fwd(d).impl_name()), level == isa::scalar ? "ref" : isa_impl(level));
    }
}

TEST(RnnJitApi, WeightsAtCreationRules) {
    rnn_desc d;
    d.t = 2, d.mb = 1, d.slc = d.dhc = 3;
    const rnn_fwd plain(d);
    const tensor wl(plain.weights_layer_desc()), wi(plain.weights_iter_desc()), b(plain.bias_desc());
    const rnn_fwd op(d, wl, wi, b);
    const tensor src(op.src_layer_desc()), dst(op.dst_layer_desc());
    expect_error(status::invalid_arguments, {"weights_layer", "at creation"},
            [&] { op.execute({.src_layer = src, .weights_layer = wl, .dst_layer = dst}); });
    expect_error(status::invalid_arguments, {"bias", "at creation"},
            [&] { op.execute({.src_layer = src, .bias = b, .dst_layer = dst}); });
    const tensor bad(tensor_desc({1, 1, 4, 4, 3}, format_tag::ldigo));
    expect_error(status::invalid_arguments, {"weights_layer", "dims[2]", "slc"}, [&] { rnn_fwd(d, bad, wi, b); });
    op.execute({.src_layer = src, .dst_layer = dst}); // the rule's positive side
}

TEST(RnnDesc, ValidateStrFlopsImplInfo) {
    rnn_desc d = parse_rnn_desc("l1t10mb4sic16slc8");
    d.validate();
    EXPECT_EQ(d.str(), "l1t10mb4sic16slc8dhc16dic16");
    EXPECT_DOUBLE_EQ(d.flops(), 2.0 * 10 * 4 * 4 * 16 * (8 + 16)); // lstm: 4 gates
    // Valid sizes whose product passes dim_t's range: the count is a double all the way.
    rnn_desc big = d;
    big.t = big.mb = dim_t {1} << 30;
    EXPECT_DOUBLE_EQ(big.flops(), 2.0 * 0x1p30 * 0x1p30 * 4 * 16 * (8 + 16));
    d.sic = 8;
    expect_error(status::invalid_arguments, {"sic = 8", "dhc = 16"}, [&] { d.validate(); });
    const rnn_fwd op(parse_rnn_desc("l1t2mb2sic8"));
    const std::string info = op.impl_info();
    EXPECT_EQ(info.rfind(op.impl_name(), 0), 0u) << info;
    if (std::string(op.impl_name()) != "ref") {
        EXPECT_NE(info.find("layer gemm"), std::string::npos) << info;
    }
}

TEST(RnnParse, KeysDefaultsErrors) {
    std::string name;
    const rnn_desc d = parse_rnn_desc("l4t3mb20_sic36_n\"uniform:unroll_tail\"", &name);
    EXPECT_EQ(d.l, 4);
    EXPECT_EQ(d.t, 3);
    EXPECT_EQ(d.mb, 20);
    EXPECT_EQ(d.sic, 36);
    EXPECT_EQ(d.slc, 36);
    EXPECT_EQ(d.dhc, 36);
    EXPECT_EQ(d.dic, 36);
    EXPECT_EQ(name, "uniform:unroll_tail");
    const rnn_desc e = parse_rnn_desc("l1t50mb64sic512slc256dhc512dic512");
    EXPECT_EQ(e.slc, 256);
    EXPECT_EQ(e.str(), "l1t50mb64sic512slc256dhc512dic512");
    EXPECT_EQ(parse_rnn_desc("t10sic256").mb, 2); // benchdnn's default batch
    expect_error(
            status::invalid_arguments, {"rnn descriptor 't5mb2': sic is required"}, [] { parse_rnn_desc("t5mb2"); });
    expect_error(status::invalid_arguments, {"unknown key 'x'"}, [] { parse_rnn_desc("x3sic4"); });
    expect_error(status::invalid_arguments, {"rnn descriptor 'l1t0mb2sic16': rnn_fwd: t = 0 must be positive"},
            [] { parse_rnn_desc("l1t0mb2sic16"); });
    expect_error(status::invalid_arguments, {"'l0sic16': rnn_fwd: l = 0"}, [] { parse_rnn_desc("l0sic16"); });
    expect_error(status::invalid_arguments, {"'sic0': rnn_fwd: sic = 0"}, [] { parse_rnn_desc("sic0"); });
    expect_error(status::invalid_arguments, {"'t' repeated"}, [] { parse_rnn_desc("t3t4sic4"); });
    expect_error(status::invalid_arguments, {"'mb' has no number"}, [] { parse_rnn_desc("mb_sic4"); });
}

TEST(RnnJitConf, PanelsAndThreads) {
    const machine_model_override_t pin {machine_model_t {}}; // the brgemm blocking the calls follow
    rnn_desc d;
    d.cell = rnn_cell::lstm, d.t = 50, d.mb = 64, d.slc = d.dhc = 512;
    rnn_fwd_jit_conf_t c;
    std::string why;
    ASSERT_EQ(init_conf_rnn_fwd_jit(c, make_rnn_prb(d), isa::avx512_core, {2, -1}, why), status::success) << why;
    EXPECT_EQ(c.hb, 16); // 4 gates x 16 units = one 4-vector panel
    EXPECT_EQ(c.n_panels, 32);
    EXPECT_EQ(c.call_n[0], 64); // the 6 x 4 register block covers the panel: one call
    EXPECT_EQ(c.max_threads, 2);
    ASSERT_EQ(init_conf_rnn_fwd_jit(c, make_rnn_prb(d), isa::avx2, {2, -1}, why), status::success) << why;
    EXPECT_EQ(c.pw, 32);        // 4 gates x 8 units
    EXPECT_EQ(c.call_n[0], 16); // a call for each 2-vector ld block of the 6 x 2 register block
    d.cell = rnn_cell::gru;
    ASSERT_EQ(init_conf_rnn_fwd_jit(c, make_rnn_prb(d), isa::avx2, {2, -1}, why), status::success) << why;
    EXPECT_EQ(c.pw, 48); // 3 gates x 16 units: u and r in part 0, the candidate in part 1
    EXPECT_EQ(c.part_n[0], 32);
    EXPECT_EQ(c.call_n[0], 16);
    EXPECT_EQ(c.part_n[1], 16);
    EXPECT_EQ(c.call_n[1], 16);
    d.cell = rnn_cell::lstm, d.mb = 13;
    ASSERT_EQ(init_conf_rnn_fwd_jit(c, make_rnn_prb(d), isa::avx2, {2, -1}, why), status::success) << why;
    EXPECT_EQ(c.step_brgemm[0].bd_block, 13); // all rows in one 13 x 1 block, which reads U once:
    EXPECT_EQ(c.call_n[0], c.pw);             // one call
    d.mb = 10, d.slc = d.dhc = 10;
    ASSERT_EQ(init_conf_rnn_fwd_jit(c, make_rnn_prb(d), isa::avx512_core, {2, -1}, why), status::success) << why;
    EXPECT_EQ(c.n_panels, 1);
    EXPECT_EQ(c.max_threads, 1); // tiny steps stay on the calling thread
    EXPECT_EQ(init_conf_rnn_fwd_jit(c, make_rnn_prb(d), isa::scalar, {1, -1}, why), status::unimplemented);
    EXPECT_NE(why.find("scalar"), std::string::npos) << why;
}

} // namespace
