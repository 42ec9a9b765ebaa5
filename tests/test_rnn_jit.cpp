// SPDX-License-Identifier: Apache-2.0
// JIT RNN forward against a naive RNN written here (double precision, the equations of
// include/blockdnn/rnn.hpp), per ISA, on seeded random problems: every cell kind and direction
// mode, T 1-30, mb 1-9, channels 1-70, layers 1-3, with and without initial states and bias,
// tnc / ntc data, ldigo / ldgoi weights; results identical for 1 and 2 threads; and the JIT
// activations' accuracy against double.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/utils.hpp"
#include "rnn/rnn_fwd_jit.hpp"
#include "test_util.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

struct rnn_data_t {
    std::vector<float> src, src_iter, src_iter_c, wl, wi, bias;
    bool with_states = true, with_bias = true;
    rnn_jit_mem_t mem() const {
        rnn_jit_mem_t m;
        m.src_layer = src.data();
        m.src_iter = with_states ? src_iter.data() : nullptr;
        m.src_iter_c = with_states ? src_iter_c.data() : nullptr;
        m.wei_layer = wl.data();
        m.wei_iter = wi.data();
        m.bias = with_bias ? bias.data() : nullptr;
        return m;
    }
};

struct rnn_out_t {
    std::vector<float> dst, dst_iter, dst_iter_c;
};

