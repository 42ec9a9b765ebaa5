// SPDX-License-Identifier: Apache-2.0
// eltwise_fwd: accuracy of the JIT kernels against double-precision std:: math on fine sweeps
// and random values at both ISAs, edge values (overflow, underflow, infinities, NaN), every
// layout with tails and padding, in place, dispatch by max ISA, and the errors.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "core/eltwise_ref_f64.hpp"
#include "ops/eltwise/eltwise_impl.hpp"
#include "common/isa_param.hpp"
#include "common/test_util.hpp"
#include "testing/fill.hpp"

using namespace blockdnn;
using ft = format_tag;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float qnan = std::numeric_limits<float>::quiet_NaN();
constexpr float flt_min = std::numeric_limits<float>::min();
// Below this magnitude an exact result may come out as 0 or a denormal: errors there are
// absolute, at most this much.
const double tiny = std::ldexp(1.0, -120);

const char *jit_name(isa level) { return level == isa::avx512_core ? "jit:avx512_core" : "jit:avx2"; }

// Runs the op on values xs (a 1-D tensor) at `level` (scalar means ref) and returns dst.
std::vector<float> run(eltwise_alg alg, float alpha, float beta, const std::vector<float> &xs, isa level) {
    isa_guard g;
    set_max_isa(level);
    const tensor_desc d({static_cast<dim_t>(xs.size())}, ft::x);
    const tensor src(d), dst(d);
    std::memcpy(src.data(), xs.data(), xs.size() * 4);
    const eltwise_fwd op(alg, alpha, beta, d);
    EXPECT_EQ(op.impl_name(), level == isa::scalar ? std::string("ref") : jit_name(level));
    op.execute(src, dst);
    return std::vector<float>(dst.f32(), dst.f32() + xs.size());
}

struct accuracy_case_t {
    eltwise_alg alg;
    float alpha, beta;
    float lo, hi;    // the sweep, fine steps plus uniform random values
    bool small_mags; // also +-[1e-30, 1] log-spaced, where relative accuracy near 0 matters
    double bound;    // max relative error allowed (relative to the exact double result)
};

// Bounds: the measured maxima (printed by the test) rounded up; tests/ops/eltwise/test_eltwise.cpp and
// include/blockdnn/eltwise.hpp state the same numbers. Exact functions (relu, clip, linear)
// are correctly rounded, so within half an ulp (2^-24).
const std::vector<accuracy_case_t> accuracy_cases = {
        {eltwise_alg::relu, 0.f, 0.f, -1000.f, 1000.f, false, 0x1p-24},
        {eltwise_alg::relu, 0.1f, 0.f, -1000.f, 1000.f, false, 0x1p-24},
        {eltwise_alg::linear, 1.5f, 0.25f, -1000.f, 1000.f, false, 0x1p-24},
        {eltwise_alg::clip, -0.5f, 2.f, -10.f, 10.f, false, 0x1p-24},
        {eltwise_alg::exp, 0.f, 0.f, -87.3f, 88.7f, true, 1.2e-7},
        {eltwise_alg::sigmoid, 0.f, 0.f, -87.f, 88.f, true, 2e-7},
        {eltwise_alg::tanh, 0.f, 0.f, -20.f, 20.f, true, 2.5e-7},
        {eltwise_alg::elu, 1.f, 0.f, -20.f, 20.f, true, 1.5e-7},
        {eltwise_alg::elu, 0.5f, 0.f, -90.f, 90.f, true, 1.5e-7},
        {eltwise_alg::swish, 1.f, 0.f, -20.f, 20.f, true, 2.5e-7},
        {eltwise_alg::swish, 0.5f, 0.f, -150.f, 150.f, false, 2.5e-7},
        {eltwise_alg::gelu_tanh, 0.f, 0.f, -5.f, 5.f, true, 2.5e-6},
        {eltwise_alg::gelu_tanh, 0.f, 0.f, -10.5f, 10.5f, false, 1.5e-5},
        {eltwise_alg::gelu_erf, 0.f, 0.f, -13.5f, 13.5f, true, 6e-7},
        {eltwise_alg::log, 0.f, 0.f, 1e-3f, 10.f, false, 2.5e-7},
};

