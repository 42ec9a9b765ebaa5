// SPDX-License-Identifier: Apache-2.0
// Reference forward convolution: against an independent oracle (explicit zero padding, then
// a dense strided correlation) on seeded random problems; plain and blocked layouts bit for
// bit on real problem descriptors (benchdnn's resnet_50, tails, regression_padding lists);
// post-op chains; the dilation convention on a worked example; zeroed dst padding.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "core/prb_parse.hpp"
#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;

namespace {

// ---- the oracle: pad explicitly, then correlate densely --------------------------------------
// All arrays are canonical row-major; spatial dims are taken as 3-D (d, h, w) with size-1 dims
// where the problem has fewer, which leaves row-major offsets unchanged.
struct sizes3_t {
    dim_t i[3], o[3], k[3], s[3], p[3], pr[3], dl[3];
};

sizes3_t sizes3(const conv_desc &c) {
    return {{c.id, c.ih, c.iw}, {c.od, c.oh, c.ow}, {c.kd, c.kh, c.kw}, {c.sd, c.sh, c.sw}, {c.pd, c.ph, c.pw},
            {c.pd_r, c.ph_r, c.pw_r}, {c.dd, c.dh, c.dw}};
}

// Calls f(o, k) for every output position o and kernel tap k (d, h, w triples) of z.
template <typename F>
void for_each_tap(const sizes3_t &z, F &&f) {
    for (dim_t od = 0; od < z.o[0]; ++od)
        for (dim_t oh = 0; oh < z.o[1]; ++oh)
            for (dim_t ow = 0; ow < z.o[2]; ++ow)
                for (dim_t kd = 0; kd < z.k[0]; ++kd)
                    for (dim_t kh = 0; kh < z.k[1]; ++kh)
                        for (dim_t kw = 0; kw < z.k[2]; ++kw) {
                            const dim_t o[3] = {od, oh, ow}, k[3] = {kd, kh, kw};
                            f(o, k);
                        }
}

std::vector<float> oracle_conv(const conv_desc &c, const std::vector<float> &src, const std::vector<float> &wei,
        const std::vector<float> &bia, const post_ops &po, const std::vector<float> &dst_old) {
    const sizes3_t z = sizes3(c);
    const dim_t G = c.g, ICG = c.ic / G, OCG = c.oc / G;
    dim_t P[3]; // padded extents; a negative end pad crops the input
    for (int k = 0; k < 3; ++k) P[k] = z.i[k] + z.p[k] + z.pr[k];
    std::vector<float> dst(static_cast<std::size_t>(c.mb * c.oc * z.o[0] * z.o[1] * z.o[2]));
    std::vector<double> padded(static_cast<std::size_t>(P[0] * P[1] * P[2]));
    for (dim_t n = 0; n < c.mb; ++n)
        for (dim_t g = 0; g < G; ++g)
            for (dim_t ocg = 0; ocg < OCG; ++ocg) {
                const dim_t oc = g * OCG + ocg;
                std::vector<double> acc(static_cast<std::size_t>(z.o[0] * z.o[1] * z.o[2]), 0.0);
                for (dim_t icg = 0; icg < ICG; ++icg) {
                    const dim_t ic = g * ICG + icg;
                    for (dim_t a = 0; a < P[0]; ++a)
                        for (dim_t b = 0; b < P[1]; ++b)
                            for (dim_t e = 0; e < P[2]; ++e) {
                                const dim_t x = a - z.p[0], y = b - z.p[1], w = e - z.p[2];
                                const bool in = x >= 0 && x < z.i[0] && y >= 0 && y < z.i[1] && w >= 0 && w < z.i[2];
                                padded[(a * P[1] + b) * P[2] + e] =
                                        in ? src[(((n * c.ic + ic) * z.i[0] + x) * z.i[1] + y) * z.i[2] + w] : 0.0;
                            }
                    for_each_tap(z, [&](const dim_t *o, const dim_t *k) {
                        dim_t at[3]; // the tap's position in the padded input
                        for (int x = 0; x < 3; ++x) at[x] = o[x] * z.s[x] + k[x] * (z.dl[x] + 1);
                        const dim_t wi =
                                ((((g * OCG + ocg) * ICG + icg) * z.k[0] + k[0]) * z.k[1] + k[1]) * z.k[2] + k[2];
                        acc[(o[0] * z.o[1] + o[1]) * z.o[2] + o[2]] +=
                                padded[(at[0] * P[1] + at[1]) * P[2] + at[2]] * wei[wi];
                    });
                }
                for (std::size_t k = 0; k < acc.size(); ++k) {
                    const std::size_t o = (n * c.oc + oc) * acc.size() + k;
                    float r = static_cast<float>(acc[k] + (bia.empty() ? 0.0 : bia[oc]));
                    for (const post_op &e : po.entries())
                        r = e.what == post_op::kind::sum ? r + e.scale * dst_old[o]
                                                         : eltwise_ref(e.alg, r, e.alpha, e.beta);
                    dst[o] = r;
                }
            }
    return dst;
}

// ---- running the op on given layouts ----------------------------------------------------------
struct conv_data_t {
    std::vector<float> src, wei, bia, dst_old;
};

conv_data_t make_data(const conv_desc &c, unsigned seed, bool ints) {
    auto gen = [&](dim_t n, unsigned s) { return ints ? int_values(n, s) : real_values(n, s); };
    conv_data_t d;
    d.src = gen(count(c.src_dims()), seed);
    d.wei = gen(count(c.wei_dims(true)), seed + 1);
    if (c.with_bias) d.bia = gen(c.oc, seed + 2);
    d.dst_old = gen(count(c.dst_dims()), seed + 3);
    return d;
}

struct conv_tags_t {
    format_tag src, wei, dst;
};

// Runs conv_fwd on these layouts and returns dst's logical values. dst starts as dst_old.
std::vector<float> run_conv(const conv_desc &c, const conv_tags_t &t, const conv_data_t &d, const post_ops &po) {
    // These tests check the reference; the JIT kernels have their own (test_conv_jit*).
    isa_guard guard;
    set_max_isa(isa::scalar);
    const conv_fwd op(c, t.src, t.wei, t.dst, po);
    EXPECT_STREQ(op.impl_name(), "ref");
    // Grouped weights {g, oc/g, ic/g, k...} and ungrouped {oc, ic, k...} (g = 1) have the same
    // canonical order, so one value vector serves both.
    const tensor src = make_tensor(op.src_desc().dims(), t.src, d.src);
    const tensor wei = make_tensor(op.wei_desc().dims(), t.wei, d.wei);
    const tensor bia = c.with_bias ? make_tensor(c.bia_dims(), format_tag::x, d.bia) : tensor();
    const tensor dst = make_tensor(c.dst_dims(), t.dst, d.dst_old);
    op.execute(src, wei, bia, dst);
    EXPECT_TRUE(padding_is_zero(dst)) << "dst padding not zero for " << op.str();
    return logical(dst);
}

} // namespace