double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The naive stack: dense tensors, double accumulation, float states between steps.
rnn_out_t naive_rnn(const rnn_jit_prb_t &p, const rnn_data_t &d) {
    const std::int64_t T = p.t, MB = p.mb, H = p.dhc, D = p.n_dirs(), G = p.n_gates(), Gb = p.n_bias_gates();
    auto wei = [&](const std::vector<float> &w, bool ldgoi, std::int64_t I, std::int64_t l, std::int64_t dir,
                       std::int64_t i, std::int64_t g, std::int64_t o) -> double {
        const std::int64_t ld = l * D + dir;
        return ldgoi ? w[((ld * G + g) * H + o) * I + i] : w[((ld * I + i) * G + g) * H + o];
    };
    rnn_out_t r;
    r.dst.assign(T * MB * p.dlc(), 0.f);
    r.dst_iter.assign(p.l * D * MB * H, 0.f);
    r.dst_iter_c.assign(p.l * D * MB * H, 0.f);
    std::vector<std::vector<float>> last(D);
    for (std::int64_t dir = 0; dir < D; ++dir) {
        const bool rev = p.direction == rnn_dir_kind_t::r2l || dir == 1;
        std::vector<float> in(T * MB * p.slc);
        for (std::int64_t t = 0; t < T; ++t)
            for (std::int64_t n = 0; n < MB; ++n)
                for (std::int64_t ch = 0; ch < p.slc; ++ch)
                    in[(t * MB + n) * p.slc + ch] = d.src[(p.src_ntc ? n * T + t : t * MB + n) * p.slc + ch];
        std::int64_t in_c = p.slc;
        for (std::int64_t l = 0; l < p.l; ++l) {
            const std::int64_t ld = l * D + dir;
            std::vector<float> h(MB * H, 0.f), c(MB * H, 0.f), out(T * MB * H);
            if (d.with_states)
                for (std::int64_t i = 0; i < MB * H; ++i) h[i] = d.src_iter[ld * MB * H + i], c[i] = d.src_iter_c[ld * MB * H + i];
            for (std::int64_t s = 0; s < T; ++s) {
                const std::int64_t t = rev ? T - 1 - s : s;
                std::vector<float> hn(MB * H), cn(MB * H);
                for (std::int64_t n = 0; n < MB; ++n) {
                    auto b = [&](std::int64_t g, std::int64_t o) {
                        return d.with_bias ? static_cast<double>(d.bias[(ld * Gb + g) * H + o]) : 0.0;
                    };
                    auto wx = [&](std::int64_t g, std::int64_t o) {
                        double a = 0;
                        for (std::int64_t i = 0; i < in_c; ++i)
                            a += in[(t * MB + n) * in_c + i] * wei(d.wl, p.wei_layer_ldgoi, p.slc, l, dir, i, g, o);
                        return a;
                    };
                    auto uh = [&](const std::vector<double> &hv, std::int64_t g, std::int64_t o) {
                        double a = 0;
                        for (std::int64_t j = 0; j < H; ++j) a += hv[j] * wei(d.wi, p.wei_iter_ldgoi, H, l, dir, j, g, o);
                        return a;
                    };
                    std::vector<double> hv(H), rh(H);
                    for (std::int64_t j = 0; j < H; ++j) hv[j] = h[n * H + j];
                    if (p.cell == rnn_cell_kind_t::gru)
                        for (std::int64_t j = 0; j < H; ++j) rh[j] = sigm(wx(1, j) + uh(hv, 1, j) + b(1, j)) * hv[j];
                    for (std::int64_t o = 0; o < H; ++o) {
                        double hh = 0, cc = 0;
                        switch (p.cell) {
                        case rnn_cell_kind_t::vanilla_rnn: {
                            const double x = wx(0, o) + uh(hv, 0, o) + b(0, o);
                            hh = p.activation == eltwise_alg::relu ? (x > 0 ? x : p.alpha * x)
                                    : p.activation == eltwise_alg::sigmoid ? sigm(x)
                                                                           : std::tanh(x);
                            break;
                        }
                        case rnn_cell_kind_t::lstm: {
                            auto pre = [&](std::int64_t g) { return wx(g, o) + uh(hv, g, o) + b(g, o); };
                            cc = sigm(pre(1)) * c[n * H + o] + sigm(pre(0)) * std::tanh(pre(2));
                            cc = static_cast<float>(cc);
                            hh = sigm(pre(3)) * std::tanh(cc);
                            break;
                        }
                        case rnn_cell_kind_t::gru: {
                            const double u = sigm(wx(0, o) + uh(hv, 0, o) + b(0, o));
                            const double cand = std::tanh(wx(2, o) + uh(rh, 2, o) + b(2, o));
                            hh = u * hv[o] + (1 - u) * cand;
                            break;
                        }
                        case rnn_cell_kind_t::lbr_gru: {
                            const double u = sigm(wx(0, o) + uh(hv, 0, o) + b(0, o));
                            const double r = sigm(wx(1, o) + uh(hv, 1, o) + b(1, o));
                            const double cand = std::tanh(wx(2, o) + b(2, o) + r * (uh(hv, 2, o) + b(3, o)));
                            hh = u * hv[o] + (1 - u) * cand;
                            break;
                        }
                        }
                        hn[n * H + o] = static_cast<float>(hh);
                        cn[n * H + o] = static_cast<float>(cc);
                    }
                }
                h = hn;
                if (p.cell == rnn_cell_kind_t::lstm) c = cn;
                std::copy(h.begin(), h.end(), out.begin() + t * MB * H);
            }
            std::copy(h.begin(), h.end(), r.dst_iter.begin() + ld * MB * H);
            std::copy(c.begin(), c.end(), r.dst_iter_c.begin() + ld * MB * H);
            in = out;
            in_c = H;
        }
        last[dir] = in;
    }
    for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t n = 0; n < MB; ++n)
            for (std::int64_t ch = 0; ch < p.dlc(); ++ch) {
                const std::int64_t at = (t * MB + n) * H + ch % H;
                float v = last[ch / H][at];
                if (p.direction == rnn_dir_kind_t::bi_sum) v = last[0][at] + last[1][at];
                r.dst[(p.dst_ntc ? n * T + t : t * MB + n) * p.dlc() + ch] = v;
            }
    return r;
}

rnn_data_t make_data(const rnn_jit_prb_t &p, unsigned seed, bool states, bool bias) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    const std::int64_t D = p.n_dirs(), G = p.n_gates(), H = p.dhc;
    rnn_data_t d;
    d.with_states = states, d.with_bias = bias;
    auto fill = [&](std::vector<float> &v, std::int64_t n, float scale) {
        v.resize(n);
        for (float &x : v) x = scale * u(gen);
    };
    fill(d.src, p.t * p.mb * p.slc, 1.f);
    fill(d.src_iter, p.l * D * p.mb * H, 1.f);
    fill(d.src_iter_c, p.l * D * p.mb * H, 1.f);
    // Weights ~ 1 / sqrt(fan-in), as the frameworks initialize them: pre-activations of order 1.
    fill(d.wl, p.l * D * p.slc * G * H, 1.5f / std::sqrt(static_cast<float>(p.slc)));
    fill(d.wi, p.l * D * H * G * H, 1.5f / std::sqrt(static_cast<float>(H)));
    fill(d.bias, p.l * D * p.n_bias_gates() * H, 0.5f);
    return d;
}