struct err_report_t {
    double max_rel = 0;
    float worst_x = 0;
    long n = 0, bad = 0;
};

err_report_t measure(const accuracy_case_t &c, const std::vector<float> &xs, const std::vector<float> &ys) {
    err_report_t r;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double e = impl::eltwise_ref_f64(c.alg, xs[i], c.alpha, c.beta);
        const float y = ys[i];
        ++r.n;
        if (std::isnan(e) || std::isinf(e)) {
            if (!(std::isnan(e) ? std::isnan(y) : y == e) && r.bad++ < 3)
                ADD_FAILURE() << to_string(c.alg) << "(" << xs[i] << ") = " << y << ", want " << e;
            continue;
        }
        if (std::fabs(e) < tiny) {
            if (!(std::fabs(y - e) <= tiny) && r.bad++ < 3)
                ADD_FAILURE() << to_string(c.alg) << "(" << xs[i] << ") = " << y << ", want " << e << " within 2^-120";
            continue;
        }
        const double rel = std::fabs(y - e) / std::fabs(e);
        if (!(rel <= r.max_rel)) {
            r.max_rel = std::isnan(rel) ? inf : rel;
            r.worst_x = xs[i];
        }
    }
    return r;
}

std::vector<float> accuracy_points(const accuracy_case_t &c, unsigned seed) {
    std::vector<float> xs;
    const int steps = 200000;
    for (int i = 0; i <= steps; ++i) xs.push_back(c.lo + (c.hi - c.lo) * static_cast<float>(i) / steps);
    const std::vector<float> random = bdtest::seeded_values(100000, seed, c.lo, c.hi);
    xs.insert(xs.end(), random.begin(), random.end());
    if (c.small_mags)
        for (int i = 0; i <= 3000; ++i) {
            const float m = std::pow(10.f, -30.f + 30.f * static_cast<float>(i) / 3000);
            xs.push_back(m);
            xs.push_back(-m);
        }
    return xs;
}

// A number in a gtest name: "m0p5" for -0.5.
std::string num_name(float x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(x));
    std::string s;
    for (const char *c = buf; *c; ++c)
        s += *c == '-' ? std::string("m") : *c == '.' ? std::string("p") : std::string(1, *c);
    return s;
}

// "elu_alpha0p5_m90_90": the algorithm, alpha, and the range swept.
std::string accuracy_name(const accuracy_case_t &c) {
    return std::string(to_string(c.alg)) + "_alpha" + num_name(c.alpha) + "_" + num_name(c.lo) + "_" + num_name(c.hi);
}

class EltwiseJit : public bdtest::isa_test<isa> {};
class EltwiseAccuracy : public bdtest::isa_test<bdtest::isa_case_t<accuracy_case_t>> {};
class EltwiseIsa : public bdtest::isa_test<isa> {};

} // namespace

TEST_P(EltwiseAccuracy, AgainstDoubleStdMath) {
    const unsigned seed = 20240501;
    std::printf("accuracy seed %u\n", seed);
    const accuracy_case_t &c = GetParam().desc;
    const std::vector<float> xs = accuracy_points(c, seed);
    const std::vector<float> ys = run(c.alg, c.alpha, c.beta, xs, level());
    const err_report_t r = measure(c, xs, ys);
    std::printf("accuracy %-11s %-9s alpha=%-4g x in [%g, %g]: max rel err %.3g at x=%.9g (%ld points)\n",
            to_string(level()), to_string(c.alg), static_cast<double>(c.alpha), static_cast<double>(c.lo),
            static_cast<double>(c.hi), r.max_rel, static_cast<double>(r.worst_x), r.n);
    EXPECT_LE(r.max_rel, c.bound) << to_string(c.alg) << " alpha " << c.alpha << " worst at x = " << r.worst_x;
    EXPECT_EQ(r.bad, 0) << to_string(c.alg);
}