// A 1-D worked example fixes the dilation convention: dw = 1 skips one element (PyTorch's
// dilation=2), so dst[o] = w0 * x[o] + w1 * x[o + 2].
TEST(ConvRef, DilationConventionOnAWorkedExample) {
    conv_desc c;
    c.ndims = 3;
    c.ic = c.oc = 1;
    c.iw = 5;
    c.kw = 2;
    c.dw = dilation_from_torch(2);
    c.infer_dst_dims();
    EXPECT_EQ(c.dw, 1);
    EXPECT_EQ(c.ow, 3);
    const conv_data_t d {{1, 2, 3, 4, 5}, {1, 10}, {}, {0, 0, 0}};
    EXPECT_EQ(
            run_conv(c, {format_tag::ncw, format_tag::oiw, format_tag::ncw}, d, {}), (std::vector<float> {31, 42, 53}));
}

// Seeded random problems (1-D to 3-D, groups, depthwise, multipliers, strides, asymmetric and
// negative end pads, dilation, bias, post-ops) on random layouts against the oracle.
TEST(ConvRef, RandomProblemsMatchOracle) {
    const unsigned seed = 20241129;
    seeded_ints rnd(seed);
    int checked = 0;
    for (int t = 0; t < 60; ++t) {
        conv_desc c;
        c.ndims = static_cast<int>(rnd(3, 5));
        c.mb = rnd(1, 2);
        switch (rnd(0, 3)) {
        case 0: c.g = 1, c.ic = rnd(1, 9), c.oc = rnd(1, 9); break;
        case 1: c.g = rnd(2, 3), c.ic = c.g * rnd(1, 3), c.oc = c.g * rnd(1, 3); break;
        case 2: c.g = c.ic = c.oc = rnd(2, 17); break;                   // depthwise
        default: c.g = c.ic = rnd(2, 5), c.oc = c.ic * rnd(2, 3); break; // channel multiplier
        }
        const auto [i, k, s, p, pr, dl] = spatial_ptrs(c);
        for (int x = 5 - c.ndims; x < 3; ++x) {
            *i[x] = rnd(1, c.ndims == 5 ? 5 : 9);
            *k[x] = rnd(1, 3);
            *s[x] = rnd(1, 3);
            *dl[x] = rnd(0, 2);
            *p[x] = rnd(0, 3);
            *pr[x] = rnd(-1, 3);
            const dim_t ext = (*k[x] - 1) * (*dl[x] + 1) + 1;
            if (*i[x] + *p[x] + *pr[x] < ext) *pr[x] = ext - *i[x] - *p[x]; // make the kernel fit
        }
        c.with_bias = rnd(0, 1);
        c.infer_dst_dims();
        post_ops po;
        if (rnd(0, 1)) po.append_sum(rnd(0, 1) ? 1.f : 0.5f);
        if (rnd(0, 1)) po.append_eltwise(eltwise_alg::relu, 0.25f);
        const conv_data_t d = make_data(c, seed + t, false);
        const bool grouped = c.g > 1 || rnd(0, 1);
        const auto acts = act_tags(c.ndims), weis = wei_tags(c.ndims, grouped);
        const conv_tags_t tags {acts[rnd(0, 3)], weis[rnd(0, static_cast<dim_t>(weis.size()) - 1)], acts[rnd(0, 3)]};
        const std::vector<float> got = run_conv(c, tags, d, po);
        const std::vector<float> want = oracle_conv(c, d.src, d.wei, d.bia, po, d.dst_old);
        const double err = rel_err(got, want);
        EXPECT_LE(err, tol::conv) << "seed " << seed << " case " << t << ": " << c.str() << " " << to_string(tags.src)
                                  << "/" << to_string(tags.wei) << "/" << to_string(tags.dst) << " post_ops "
                                  << po.str();
        ++checked;
    }
    EXPECT_EQ(checked, 60);
}