rnn_out_t run_jit(const rnn_jit_prb_t &p, const rnn_data_t &d, isa level, const rnn_fwd_jit_threads_t &thr) {
    std::unique_ptr<rnn_fwd_jit_t> r;
    std::string why;
    EXPECT_EQ(rnn_fwd_jit_t::create(r, p, level, why, thr), status::success) << why;
    rnn_out_t o;
    if (!r) return o;
    r->pack_weights(d.wl.data(), d.wi.data(), d.with_bias ? d.bias.data() : nullptr);
    o.dst.assign(p.t * p.mb * p.dlc(), -7.f);
    o.dst_iter.assign(p.l * p.n_dirs() * p.mb * p.dhc, -7.f);
    o.dst_iter_c.assign(o.dst_iter.size(), p.cell == rnn_cell_kind_t::lstm ? -7.f : 0.f);
    rnn_jit_mem_t m = d.mem();
    m.dst_layer = o.dst.data();
    m.dst_iter = o.dst_iter.data();
    m.dst_iter_c = p.cell == rnn_cell_kind_t::lstm ? o.dst_iter_c.data() : nullptr;
    r->execute(m);
    return o;
}

// f32 GEMMs and the activations' few ulp, over up to 30 steps and 3 layers.
constexpr double atol = 3e-5, rtol = 3e-4;

void expect_near(const std::vector<float> &got, const std::vector<float> &want, const char *what, const std::string &ctx) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_LE(std::abs(got[i] - want[i]), atol + rtol * std::abs(want[i]))
                << what << "[" << i << "] got " << got[i] << " want " << want[i] << " " << ctx;
}

class rnn_jit_test : public ::testing::TestWithParam<isa> {
protected:
    void SetUp() override {
        if (detected_isa() < GetParam()) GTEST_SKIP() << to_string(GetParam()) << " not available";
    }
};

struct cell_case_t {
    rnn_cell_kind_t cell;
    eltwise_alg act;
    float alpha;
};
const cell_case_t cell_cases[] = {
        {rnn_cell_kind_t::vanilla_rnn, eltwise_alg::tanh, 0.f},
        {rnn_cell_kind_t::vanilla_rnn, eltwise_alg::relu, 0.1f},
        {rnn_cell_kind_t::vanilla_rnn, eltwise_alg::sigmoid, 0.f},
        {rnn_cell_kind_t::lstm, eltwise_alg::tanh, 0.f},
        {rnn_cell_kind_t::gru, eltwise_alg::tanh, 0.f},
        {rnn_cell_kind_t::lbr_gru, eltwise_alg::tanh, 0.f},
};
const rnn_dir_kind_t dirs[] = {rnn_dir_kind_t::l2r, rnn_dir_kind_t::r2l, rnn_dir_kind_t::bi_concat, rnn_dir_kind_t::bi_sum};

// A random problem: small sizes mostly, up to T 30, mb 9, 70 channels, 3 layers.
rnn_jit_prb_t random_prb(std::mt19937 &gen, const cell_case_t &cc, rnn_dir_kind_t dir) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
    rnn_jit_prb_t p;
    p.cell = cc.cell, p.activation = cc.act, p.alpha = cc.alpha, p.direction = dir;
    p.l = pick(1, 3);
    p.t = pick(1, 30);
    p.mb = pick(1, 9);
    p.dhc = pick(0, 3) == 0 ? pick(33, 70) : pick(1, 32);
    p.sic = p.dhc;
    p.slc = p.l > 1 ? p.dhc : pick(1, 70);
    p.src_ntc = pick(0, 1), p.dst_ntc = pick(0, 1);
    p.wei_layer_ldgoi = pick(0, 3) == 0, p.wei_iter_ldgoi = pick(0, 3) == 0;
    return p;
}