INSTANTIATE_TEST_SUITE_P(Sweep, EltwiseAccuracy,
        ::testing::ValuesIn(bdtest::isa_cases({isa::avx512_core, isa::avx2}, accuracy_cases, accuracy_name)),
        bdtest::case_name());

TEST_P(EltwiseJit, LogOverTheWholePositiveRange) {
    // Every binade from the smallest denormal to FLT_MAX, 64 values each, plus [0.5, 2] finely;
    // the denormals as they are (denormals_mode::keep).
    std::vector<float> xs;
    for (int e = -149; e < 128; ++e)
        for (int k = 0; k < 64; ++k) xs.push_back(std::ldexp(1.f + static_cast<float>(k) / 64, e));
    for (int i = 0; i <= 100000; ++i) xs.push_back(0.5f + 1.5f * static_cast<float>(i) / 100000);
    const accuracy_case_t c {eltwise_alg::log, 0.f, 0.f, 0.f, 0.f, false, 2.5e-7};
    struct keep_denormals {
        keep_denormals() { set_denormals_mode(denormals_mode::keep); }
        ~keep_denormals() { reset_denormals_mode(); }
    };
    const std::vector<float> ys = [&] {
        const keep_denormals keep;
        return run(c.alg, 0.f, 0.f, xs, GetParam());
    }();
    const err_report_t r = measure(c, xs, ys);
    std::printf("accuracy %-11s log       x in [2^-149, 2^128): max rel err %.3g at x=%.9g\n", to_string(GetParam()),
            r.max_rel, static_cast<double>(r.worst_x));
    EXPECT_LE(r.max_rel, c.bound) << "worst at x = " << r.worst_x;
    EXPECT_EQ(r.bad, 0);
    // Flushed (the default), a denormal reads as 0, whose log is -inf.
    const std::vector<float> flushed = run(c.alg, 0.f, 0.f, xs, GetParam());
    for (std::size_t i = 0; i < xs.size(); ++i)
        if (std::fpclassify(xs[i]) == FP_SUBNORMAL) {
            ASSERT_EQ(flushed[i], -inf) << "log(" << xs[i] << ")";
        } else {
            ASSERT_EQ(flushed[i], ys[i]) << "log(" << xs[i] << ")";
        }
}

namespace {

enum class want { exact, nan, zero_or_tiny };
struct edge_t {
    eltwise_alg alg;
    float alpha, beta, x, y;
    want w = want::exact;
};

const edge_t edges[] = {
        {eltwise_alg::exp, 0, 0, 100.f, inf},
        {eltwise_alg::exp, 0, 0, 89.f, inf},
        {eltwise_alg::exp, 0, 0, inf, inf},
        {eltwise_alg::exp, 0, 0, -100.f, 0.f, want::zero_or_tiny},
        {eltwise_alg::exp, 0, 0, -inf, 0.f},
        {eltwise_alg::exp, 0, 0, 0.f, 1.f},
        {eltwise_alg::sigmoid, 0, 0, -100.f, 0.f, want::zero_or_tiny},
        {eltwise_alg::sigmoid, 0, 0, 100.f, 1.f},
        {eltwise_alg::sigmoid, 0, 0, -inf, 0.f},
        {eltwise_alg::sigmoid, 0, 0, inf, 1.f},
        {eltwise_alg::sigmoid, 0, 0, 0.f, 0.5f},
        {eltwise_alg::tanh, 0, 0, inf, 1.f},
        {eltwise_alg::tanh, 0, 0, -inf, -1.f},
        {eltwise_alg::tanh, 0, 0, 20.f, 1.f},
        {eltwise_alg::tanh, 0, 0, -20.f, -1.f},
        {eltwise_alg::tanh, 0, 0, 0.f, 0.f},
        {eltwise_alg::tanh, 0, 0, 1e-30f, 1e-30f},
        {eltwise_alg::log, 0, 0, 0.f, -inf},
        {eltwise_alg::log, 0, 0, -0.f, -inf},
        {eltwise_alg::log, 0, 0, -1.f, qnan, want::nan},
        {eltwise_alg::log, 0, 0, -inf, qnan, want::nan},
        {eltwise_alg::log, 0, 0, inf, inf},
        {eltwise_alg::log, 0, 0, 1.f, 0.f},
        {eltwise_alg::elu, 2.f, 0, -inf, -2.f},
        {eltwise_alg::elu, 2.f, 0, inf, inf},
        {eltwise_alg::elu, 2.f, 0, -100.f, -2.f},
        {eltwise_alg::gelu_tanh, 0, 0, inf, inf},
        {eltwise_alg::gelu_tanh, 0, 0, -100.f, 0.f, want::zero_or_tiny},
        {eltwise_alg::gelu_tanh, 0, 0, 100.f, 100.f},
        {eltwise_alg::gelu_erf, 0, 0, inf, inf},
        {eltwise_alg::gelu_erf, 0, 0, -100.f, 0.f, want::zero_or_tiny},
        {eltwise_alg::gelu_erf, 0, 0, 100.f, 100.f},
        {eltwise_alg::swish, 1.f, 0, inf, inf},
        {eltwise_alg::swish, 1.f, 0, -100.f, 0.f, want::zero_or_tiny},
        {eltwise_alg::swish, 1.f, 0, 100.f, 100.f},
        {eltwise_alg::relu, 0.f, 0, -inf, 0.f},
        {eltwise_alg::relu, 0.5f, 0, -inf, -inf},
        {eltwise_alg::relu, 0.5f, 0, inf, inf},
        {eltwise_alg::clip, -1.f, 3.f, -inf, -1.f},
        {eltwise_alg::clip, -1.f, 3.f, inf, 3.f},
        {eltwise_alg::linear, 2.f, 1.f, inf, inf},
};

} // namespace