// conv_desc::flops against a direct count of (output position, tap) pairs reading inside the
// input, benchdnn's definition, on a worked example and seeded random problems.
TEST(ConvDesc, FlopsCountOnlyTapsInsideTheInput) {
    // 3x3, pad 1, 7x7: per dim the border outputs have 2 taps inside, the other 5 have 3.
    const conv_desc w = blockdnn::parse_conv_desc("mb1ic16ih7oc16oh7kh3ph1");
    EXPECT_EQ(w.flops(), 2.0 * 16 * 16 * (2 + 5 * 3 + 2) * (2 + 5 * 3 + 2));
    const conv_desc r = blockdnn::parse_conv_desc("mb16ic256ih56oc64oh56kh1ph0"); // no padding
    EXPECT_EQ(r.flops(), 2.0 * 16 * 64 * 56 * 56 * 256);
    // Both outputs read padding only (i = -1, then i = 1 past ih = 1): a valid desc, no FLOPs.
    const conv_desc none = blockdnn::parse_conv_desc("mb1ic16ih1oc16oh2kh1sh2ph1");
    ASSERT_NO_THROW(none.validate());
    EXPECT_EQ(none.flops(), 0.0);
    conv_desc bad = w;
    bad.sh = 0;
    EXPECT_THROW((void)bad.flops(), blockdnn::error);
    const unsigned seed = 20261201;
    seeded_ints rnd(seed);
    int padded = 0; // cases where some taps fall on padding
    for (int t = 0; t < 200; ++t) {
        conv_desc c;
        c.ndims = static_cast<int>(rnd(3, 5));
        c.mb = rnd(1, 3);
        c.g = rnd(1, 3);
        c.ic = c.g * rnd(1, 4);
        c.oc = c.g * rnd(1, 4);
        const auto [i, k, s, p, pr, dl] = spatial_ptrs(c);
        for (int x = 5 - c.ndims; x < 3; ++x) {
            *i[x] = rnd(1, 12);
            *k[x] = rnd(1, 5);
            *s[x] = rnd(1, 4);
            *dl[x] = rnd(0, 2);
            *p[x] = rnd(0, 6); // padding may exceed the kernel
            *pr[x] = rnd(-1, 6);
            const dim_t ext = (*k[x] - 1) * (*dl[x] + 1) + 1;
            if (*i[x] + *p[x] + *pr[x] < ext) *pr[x] = ext - *i[x] - *p[x];
        }
        c.infer_dst_dims();
        ASSERT_NO_THROW(c.validate()) << c.str();
        const sizes3_t z = sizes3(c);
        double pairs = 0;
        for_each_tap(z, [&](const dim_t *o, const dim_t *k) {
            bool inside = true;
            for (int x = 0; x < 3; ++x) {
                const dim_t in = o[x] * z.s[x] - z.p[x] + k[x] * (z.dl[x] + 1);
                inside = inside && in >= 0 && in < z.i[x];
            }
            pairs += inside;
        });
        EXPECT_EQ(c.flops(), 2.0 * c.mb * c.oc * (c.ic / c.g) * pairs)
                << "seed " << seed << " case " << t << ": " << c.str();
        padded += pairs < static_cast<double>(c.od * c.oh * c.ow * c.kd * c.kh * c.kw);
    }
    EXPECT_GT(padded, 100) << "most random cases should drop some padding taps";
}