TEST_P(rnn_jit_test, every_cell_and_direction_against_naive) {
    const unsigned seed = 777;
    std::mt19937 gen(seed);
    int k = 0;
    for (const cell_case_t &cc : cell_cases)
        for (rnn_dir_kind_t dir : dirs)
            for (int rep = 0; rep < 2; ++rep, ++k) {
                const rnn_jit_prb_t p = random_prb(gen, cc, dir);
                const bool states = rep == 0 ? true : (k % 3 == 0), bias = (k % 5) != 1;
                const std::string ctx = cat(to_string(p), states ? " states" : " no-states", bias ? "" : " no-bias",
                        p.wei_layer_ldgoi ? " wl:ldgoi" : "", p.wei_iter_ldgoi ? " wi:ldgoi" : "", " seed ", seed, " #", k);
                SCOPED_TRACE(ctx);
                const rnn_data_t d = make_data(p, seed + k, states, bias);
                const rnn_out_t want = naive_rnn(p, d);
                const rnn_out_t got = run_jit(p, d, GetParam(), {1, -1});
                expect_near(got.dst, want.dst, "dst_layer", ctx);
                expect_near(got.dst_iter, want.dst_iter, "dst_iter", ctx);
                if (p.cell == rnn_cell_kind_t::lstm) expect_near(got.dst_iter_c, want.dst_iter_c, "dst_iter_c", ctx);
            }
}

TEST_P(rnn_jit_test, one_and_two_threads_identical) {
    // The split path (units over threads) forced on problems with several panels.
    const unsigned seed = 4242;
    std::mt19937 gen(seed);
    int k = 0;
    for (const cell_case_t &cc : cell_cases)
        for (rnn_dir_kind_t dir : {rnn_dir_kind_t::l2r, rnn_dir_kind_t::bi_concat}) {
            rnn_jit_prb_t p = random_prb(gen, cc, dir);
            p.dhc = p.sic = 70; // several panels on both ISAs
            if (p.l > 1) p.slc = 70;
            const std::string ctx = cat(to_string(p), " seed ", seed, " #", k);
            SCOPED_TRACE(ctx);
            const rnn_data_t d = make_data(p, seed + k++, true, true);
            const rnn_out_t one = run_jit(p, d, GetParam(), {1, -1});
            const rnn_out_t two = run_jit(p, d, GetParam(), {2, 0});
            EXPECT_EQ(one.dst, two.dst);
            EXPECT_EQ(one.dst_iter, two.dst_iter);
            EXPECT_EQ(one.dst_iter_c, two.dst_iter_c);
            const rnn_out_t want = naive_rnn(p, d);
            expect_near(two.dst, want.dst, "dst_layer", ctx);
        }
}

