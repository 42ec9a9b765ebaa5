// SPDX-License-Identifier: Apache-2.0
// Batch normalization forward: values against the definition (hand-computed and a long-double
// oracle), invariants of training mode, every layout bit-identical to plain, numerically hard
// channels, degenerate shapes, in place, running statistics, and every error.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "common/isa_param.hpp"
#include "common/test_util.hpp"
#include "testing/tolerances.hpp"

using namespace blockdnn;
using ft = format_tag;

namespace {

constexpr bnorm_flags scale_shift = bnorm_flags::use_scale | bnorm_flags::use_shift;

tensor make(const tensor_desc &d, unsigned seed) {
    tensor t(d);
    fill_random(t, seed);
    return t;
}

tensor stat(dim_t c, std::initializer_list<float> v = {}) {
    tensor t(tensor_desc({c}, ft::x));
    dim_t k = 0;
    for (float f : v) t.f32()[k++] = f;
    return t;
}

// Logical elements of t, in canonical order.
std::vector<float> logical(const tensor &t) {
    std::vector<float> v;
    for_each_index(t.desc(), [&](const dim_t *idx) { v.push_back(t.f32()[t.desc().offset(idx)]); });
    return v;
}

std::vector<float> floats(const tensor &t) { return {t.f32(), t.f32() + t.desc().nelems()}; }

struct oracle_t {
    std::vector<double> mean, var;
    std::vector<float> dst; // logical order
};

// The definition in long double, independent of the library's loops: logical order is
// (n, c, spatial...) with spatial fastest, so channel c of point (n, s) is at (n * C + c) * SP + s.
oracle_t oracle(const tensor &src, const bnorm_desc &d, const float *mean_in, const float *var_in, const float *gamma,
        const float *beta) {
    const std::vector<float> x = logical(src);
    const dim_t N = src.desc().dim(0), C = src.desc().dim(1), SP = src.desc().nelems() / (N * C);
    oracle_t o;
    o.mean.resize(C);
    o.var.resize(C);
    o.dst.resize(x.size());
    for (dim_t c = 0; c < C; ++c) {
        long double m = 0, v = 0;
        if (d.mode == bnorm_mode::training) {
            for (dim_t n = 0; n < N; ++n)
                for (dim_t s = 0; s < SP; ++s) m += x[(n * C + c) * SP + s];
            m /= N * SP;
            for (dim_t n = 0; n < N; ++n)
                for (dim_t s = 0; s < SP; ++s) v += (x[(n * C + c) * SP + s] - m) * (x[(n * C + c) * SP + s] - m);
            v /= N * SP;
        } else {
            m = mean_in[c];
            v = var_in[c];
        }
        o.mean[c] = static_cast<double>(m);
        o.var[c] = static_cast<double>(v);
        const long double g = gamma ? gamma[c] : 1, b = beta ? beta[c] : 0;
        for (dim_t n = 0; n < N; ++n)
            for (dim_t s = 0; s < SP; ++s) {
                const dim_t k = (n * C + c) * SP + s;
                long double y = g * (x[k] - m) / std::sqrt(v + static_cast<long double>(d.epsilon)) + b;
                if (has(d.flags, bnorm_flags::fuse_relu) && y < 0) y = 0;
                o.dst[k] = static_cast<float>(y);
            }
    }
    return o;
}

// The tests below that run at every level: the reference (scalar), then each JIT.
class BnormIsa : public bdtest::capped_isa_test<isa> {};

TEST_P(BnormIsa, HandComputedTraining) {
    // One channel, values 1..4: mean 2.5, biased variance 1.25.
    const tensor src(tensor_desc({1, 1, 2, 2}, ft::nchw));
    for (int k = 0; k < 4; ++k) src.f32()[k] = static_cast<float>(k + 1);
    const isa level = this->level();
    const tensor dst(src.desc()), mean = stat(1), var = stat(1);
    bnorm_fwd op({bnorm_mode::training, src.desc(), {}, 0.f, bnorm_flags::none});
    EXPECT_STREQ(op.impl_name(), level == isa::scalar ? "ref" : (std::string("jit:") + to_string(level)).c_str());
    op.execute({src, dst, mean, var, {}, {}});
    EXPECT_EQ(mean.f32()[0], 2.5f) << to_string(level);
    EXPECT_EQ(var.f32()[0], 1.25f) << to_string(level);
    for (int k = 0; k < 4; ++k)
        EXPECT_FLOAT_EQ(dst.f32()[k], static_cast<float>((k + 1 - 2.5) / std::sqrt(1.25))) << to_string(level);
}

TEST(Bnorm, HandComputedInferenceScaleShiftRelu) {
    const tensor src(tensor_desc({1, 2}, ft::nc));
    src.f32()[0] = 3.f;  // channel 0
    src.f32()[1] = -1.f; // channel 1
    const tensor dst(src.desc());
    const tensor mean = stat(2, {1.f, 1.f}), var = stat(2, {4.f, 0.25f});
    const tensor gamma = stat(2, {2.f, 3.f}), beta = stat(2, {0.5f, 1.f});
    bnorm_fwd op({bnorm_mode::inference, src.desc(), {}, 0.f, scale_shift | bnorm_flags::fuse_relu});
    op.execute({src, dst, mean, var, gamma, beta});
    EXPECT_EQ(dst.f32()[0], 2.f * (3.f - 1.f) / 2.f + 0.5f); // 2.5
    EXPECT_EQ(dst.f32()[1], 0.f);                            // 3 * (-2 / 0.5) + 1 = -11 -> relu
    EXPECT_EQ(mean.f32()[0], 1.f);                           // inference leaves the statistics alone
    EXPECT_EQ(var.f32()[1], 0.25f);
}

// Random shapes in every layout and both modes: results equal the long-double oracle within
// tol::bnorm, and every layout gives the same bits as the plain one.
// At every ISA: each layout against the oracle; with the reference (scalar) also bit-identical
// to the plain run, which JIT implementations (each layout walked in its own order) are not.
TEST_P(BnormIsa, EveryLayoutMatchesOracleAndPlain) {
    const isa level = this->level();
    const bool exact = level == isa::scalar;
    const std::vector<std::pair<ft, std::vector<ft>>> families = {
            {ft::nc, {}},
            {ft::ncw, {ft::nwc, ft::nCw8c, ft::nCw16c}},
            {ft::nchw, {ft::nhwc, ft::nChw8c, ft::nChw16c}},
            {ft::ncdhw, {ft::ndhwc, ft::nCdhw8c, ft::nCdhw16c}},
    };
    std::mt19937 gen(2024);
    std::uniform_int_distribution<dim_t> mb_d(1, 4), c_d(1, 40), sp_d(1, 6);
    const bnorm_flags flag_sets[] = {
            bnorm_flags::none, scale_shift, scale_shift | bnorm_flags::fuse_relu, bnorm_flags::use_shift};
    int cases = 0;
    for (const auto &[plain, others] : families)
        for (int rep = 0; rep < 3; ++rep)
            for (bnorm_mode mode : {bnorm_mode::training, bnorm_mode::inference}) {
                dims_t dims = {mb_d(gen), c_d(gen)};
                while (static_cast<int>(dims.size()) < ndims_of(plain)) dims.push_back(sp_d(gen));
                const dim_t C = dims[1];
                const bnorm_flags flags = flag_sets[(rep + cases) % 4];
                const unsigned seed = gen();
                const tensor src = make(tensor_desc(dims, plain), seed);
                const tensor gamma = make(tensor_desc({C}, ft::x), seed + 1),
                             beta = make(tensor_desc({C}, ft::x), seed + 2);
                tensor mean_in = make(tensor_desc({C}, ft::x), seed + 3), var_in(tensor_desc({C}, ft::x));
                for (dim_t c = 0; c < C; ++c) var_in.f32()[c] = 0.1f + static_cast<float>(c % 7);
                const bnorm_desc d {mode, src.desc(), {}, 1e-3f, flags};
                const std::string what = std::string(to_string(level)) + " " + to_string(mode) + " " + src.desc().str();
                const oracle_t want = oracle(src, d, mean_in.f32(), var_in.f32(),
                        has(flags, bnorm_flags::use_scale) ? gamma.f32() : nullptr,
                        has(flags, bnorm_flags::use_shift) ? beta.f32() : nullptr);

                const tensor dst(src.desc());
                tensor mean = mode == bnorm_mode::training ? stat(C) : mean_in;
                tensor var = mode == bnorm_mode::training ? stat(C) : var_in;
                bnorm_fwd(d).execute({src, dst, mean, var, gamma, beta});
                const std::vector<float> got = logical(dst);
                EXPECT_LE(tol::rel_err(got.data(), want.dst.data(), got.size()), tol::bnorm) << what;
                if (mode == bnorm_mode::training)
                    for (dim_t c = 0; c < C; ++c) {
                        EXPECT_NEAR(mean.f32()[c], want.mean[c], tol::bnorm_stats) << what << " c " << c;
                        EXPECT_NEAR(var.f32()[c], want.var[c], tol::bnorm_stats * std::max(1.0, want.var[c]))
                                << what << " c " << c;
                    }
                ++cases;

                for (ft tag : others) {
                    // src in the other layout, dst in it too and (separately) dst plain.
                    const tensor src_b = reorder(src, tag);
                    for (ft dtag : {tag, plain}) {
                        const tensor dst_b(tensor_desc(dims, dtag));
                        float *p = dst_b.f32();
                        for (dim_t k = 0; k < dst_b.desc().nelems_padded(); ++k) p[k] = 777.f; // poison
                        tensor mean_b = mode == bnorm_mode::training ? stat(C) : mean_in;
                        tensor var_b = mode == bnorm_mode::training ? stat(C) : var_in;
                        bnorm_fwd({mode, src_b.desc(), dst_b.desc(), 1e-3f, flags})
                                .execute({src_b, dst_b, mean_b, var_b, gamma, beta});
                        const std::vector<float> got_b = logical(dst_b);
                        if (exact) {
                            EXPECT_EQ(0, std::memcmp(got_b.data(), got.data(), got.size() * 4))
                                    << what << " vs " << dst_b.desc().str();
                            EXPECT_EQ(floats(mean_b), floats(mean)) << what << " " << to_string(tag);
                            EXPECT_EQ(floats(var_b), floats(var)) << what << " " << to_string(tag);
                        } else {
                            EXPECT_LE(tol::rel_err(got_b.data(), want.dst.data(), got_b.size()), tol::bnorm)
                                    << what << " vs " << dst_b.desc().str();
                            if (mode == bnorm_mode::training)
                                for (dim_t c = 0; c < C; ++c) {
                                    EXPECT_NEAR(mean_b.f32()[c], want.mean[c], tol::bnorm_stats) << what << " c " << c;
                                    EXPECT_NEAR(
                                            var_b.f32()[c], want.var[c], tol::bnorm_stats * std::max(1.0, want.var[c]))
                                            << what << " c " << c;
                                }
                        }
                        // Padding channels are zero.
                        dim_t bad = 0;
                        std::vector<char> seen(dst_b.desc().nelems_padded(), 0);
                        for_each_index(dst_b.desc(), [&](const dim_t *idx) { seen[dst_b.desc().offset(idx)] = 1; });
                        for (dim_t k = 0; k < dst_b.desc().nelems_padded(); ++k)
                            if (!seen[k] && p[k] != 0.f) ++bad;
                        EXPECT_EQ(bad, 0) << what << " padding of " << dst_b.desc().str();
                        ++cases;
                    }
                }
            }
    EXPECT_EQ(cases, 4 * 3 * 2 + 3 * 3 * 2 * 3 * 2);
}

// Training statistics: dst of every channel has mean beta and variance gamma^2 var / (var + eps).
TEST(Bnorm, TrainingOutputIsNormalized) {
    const tensor src = make(tensor_desc({5, 7, 3, 4}, ft::nChw16c), 7);
    const tensor gamma = stat(7, {1, 2, 0.5f, -1, 3, 1, 1}), beta = stat(7, {0, 1, -2, 0.5f, 0, 0, 4});
    const tensor dst(src.desc()), mean = stat(7), var = stat(7);
    bnorm_fwd({bnorm_mode::training, src.desc(), {}, 1e-5f, scale_shift}).execute({src, dst, mean, var, gamma, beta});
    const tensor back = reorder(dst, ft::nchw);
    for (dim_t c = 0; c < 7; ++c) {
        double m = 0, v = 0;
        for (dim_t n = 0; n < 5; ++n)
            for (dim_t s = 0; s < 12; ++s) m += back.f32()[(n * 7 + c) * 12 + s];
        m /= 60;
        for (dim_t n = 0; n < 5; ++n)
            for (dim_t s = 0; s < 12; ++s) v += std::pow(back.f32()[(n * 7 + c) * 12 + s] - m, 2);
        v /= 60;
        const double g = gamma.f32()[c], vr = var.f32()[c];
        EXPECT_NEAR(m, beta.f32()[c], 1e-5) << "c " << c;
        EXPECT_NEAR(v, g * g * vr / (vr + 1e-5), 1e-5 * std::max(1.0, g * g)) << "c " << c;
    }
}

// A channel of 1e4 + noise of 1e-2: E[x^2] - E[x]^2 would lose the variance (1e8 vs 1e-4)
// to cancellation; the two-pass variance keeps it.
TEST(Bnorm, LargeOffsetKeepsVariance) {
    const dim_t N = 8, SP = 64;
    const tensor src(tensor_desc({N, 2, 8, 8}, ft::nchw));
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (dim_t k = 0; k < src.desc().nelems(); ++k) src.f32()[k] = 1e4f + 1e-2f * u(gen);
    const tensor dst(src.desc()), mean = stat(2), var = stat(2);
    bnorm_fwd({bnorm_mode::training, src.desc(), {}, 0.f, bnorm_flags::none}).execute({src, dst, mean, var, {}, {}});
    for (dim_t c = 0; c < 2; ++c) {
        long double m = 0, v = 0;
        for (dim_t n = 0; n < N; ++n)
            for (dim_t s = 0; s < SP; ++s) m += src.f32()[(n * 2 + c) * SP + s];
        m /= N * SP;
        for (dim_t n = 0; n < N; ++n)
            for (dim_t s = 0; s < SP; ++s) v += std::pow(src.f32()[(n * 2 + c) * SP + s] - m, 2);
        v /= N * SP;
        // float spacing at 1e4 is ~1e-3, so the values are quantized but the variance of
        // what was stored is ~3e-5; it must come out to float precision, not 0 or garbage.
        ASSERT_GT(v, 1e-6L);
        EXPECT_NEAR(var.f32()[c], static_cast<double>(v), 1e-6 * static_cast<double>(v)) << "c " << c;
        EXPECT_NEAR(mean.f32()[c], static_cast<double>(m), 1e-3);
        // The normalized output has unit variance.
        double ov = 0;
        for (dim_t n = 0; n < N; ++n)
            for (dim_t s = 0; s < SP; ++s) ov += std::pow(dst.f32()[(n * 2 + c) * SP + s], 2);
        EXPECT_NEAR(ov / (N * SP), 1.0, 1e-4) << "c " << c;
    }
}

// mb 1, spatial 1x1 in training: each channel has one value, variance 0, dst = shift.
TEST(Bnorm, SingleValueChannelGivesShift) {
    for (float eps : {1e-5f, 0.f})
        for (bnorm_flags relu : {bnorm_flags::none, bnorm_flags::fuse_relu}) {
            const tensor src(tensor_desc({1, 3, 1, 1}, ft::nChw8c));
            for (dim_t c = 0; c < 3; ++c) src.f32()[c] = 5.f * static_cast<float>(c) - 3.f;
            const tensor dst(src.desc()), mean = stat(3), var = stat(3);
            const tensor gamma = stat(3, {2, 2, 2}), beta = stat(3, {0.25f, -1.5f, 7});
            bnorm_fwd({bnorm_mode::training, src.desc(), {}, eps, scale_shift | relu})
                    .execute({src, dst, mean, var, gamma, beta});
            for (dim_t c = 0; c < 3; ++c) {
                const float want = relu == bnorm_flags::fuse_relu ? std::max(0.f, beta.f32()[c]) : beta.f32()[c];
                EXPECT_EQ(dst.f32()[c], want) << "eps " << eps << " c " << c;
                EXPECT_EQ(var.f32()[c], 0.f);
                EXPECT_EQ(mean.f32()[c], src.f32()[c]);
            }
        }
}

TEST(Bnorm, FuseReluIsMaxWithZero) {
    const tensor src = make(tensor_desc({3, 5, 7}, ft::nCw16c), 11);
    const tensor gamma = make(tensor_desc({5}, ft::x), 12), beta = make(tensor_desc({5}, ft::x), 13);
    const tensor a(src.desc()), b(src.desc());
    bnorm_fwd({bnorm_mode::training, src.desc(), {}, 1e-5f, scale_shift}).execute({src, a, {}, {}, gamma, beta});
    bnorm_fwd({bnorm_mode::training, src.desc(), {}, 1e-5f, scale_shift | bnorm_flags::fuse_relu})
            .execute({src, b, {}, {}, gamma, beta});
    int negatives = 0;
    for (dim_t k = 0; k < src.desc().nelems_padded(); ++k) {
        EXPECT_EQ(b.f32()[k], std::max(a.f32()[k], 0.f)) << k;
        negatives += a.f32()[k] < 0;
    }
    EXPECT_GT(negatives, 10);
}

TEST(Bnorm, InPlaceEqualsOutOfPlace) {
    for (ft tag : {ft::nchw, ft::nChw16c}) {
        const tensor src = make(tensor_desc({2, 19, 3, 3}, tag), 21);
        const tensor copy = reorder(src, tag), out(src.desc());
        const bnorm_fwd op({bnorm_mode::training, src.desc(), {}, 1e-5f, bnorm_flags::none});
        op.execute({copy, out, {}, {}, {}, {}});
        op.execute({src, src, {}, {}, {}, {}});
        EXPECT_EQ(0, std::memcmp(src.f32(), out.f32(), src.desc().size_bytes())) << to_string(tag);
    }
}

TEST_P(BnormIsa, ExecutesRepeatedly) {
    const isa level = this->level();
    const tensor src = make(tensor_desc({2, 17, 4, 4}, ft::nChw16c), 31);
    tensor first;
    const bnorm_fwd op({bnorm_mode::training, src.desc(), {}, 1e-5f, bnorm_flags::none});
    EXPECT_STREQ(op.impl_name(), level == isa::scalar ? "ref" : (std::string("jit:") + to_string(level)).c_str());
    first = tensor(); // each implementation repeats its own bits
    for (int rep = 0; rep < 2; ++rep) {
        const tensor dst(src.desc());
        op.execute({src, dst, {}, {}, {}, {}});
        if (first.empty()) first = dst;
        EXPECT_EQ(0, std::memcmp(first.f32(), dst.f32(), dst.desc().size_bytes())) << to_string(level);
    }
}

TEST(Bnorm, RunningStatsPytorchAndOnnxConventions) {
    const tensor mean = stat(2, {1.f, -2.f}), var = stat(2, {3.f, 0.5f});
    const tensor rm = stat(2, {0.f, 1.f}), rv = stat(2, {1.f, 1.f});
    bnorm_update_running_stats(mean, var, 4, 0.1f, true, rm, rv);
    EXPECT_FLOAT_EQ(rm.f32()[0], 0.1f);
    EXPECT_FLOAT_EQ(rm.f32()[1], 0.9f * 1 + 0.1f * -2);
    EXPECT_FLOAT_EQ(rv.f32()[0], 0.9f + 0.1f * 3 * 4 / 3.f);
    EXPECT_FLOAT_EQ(rv.f32()[1], 0.9f + 0.1f * 0.5f * 4 / 3.f);
    // ONNX momentum 0.9 = PyTorch momentum 0.1 with the biased variance.
    const tensor rm2 = stat(2, {0.f, 1.f}), rv2 = stat(2, {1.f, 1.f});
    bnorm_update_running_stats(mean, var, 4, 1.f - 0.9f, false, rm2, rv2);
    EXPECT_FLOAT_EQ(rv2.f32()[0], 0.9f + 0.1f * 3);
    EXPECT_FLOAT_EQ(rm2.f32()[1], 0.9f - 0.2f);
}

// Each rule: the error names the field and value, and dst and the statistics stay untouched.
TEST(Bnorm, ErrorsNameTheFieldAndWriteNothing) {
    const tensor_desc sd({2, 3, 4, 4}, ft::nchw);
    const tensor src = make(sd, 1), dst(sd);
    for (dim_t k = 0; k < sd.nelems(); ++k) dst.f32()[k] = 42.f;
    const tensor mean = stat(3, {9, 9, 9}), var = stat(3, {9, 9, 9}), gamma = stat(3, {1, 1, 1});
    const status bad = status::invalid_arguments;

    expect_error(bad, {"bnorm_fwd", "src", "oihw", "activation"}, [&] {
        bnorm_fwd({bnorm_mode::training, tensor_desc({2, 3, 4, 4}, ft::oihw), {}, 1e-5f});
    });
    expect_error(bad, {"bnorm_fwd", "src layout x"}, [&] {
        bnorm_fwd({bnorm_mode::training, tensor_desc({3}, ft::x), {}, 1e-5f});
    });
    expect_error(bad, {"bnorm_fwd", "src descriptor is empty"}, [&] { bnorm_fwd({bnorm_mode::training, {}, {}}); });
    expect_error(bad, {"bnorm_fwd", "dst dims", "2x3x4x5"}, [&] {
        bnorm_fwd({bnorm_mode::training, sd, tensor_desc({2, 3, 4, 5}, ft::nchw), 1e-5f});
    });
    expect_error(bad, {"bnorm_fwd", "epsilon = -1"}, [&] { bnorm_fwd({bnorm_mode::training, sd, {}, -1.f}); });
    expect_error(bad, {"bnorm_fwd", "epsilon = nan"}, [&] { bnorm_fwd({bnorm_mode::training, sd, {}, NAN}); });
    expect_error(bad, {"bnorm_fwd", "flags", "unknown"}, [&] {
        bnorm_fwd({bnorm_mode::training, sd, {}, 1e-5f, static_cast<bnorm_flags>(64)});
    });

    const bnorm_fwd inf({bnorm_mode::inference, sd, {}, 1e-5f, bnorm_flags::use_scale});
    const bnorm_fwd trn({bnorm_mode::training, sd, {}, 1e-5f, bnorm_flags::none});
    expect_error(bad, {"bnorm_fwd", "mean", "x:5", "{c} = 3"}, [&] {
        inf.execute({src, dst, stat(5), var, gamma, {}});
    });
    expect_error(bad, {"bnorm_fwd", "variance", "x:2", "{c} = 3"}, [&] {
        trn.execute({src, dst, mean, stat(2), {}, {}});
    });
    expect_error(bad, {"bnorm_fwd", "mean", "required", "no memory"}, [&] {
        inf.execute({src, dst, {}, var, gamma, {}});
    });
    expect_error(bad, {"bnorm_fwd", "mean", "required"}, [&] { trn.execute({src, dst, {}, var, {}, {}}); });
    expect_error(bad, {"bnorm_fwd", "scale", "use_scale"}, [&] { inf.execute({src, dst, mean, var, {}, {}}); });
    expect_error(bad, {"bnorm_fwd", "scale", "nc:1x3", "{c} = 3"}, [&] {
        inf.execute({src, dst, mean, var, tensor(tensor_desc({1, 3}, ft::nc)), {}});
    });
    expect_error(bad, {"bnorm_fwd", "src", "nChw16c", "created for", "nchw"}, [&] {
        inf.execute({reorder(src, ft::nChw16c), dst, mean, var, gamma, {}});
    });
    expect_error(bad, {"bnorm_fwd", "dst", "2x3x4x5"}, [&] {
        inf.execute({src, tensor(tensor_desc({2, 3, 4, 5}, ft::nchw)), mean, var, gamma, {}});
    });
    expect_error(bad, {"bnorm_fwd", "src", "no memory"}, [&] { inf.execute({{}, dst, mean, var, gamma, {}}); });
    {
        const tensor blocked(tensor_desc({2, 3, 4, 4}, ft::nChw8c));
        const tensor alias(sd, blocked.data());
        const bnorm_fwd op({bnorm_mode::training, sd, blocked.desc(), 1e-5f});
        expect_error(bad, {"bnorm_fwd", "shares", "nChw8c"}, [&] { op.execute({alias, blocked, {}, {}, {}, {}}); });
    }
    for (dim_t k = 0; k < sd.nelems(); ++k) ASSERT_EQ(dst.f32()[k], 42.f) << "dst written by a failed call";
    for (dim_t c = 0; c < 3; ++c) ASSERT_EQ(mean.f32()[c], 9.f);
    for (dim_t c = 0; c < 3; ++c) ASSERT_EQ(var.f32()[c], 9.f);

    const tensor rm = stat(3, {5, 5, 5}), rv = stat(3, {5, 5, 5});
    expect_error(bad, {"bnorm_update_running_stats", "running_var", "x:4"},
            [&] { bnorm_update_running_stats(mean, var, 4, 0.1f, true, rm, stat(4)); });
    expect_error(bad, {"bnorm_update_running_stats", "momentum = 1.5"},
            [&] { bnorm_update_running_stats(mean, var, 4, 1.5f, true, rm, rv); });
    expect_error(bad, {"bnorm_update_running_stats", "count = 1", "unbiased"},
            [&] { bnorm_update_running_stats(mean, var, 1, 0.1f, true, rm, rv); });
    expect_error(bad, {"bnorm_update_running_stats", "count = 0"},
            [&] { bnorm_update_running_stats(mean, var, 0, 0.1f, false, rm, rv); });
    for (dim_t c = 0; c < 3; ++c) ASSERT_EQ(rm.f32()[c], 5.f);
}

// Tensors that share memory where the op writes (found by a new-user pass: each used to give
// a silently wrong result): every such call is an error naming both tensors and writes
// nothing. The two in-place forms stay allowed.
TEST(Bnorm, OutputsThatOverlapOtherTensorsAreErrors) {
    const tensor_desc sd({2, 3, 4, 4}, ft::nchw);
    const status bad = status::invalid_arguments;
    const tensor src = make(sd, 1), dst(sd), buf(tensor_desc({200}, ft::x));
    for (dim_t k = 0; k < 200; ++k) buf.f32()[k] = 7.f;
    const tensor_desc xd({3}, ft::x);
    auto in_buf = [&](dim_t off) { return tensor(xd, buf.f32() + off); }; // a {c} tensor inside buf
    const tensor buf_dst(sd, buf.f32()), mean = stat(3), var = stat(3), gamma = stat(3, {1, 1, 1});

    const bnorm_fwd trn({bnorm_mode::training, sd, {}, 1e-5f, bnorm_flags::use_scale | bnorm_flags::use_shift});
    expect_error(bad, {"bnorm_fwd", "mean", "overlaps dst"}, [&] {
        trn.execute({src, buf_dst, in_buf(5), var, gamma, gamma});
    });
    expect_error(bad, {"bnorm_fwd", "dst", "overlaps scale"}, [&] {
        trn.execute({src, buf_dst, mean, var, in_buf(40), gamma});
    });
    expect_error(bad, {"bnorm_fwd", "variance", "overlaps mean"}, [&] {
        trn.execute({src, dst, in_buf(0), in_buf(2), gamma, gamma});
    });
    expect_error(bad, {"bnorm_fwd", "mean", "overlaps src"}, [&] {
        trn.execute({src, dst, tensor(xd, src.f32() + 7), var, gamma, gamma});
    });
    expect_error(bad, {"bnorm_fwd", "dst", "overlaps src"}, [&] {
        trn.execute({src, tensor(sd, src.f32() + 16), mean, var, gamma, gamma});
    });
    const bnorm_fwd inf({bnorm_mode::inference, sd, {}, 1e-5f});
    expect_error(bad, {"bnorm_fwd", "dst", "overlaps variance"}, [&] {
        inf.execute({src, buf_dst, mean, in_buf(60), {}, {}});
    });
    for (dim_t k = 0; k < 200; ++k) ASSERT_EQ(buf.f32()[k], 7.f) << "written by a failed call";
    // In place, and statistics that overlap each other where both are read, are fine.
    const tensor x = make(sd, 2);
    inf.execute({x, x, in_buf(0), in_buf(0), {}, {}});
    trn.execute({x, x, mean, var, gamma, gamma});

    const bnorm_bwd bwd({sd, sd, sd, 1e-5f, bnorm_flags::use_scale | bnorm_flags::use_shift});
    const tensor ddst = make(sd, 3), dsrc(sd), dgamma = stat(3), dbeta = stat(3);
    const tensor var1 = stat(3, {1, 1, 1});
    expect_error(bad, {"bnorm_bwd", "diff_src", "overlaps variance"}, [&] {
        bwd.execute({src, ddst, buf_dst, mean, in_buf(9), gamma, {}, dgamma, dbeta});
    });
    expect_error(bad, {"bnorm_bwd", "diff_scale", "overlaps mean"}, [&] {
        bwd.execute({src, ddst, dsrc, in_buf(0), var1, gamma, {}, in_buf(1), dbeta});
    });
    expect_error(bad, {"bnorm_bwd", "diff_shift", "overlaps diff_scale"}, [&] {
        bwd.execute({src, ddst, dsrc, mean, var1, gamma, {}, in_buf(100), in_buf(101)});
    });
    for (dim_t k = 0; k < 200; ++k) ASSERT_EQ(buf.f32()[k], 7.f) << "written by a failed call";
    const tensor dd = make(sd, 4);
    bwd.execute({src, dd, dd, mean, var1, gamma, {}, dgamma, dbeta}); // diff_src in place of diff_dst

    expect_error(bad, {"bnorm_update_running_stats", "running_var", "overlaps running_mean"},
            [&] { bnorm_update_running_stats(mean, var1, 4, 0.1f, true, in_buf(0), in_buf(0)); });
    expect_error(bad, {"bnorm_update_running_stats", "running_mean", "overlaps mean"},
            [&] { bnorm_update_running_stats(in_buf(3), var1, 4, 0.1f, true, in_buf(4), stat(3)); });
}

} // namespace

INSTANTIATE_TEST_SUITE_P(
        Isa, BnormIsa, ::testing::Values(isa::scalar, isa::avx2, isa::avx512_core), bdtest::case_name());