// Each eltwise algorithm and a sum, alone and chained, against the oracle.
TEST(ConvRef, EveryPostOp) {
    const conv_desc c = blockdnn::parse_conv_desc("mb2ic4ih5oc6oh5kh3ph1");
    const conv_data_t d = make_data(c, 7, false);
    std::vector<post_ops> chains;
    const std::pair<eltwise_alg, std::pair<float, float>> algs[] = {{eltwise_alg::relu, {0.f, 0.f}},
            {eltwise_alg::relu, {0.1f, 0.f}}, {eltwise_alg::tanh, {0.f, 0.f}}, {eltwise_alg::sigmoid, {0.f, 0.f}},
            {eltwise_alg::exp, {0.f, 0.f}}, {eltwise_alg::log, {0.f, 0.f}}, {eltwise_alg::elu, {0.5f, 0.f}},
            {eltwise_alg::gelu_tanh, {0.f, 0.f}}, {eltwise_alg::gelu_erf, {0.f, 0.f}}, {eltwise_alg::swish, {1.f, 0.f}},
            {eltwise_alg::clip, {-0.5f, 0.5f}}, {eltwise_alg::linear, {2.f, -1.f}}};
    for (const auto &[alg, ab] : algs) chains.push_back(post_ops().append_eltwise(alg, ab.first, ab.second));
    chains.push_back(post_ops().append_sum(1.f));
    chains.push_back(post_ops().append_sum(0.5f).append_eltwise(eltwise_alg::relu));
    chains.push_back(post_ops()
                             .append_eltwise(eltwise_alg::linear, 0.5f, 0.f)
                             .append_sum(2.f)
                             .append_eltwise(eltwise_alg::clip, 0.f, 6.f));
    for (const post_ops &po : chains) {
        const std::vector<float> got =
                run_conv(c, {format_tag::nChw8c, format_tag::OIhw8i8o, format_tag::nChw8c}, d, po);
        const std::vector<float> want = oracle_conv(c, d.src, d.wei, d.bia, po, d.dst_old);
        // log of a negative result is NaN in both; rel_err compares NaN positions.
        EXPECT_LE(rel_err(got, want), tol::conv) << po.str();
    }
}