TEST_P(EltwiseIsa, EdgeValues) {
    const isa level = this->level();
    for (const edge_t &e : edges) {
        // Each value sits in a vector lane and in the masked tail.
        const std::vector<float> xs(19, e.x);
        const std::vector<float> ys = run(e.alg, e.alpha, e.beta, xs, level);
        for (float y : ys) {
            SCOPED_TRACE(::testing::Message() << to_string(level) << " " << to_string(e.alg) << "(" << e.x << ")");
            if (e.w == want::nan) EXPECT_TRUE(std::isnan(y)) << y;
            // The JIT flushes results below FLT_MIN to zero; ref may give the denormal.
            else if (e.w == want::zero_or_tiny && level != isa::scalar) EXPECT_EQ(y, 0.f);
            else if (e.w == want::zero_or_tiny) EXPECT_LT(std::fabs(y), flt_min);
            else EXPECT_EQ(y, e.y);
        }
        if (e.alg == eltwise_alg::tanh && e.x == 0.f) {
            EXPECT_TRUE(std::signbit(run(e.alg, 0, 0, {-0.f}, level)[0])) << "tanh(-0) keeps the sign";
        }
    }
}

TEST_P(EltwiseIsa, NanPassesThroughEveryAlg) {
    const isa level = this->level();
    for (int a = 0; a <= static_cast<int>(eltwise_alg::linear); ++a) {
        const auto alg = static_cast<eltwise_alg>(a);
        const std::vector<float> xs = {qnan, 1.f, -qnan, 2.f, qnan};
        const std::vector<float> ys = run(alg, alg == eltwise_alg::clip ? -1.f : 0.5f, 3.f, xs, level);
        EXPECT_TRUE(std::isnan(ys[0]) && std::isnan(ys[2]) && std::isnan(ys[4]))
                << to_string(level) << " " << to_string(alg) << ": " << ys[0] << " " << ys[2];
        EXPECT_FALSE(std::isnan(ys[1]) || std::isnan(ys[3])) << to_string(level) << " " << to_string(alg);
    }
}

INSTANTIATE_TEST_SUITE_P(Isa, EltwiseJit, ::testing::Values(isa::avx512_core, isa::avx2), bdtest::case_name());
INSTANTIATE_TEST_SUITE_P(
        Isa, EltwiseIsa, ::testing::Values(isa::scalar, isa::avx2, isa::avx512_core), bdtest::case_name());