TEST_P(rnn_jit_test, benchmark_shapes_small) {
    // The tiny benchmark shapes, and nn.RNN(10, 10) on a (100, 10) input.
    for (const cell_case_t &cc : cell_cases) {
        for (std::int64_t mb : {1, 10}) {
            rnn_jit_prb_t p;
            p.cell = cc.cell, p.activation = cc.act, p.alpha = cc.alpha;
            p.t = 100, p.mb = mb, p.slc = p.sic = p.dhc = 10;
            const std::string ctx = to_string(p);
            SCOPED_TRACE(ctx);
            const rnn_data_t d = make_data(p, 99, true, true);
            expect_near(run_jit(p, d, GetParam(), {1, -1}).dst, naive_rnn(p, d).dst, "dst_layer", ctx);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(isa, rnn_jit_test, ::testing::Values(isa::avx512_core, isa::avx2),
        [](const ::testing::TestParamInfo<isa> &i) { return std::string(to_string(i.param)); });

// Applies one activation piece to n floats (n a multiple of the vector width), in place.
template <isa level>
class act_kernel_t : public jit_kernel_base_t {
public:
    enum kind_t { k_exp, k_sigmoid, k_tanh };
    explicit act_kernel_t(kind_t k) : jit_kernel_base_t("act_test"), k_(k), act_(*this, table_, k2) {}

private:
    using Vmm = typename jit_isa_traits_t<level>::Vmm;
    void generate() override {
        preamble();
        Xbyak::Label l;
        L(l);
        vmovups(Vmm(0), ptr[rdi]);
        if (k_ == k_exp) act_.exp(Vmm(0), Vmm(1), Vmm(2));
        else if (k_ == k_sigmoid) act_.sigmoid(Vmm(0), Vmm(1), Vmm(2));
        else act_.tanh(Vmm(0), Vmm(1), Vmm(2), Vmm(3), Vmm(4));
        vmovups(ptr[rdi], Vmm(0));
        add(rdi, jit_isa_traits_t<level>::simd_w * 4);
        sub(rsi, jit_isa_traits_t<level>::simd_w);
        jg(l);
        postamble();
        act_.emit_table(0.f);
    }
    kind_t k_;
    Xbyak::Label table_;
    jit_rnn_act_t<level> act_;
};

// Largest error in ulps (of the double result rounded to float) over xs.
template <isa level>
double max_ulp(typename act_kernel_t<level>::kind_t k, const std::vector<float> &xs, double (*f)(double), double floor) {
    act_kernel_t<level> ker(k);
    std::string why;
    EXPECT_EQ(ker.create(why), status::success) << why;
    std::vector<float> y = xs;
    ker.template entry<void (*)(float *, std::int64_t)>()(y.data(), static_cast<std::int64_t>(y.size()));
    double worst = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double want = f(xs[i]);
        if (std::abs(want) < floor) continue; // below FLT_MIN: absolute error only, checked below
        const float wf = static_cast<float>(want);
        const double ulp = std::nextafter(std::abs(wf), INFINITY) - std::abs(wf);
        worst = std::max(worst, std::abs(y[i] - want) / ulp);
        EXPECT_FALSE(std::isnan(y[i])) << "x=" << xs[i];
    }
    for (std::size_t i = 0; i < xs.size(); ++i)
        if (std::abs(f(xs[i])) < floor) {
            EXPECT_LE(std::abs(y[i] - f(xs[i])), 1.2e-38) << "x=" << xs[i];
        }
    return worst;
}

template <isa level>
void check_act_accuracy() {
    // Dense over [-100, 100], denser near 0 (tanh's two formulas meet at 0.625), plus tiny x.
    std::vector<float> xs;
    for (double x = -100; x <= 100; x += 1.0 / 512) xs.push_back(static_cast<float>(x));
    for (double x = -2; x <= 2; x += 1.0 / 65536) xs.push_back(static_cast<float>(x));
    for (double x = 1e-30; x < 1; x *= 1.7) xs.push_back(static_cast<float>(x)), xs.push_back(static_cast<float>(-x));
    while (xs.size() % 16) xs.push_back(0.f);
    const double flt_min = 1.1754943508222875e-38;
    auto dexp = [](double x) { return std::exp(x); };
    auto dsig = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    auto dtanh = [](double x) { return std::tanh(x); };
    std::vector<float> exp_xs;
    for (float x : xs)
        if (x >= -87.f && x <= 88.f) exp_xs.push_back(x);
    while (exp_xs.size() % 16) exp_xs.push_back(0.f);
    const double e = max_ulp<level>(act_kernel_t<level>::k_exp, exp_xs, dexp, flt_min);
    const double s = max_ulp<level>(act_kernel_t<level>::k_sigmoid, xs, dsig, flt_min);
    const double t = max_ulp<level>(act_kernel_t<level>::k_tanh, xs, dtanh, 0);
    // The bounds jit_rnn_act.hpp states.
    EXPECT_LE(e, 2.0);
    EXPECT_LE(s, 4.0);
    EXPECT_LE(t, 4.0);
    std::printf("%s: max error exp %.2f ulp, sigmoid %.2f ulp, tanh %.2f ulp\n", to_string(level), e, s, t);
}

TEST(rnn_jit_act, accuracy) {
    check_act_accuracy<isa::avx2>();
    if (detected_isa() >= isa::avx512_core) check_act_accuracy<isa::avx512_core>();
}

TEST(rnn_jit_conf, panels_and_threads) {
    rnn_jit_prb_t p;
    p.cell = rnn_cell_kind_t::lstm, p.t = 50, p.mb = 64, p.slc = p.sic = p.dhc = 512;
    rnn_fwd_jit_conf_t c;
    std::string why;
    ASSERT_EQ(init_conf_rnn_fwd_jit(c, p, isa::avx512_core, {2, -1}, why), status::success) << why;
    EXPECT_EQ(c.hb, 16); // 4 gates x 16 units = one 4-vector panel
    EXPECT_EQ(c.n_panels, 32);
    EXPECT_EQ(c.max_threads, 2);
    p.mb = 10, p.slc = p.sic = p.dhc = 10;
    ASSERT_EQ(init_conf_rnn_fwd_jit(c, p, isa::avx512_core, {2, -1}, why), status::success) << why;
    EXPECT_EQ(c.n_panels, 1);
    EXPECT_EQ(c.max_threads, 1); // tiny steps stay on the calling thread
    p.sic = 11;
    EXPECT_EQ(init_conf_rnn_fwd_jit(c, p, isa::avx512_core, {1, -1}, why), status::unimplemented);
    EXPECT_NE(why.find("sic11"), std::string::npos) << why;
}

} // namespace