// Real problems as benchdnn descriptors. With small-integer fills every sum is exact in f32,
// so plain, channels-last and blocked layouts must agree bit for bit with each other and the
// oracle. mb is set to 1 (benchdnn's --mb=1) to keep the run short.
class ConvLayouts : public ::testing::TestWithParam<const char *> {};

TEST_P(ConvLayouts, AgreeBitForBit) {
    std::string name;
    conv_desc c = blockdnn::parse_conv_desc(GetParam(), &name);
    c.mb = 1;
    c.with_bias = true;
    const post_ops po = post_ops().append_sum(1.f).append_eltwise(eltwise_alg::relu);
    const conv_data_t d = make_data(c, 11, true);
    const std::vector<float> want = oracle_conv(c, d.src, d.wei, d.bia, po, d.dst_old);
    const int nd = c.ndims;
    const auto acts = act_tags(nd);
    const auto weis = wei_tags(nd, c.g > 1);
    for (std::size_t k = 0; k < acts.size(); ++k) {
        // Pair each activation layout with a weights layout, cycling through all of them.
        const conv_tags_t t {acts[k], weis[k % weis.size()], acts[(k + 1) % acts.size()]};
        const std::vector<float> got = run_conv(c, t, d, po);
        EXPECT_EQ(got, want) << c.str() << " " << to_string(t.src) << "/" << to_string(t.wei) << "/"
                             << to_string(t.dst);
    }
    if (weis.size() > acts.size()) { // the grouped Goihw*g layouts
        const conv_tags_t t {acts[0], weis.back(), acts[2]};
        EXPECT_EQ(run_conv(c, t, d, po), want) << c.str() << " " << to_string(t.wei);
    }
}

// shapes_resnet_50 (spatial kept, mb reduced): most of the suite's time in CI's ASan run, whose
// test programs compile at -O0, so that run leaves out ResNet50/* and keeps the rest.
INSTANTIATE_TEST_SUITE_P(ResNet50, ConvLayouts,
        ::testing::Values("mb50ic256ih14oc256oh14kh3ph1n\"resnet_50:res4a_branch2b*6\"",
                "g1mb50ic512ih28iw28oc256oh14ow14kh1kw1sh2sw2ph0pw0n\"resnet_50:res4a_branch2a\"",
                "mb50ic2048ih7oc512oh7kh1ph0n\"resnet_50:res5b_branch2a*2\"",
                "g1mb50ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3n\"resnet_50:conv1\""));

INSTANTIATE_TEST_SUITE_P(Benchdnn, ConvLayouts,
        ::testing::Values(
                // shapes_tails
                "ic32oc13_ih13oh12kh3ph0_n\"tails_conv:1\"", "ic29oc65_ih13oh13kh3ph1_n\"tails_conv:20\"",
                "g1ic4ih84oc16oh20kh8sh4ph0_n\"tails_conv:23\"", "g4ic20ih5oc20oh5kh3ph1_n\"tails_conv:24\"",
                "g4ic16ih13oc16oh13kh3ph1n\"tails_conv:25\"",
                // shapes_regression_padding
                "mb1ic16oc16_ih10kh5_ph7sh1", "mb1ic16oc16_ih10kh3_ph4sh1", "mb1ic16oc16_ih16kh3ph1oh15_iw16kw3pw0ow15",
                "mb1ic16oc16_ih16kh3ph0oh15_iw16kw3pw1ow16", "mb1ic16oc16_ih10kh1_ph3sh1",
                "mb1ic1oc16_kd2kh1kw1_id2ih1iw1_od1oh1ow1_sd2sh1sw1_pd1ph0pw0",
                "mb1ic16id1ih1iw1oc16od2oh2ow1kd3kh3kw1dd1dh1ph1pd1", "mb1_ic128ih1_oc16oh1_kh3_ph1",
                // depthwise and channel multiplier, dilation, 1-D, 3-D
                "g32mb2ic32ih10oc32oh10kh3ph1n\"dw\"", "g8mb1ic8ih7oc24oh4kh3sh2ph1n\"multiplier3\"",
                "mb2ic8ih12oc8oh8kh3dh1ph0n\"dilated\"", "mb2ic5iw17oc7ow9kw3sw2pw1n\"1d\"",
                "mb1ic4id6ih6iw6oc8od3oh3ow3kd3kh3kw3sd2sh2sw2pd1ph1pw1n\"3d\""));

TEST(ConvRef, DstPaddingIsZeroedAndOnlyDstWritten) {
    const conv_desc c = blockdnn::parse_conv_desc("mb1ic5ih4oc13oh4kh3ph1");
    const conv_fwd op(c, format_tag::nChw16c, format_tag::OIhw16i16o, format_tag::nChw16c);
    const tensor src(op.src_desc()), wei(op.wei_desc()), dst(op.dst_desc());
    fill_random(src, 1);
    fill_random(wei, 2);
    poison(dst);
    const std::vector<float> src0 = snapshot(src), wei0 = snapshot(wei);
    op.execute(src, wei, dst);
    EXPECT_TRUE(padding_is_zero(dst));
    EXPECT_EQ(snapshot(src), src0);
    EXPECT_EQ(snapshot(wei), wei0);
    for (float v : logical(dst)) EXPECT_NE(v, 777.f);
}

TEST(ConvRef, AccessorsDescribeTheProblem) {
    // Under a scalar cap, so that the reference takes it on any CPU.
    isa_guard guard;
    set_max_isa(isa::scalar);
    conv_desc c = blockdnn::parse_conv_desc("g2mb3ic4ih6iw5oc6oh3ow5kh3kw1sh2ph1");
    c.with_bias = true;
    const conv_fwd op(
            c, format_tag::nhwc, format_tag::goihw, format_tag::nChw8c, post_ops().append_eltwise(eltwise_alg::relu));
    EXPECT_EQ(op.src_desc(), tensor_desc({3, 4, 6, 5}, format_tag::nhwc));
    EXPECT_EQ(op.wei_desc(), tensor_desc({2, 3, 2, 3, 1}, format_tag::goihw));
    EXPECT_EQ(op.bia_desc(), tensor_desc({6}, format_tag::x));
    EXPECT_EQ(op.dst_desc(), tensor_desc({3, 6, 3, 5}, format_tag::nChw8c));
    EXPECT_EQ(op.desc().str(), c.str());
    EXPECT_EQ(op.attr_post_ops().len(), 1);
    EXPECT_NE(op.str().find("post_ops:relu"), std::string::npos) << op.str();
    EXPECT_STREQ(op.impl_name(), "ref");
    // An op is copyable and its copies share the created implementation.
    const conv_fwd copy = op;
    EXPECT_STREQ(copy.impl_name(), "ref");
    EXPECT_EQ(copy.dst_desc(), op.dst_desc());
}

// Plain src and dst run the reference under a scalar cap, and a JIT kernel reordered around
// them under every other.
TEST(ConvRef, DispatchOnPlainLayoutsUnderEveryIsaCap) {
    isa_guard guard;
    const conv_desc c = blockdnn::parse_conv_desc("mb1ic3ih5oc4oh5kh3ph1");
    for (isa level : available_isas()) {
        set_max_isa(level);
        const std::string want = level == isa::scalar ? "ref" : std::string("jit:") + to_string(level) + ":plain";
        EXPECT_EQ(conv_fwd(c, format_tag::nchw, format_tag::oihw, format_tag::nchw).impl_name(), want)
                << to_string(level);
    }
}
