// SPDX-License-Identifier: Apache-2.0
// Reference inner product: against a flattened dot-product oracle on seeded problems with and
// without spatial dims, bias and post-ops; layouts bit for bit; the bad inputs.
#include <random>

#include <gtest/gtest.h>

#include "core/prb_parse.hpp"
#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;
using blockdnn::impl::cat;

namespace {

// dst[n, o] = bias[o] + sum_k src[n, k] * wei[o, k] over the flattened (c, spatial) index k.
std::vector<float> oracle_ip(const inner_product_desc &c, const std::vector<float> &src, const std::vector<float> &wei,
        const std::vector<float> &bia, const post_ops &po, const std::vector<float> &dst_old) {
    const dim_t K = count(c.src_dims()) / c.mb;
    std::vector<float> dst(static_cast<std::size_t>(c.mb * c.oc));
    for (dim_t n = 0; n < c.mb; ++n)
        for (dim_t o = 0; o < c.oc; ++o) {
            double acc = bia.empty() ? 0.0 : bia[o];
            for (dim_t k = 0; k < K; ++k) acc += double(src[n * K + k]) * wei[o * K + k];
            float r = float(acc);
            for (const post_op &e : po.entries())
                r = e.what == post_op::kind::sum ? r + e.scale * dst_old[n * c.oc + o]
                                                 : eltwise_ref(e.alg, r, e.alpha, e.beta);
            dst[n * c.oc + o] = r;
        }
    return dst;
}

// The op run with dispatch capped at `cap` (the reference at isa::scalar); `impl` receives the
// implementation's name.
std::vector<float> run_ip(const inner_product_desc &c, format_tag st, format_tag wt, const std::vector<float> &src,
        const std::vector<float> &wei, const std::vector<float> &bia, const post_ops &po,
        const std::vector<float> &dst_old, isa cap = isa::scalar, std::string *impl = nullptr) {
    isa_guard guard;
    set_max_isa(cap);
    const inner_product_fwd op(c, st, wt, format_tag::nc, po);
    if (cap == isa::scalar) {
        EXPECT_STREQ(op.impl_name(), "ref");
    }
    if (impl) *impl = op.impl_name();
    const tensor s = make_tensor(c.src_dims(), st, src), w = make_tensor(c.wei_dims(), wt, wei);
    const tensor b = c.with_bias ? make_tensor(c.bia_dims(), format_tag::x, bia) : tensor();
    const tensor d = make_tensor(c.dst_dims(), format_tag::nc, dst_old);
    op.execute(s, w, b, d);
    return logical(d);
}

// The seeded operands of random case t: the post-ops (a sum and an eltwise of `alg`, each
// drawn), and the values of src, wei, bia (when drawn) and dst's old contents.
struct operands_t {
    post_ops po;
    std::vector<float> src, wei, bia, old;
};

operands_t draw_operands(inner_product_desc &c, seeded_ints &rnd, eltwise_alg alg, unsigned seed, int t) {
    operands_t o;
    c.with_bias = rnd(0, 1);
    if (rnd(0, 1)) o.po.append_sum(0.5f);
    if (rnd(0, 1)) o.po.append_eltwise(alg);
    o.src = real_values(count(c.src_dims()), seed + t);
    o.wei = real_values(count(c.wei_dims()), t);
    o.old = real_values(c.mb * c.oc, t + 2);
    if (c.with_bias) o.bia = real_values(c.oc, t + 1);
    return o;
}

} // namespace

TEST(InnerProductRef, RandomProblemsMatchOracle) {
    const unsigned seed = 31337;
    seeded_ints rnd(seed);
    for (int t = 0; t < 40; ++t) {
        inner_product_desc c;
        c.ndims = static_cast<int>(rnd(2, 5));
        c.mb = rnd(1, 4);
        c.ic = rnd(1, 20);
        c.oc = rnd(1, 20);
        if (c.ndims == 5) c.id = rnd(1, 3);
        if (c.ndims >= 4) c.ih = rnd(1, 4);
        if (c.ndims >= 3) c.iw = rnd(1, 4);
        const operands_t o = draw_operands(c, rnd, eltwise_alg::tanh, seed, t);
        const auto acts = c.ndims == 2 ? std::vector<format_tag> {format_tag::nc} : act_tags(c.ndims);
        const auto weis = wei_tags(c.ndims, false);
        const format_tag st = acts[rnd(0, static_cast<dim_t>(acts.size()) - 1)];
        const format_tag wt = weis[rnd(0, static_cast<dim_t>(weis.size()) - 1)];
        EXPECT_LE(rel_err(run_ip(c, st, wt, o.src, o.wei, o.bia, o.po, o.old),
                          oracle_ip(c, o.src, o.wei, o.bia, o.po, o.old)),
                tol::inner_product)
                << "seed " << seed << " case " << t << ": " << c.str() << " " << to_string(st) << "/" << to_string(wt);
    }
}

// ResNet's classifier (2048 x 7 x 7 after pooling is 2048 x 1 x 1; here the flattened 4-D form)
// and a tail: every layout gives the plain result bit for bit with integer fills.
TEST(InnerProductRef, LayoutsAgreeBitForBit) {
    for (const char *s : {"mb2ic64ih3oc33", "mb3ic19iw5oc16", "mb2ic2048oc100"}) {
        inner_product_desc c = blockdnn::parse_ip_desc(s);
        c.with_bias = true;
        const std::vector<float> src = int_values(count(c.src_dims()), 1), wei = int_values(count(c.wei_dims()), 2),
                                 bia = int_values(c.oc, 3), old(static_cast<std::size_t>(c.mb * c.oc), 0.f);
        const auto acts = c.ndims == 2 ? std::vector<format_tag> {format_tag::nc} : act_tags(c.ndims);
        const auto weis = wei_tags(c.ndims, false);
        const std::vector<float> want = oracle_ip(c, src, wei, bia, {}, old);
        for (std::size_t k = 0; k < std::max(acts.size(), weis.size()); ++k)
            EXPECT_EQ(run_ip(c, acts[k % acts.size()], weis[k % weis.size()], src, wei, bia, {}, old), want) << s;
    }
}

// The GEMM implementation against the oracle on seeded problems, at each ISA the machine has:
// it takes every layout of src and of the weights given per call (1-D to 3-D, channels last,
// blocked with channel tails and spatial sizes above 1: those that do not read as row-major
// matrices are reordered first), and a channels-last or blocked src of 1x1 spatial size.
TEST(InnerProductGemm, RandomProblemsMatchOracle) {
    const unsigned seed = 4242;
    seeded_ints rnd(seed);
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (detected_isa() < level) continue;
        for (int t = 0; t < 40; ++t) {
            inner_product_desc c;
            c.ndims = static_cast<int>(rnd(2, 5));
            c.mb = rnd(1, 20);
            c.ic = t % 3 == 0 ? 16 * rnd(1, 8) : rnd(1, 70);
            c.oc = rnd(1, 70);
            // 1x1 spatial sizes half the time; K stays near the sizes the tolerance is for.
            const dim_t sp = t % 2 ? 1 : c.ndims == 5 ? 2 : 3;
            if (c.ndims == 5) c.id = rnd(1, sp);
            if (c.ndims >= 4) c.ih = rnd(1, sp);
            if (c.ndims >= 3) c.iw = rnd(1, sp);
            const operands_t o = draw_operands(c, rnd, eltwise_alg::relu, seed, t);
            const auto acts = c.ndims == 2 ? std::vector<format_tag> {format_tag::nc} : act_tags(c.ndims);
            const auto weis = wei_tags(c.ndims, false);
            const format_tag st = acts[rnd(0, static_cast<dim_t>(acts.size()) - 1)];
            const format_tag wt = weis[rnd(0, static_cast<dim_t>(weis.size()) - 1)];
            std::string impl;
            const std::vector<float> got = run_ip(c, st, wt, o.src, o.wei, o.bia, o.po, o.old, level, &impl);
            const std::string what =
                    cat("seed ", seed, " case ", t, ": ", impl, " ", c.str(), " ", to_string(st), "/", to_string(wt));
            EXPECT_EQ(impl, cat("gemm:", to_string(level))) << what;
            EXPECT_LE(rel_err(got, oracle_ip(c, o.src, o.wei, o.bia, o.po, o.old)), tol::inner_product) << what;
        }
    }
}

// Each src layout gives the plain src's bits on the GEMM: read in place (channels last or
// blocked at 1x1 spatial size, channel tails padding the rows) or reordered first (blocked at
// larger sizes), the GEMM sums the same products in the same order.
TEST(InnerProductGemm, EverySrcLayoutGivesThePlainBits) {
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (detected_isa() < level) continue;
        for (const char *s : {"mb5ic1000ih1oc24", "mb3ic17ih1oc9", "mb2ic40ih3oc16", "mb7ic33iw1oc5", "mb1ic20iw3oc8",
                     "mb2ic24id1ih1iw1oc7", "mb2ic9id2ih2iw2oc11", "mb6ic64oc40"}) {
            inner_product_desc c = blockdnn::parse_ip_desc(s);
            c.with_bias = true;
            const auto acts = c.ndims == 2 ? std::vector<format_tag> {format_tag::nc} : act_tags(c.ndims);
            const std::vector<float> src = real_values(count(c.src_dims()), 11),
                                     wei = real_values(count(c.wei_dims()), 12), bia = real_values(c.oc, 13),
                                     old(static_cast<std::size_t>(c.mb * c.oc), 0.f);
            std::string impl;
            const std::vector<float> want =
                    run_ip(c, acts[0], plain_wei(c.ndims, false), src, wei, bia, {}, old, level, &impl);
            EXPECT_EQ(impl, cat("gemm:", to_string(level))) << s;
            for (format_tag st : acts) {
                EXPECT_EQ(run_ip(c, st, plain_wei(c.ndims, false), src, wei, bia, {}, old, level, &impl), want)
                        << s << " " << to_string(st) << " " << impl;
                EXPECT_EQ(impl, cat("gemm:", to_string(level))) << s << " " << to_string(st);
            }
        }
    }
}

// Weights given at creation in any layout: the GEMM holds them in the plain one (wei_desc())
// and gives the bits of the op that takes the plain weights per call; the reference holds them
// as given.
TEST(InnerProductWeightsAtCreation, AnyLayoutHeldPlainForTheGemm) {
    const unsigned seed = 9090;
    for (isa level : {isa::avx512_core, isa::avx2, isa::scalar}) {
        if (detected_isa() < level) continue;
        for (const char *s :
                {"mb3ic40oc17", "mb2ic19ih3oc33", "mb4ic32iw5oc7", "mb1ic2048ih1oc10", "mb2ic5id2ih2iw3oc3"}) {
            inner_product_desc c = blockdnn::parse_ip_desc(s);
            c.with_bias = true;
            const format_tag wplain = plain_wei(c.ndims, false);
            const format_tag st = c.ndims == 2 ? format_tag::nc : plain_act(c.ndims);
            const std::vector<float> w = real_values(count(c.wei_dims()), seed);
            const tensor src = make_tensor(c.src_dims(), st, real_values(count(c.src_dims()), seed + 1));
            const tensor bia = make_tensor(c.bia_dims(), format_tag::x, real_values(c.oc, seed + 2));
            isa_guard guard;
            set_max_isa(level);
            const inner_product_fwd per_call(c, st, wplain);
            const tensor want(per_call.dst_desc());
            per_call.execute(src, make_tensor(c.wei_dims(), wplain, w), bia, want);
            for (format_tag wt : wei_tags(c.ndims, false)) {
                const tensor wei = make_tensor(c.wei_dims(), wt, w);
                const inner_product_fwd held(c, st, wei, bia);
                const std::string what = cat(s, " ", to_string(wt), " ", held.impl_name());
                EXPECT_STREQ(held.impl_name(), per_call.impl_name()) << what;
                EXPECT_EQ(held.wei_desc().tag(), level == isa::scalar ? wt : wplain) << what;
                const tensor got(held.dst_desc());
                held.execute(src, got);
                EXPECT_EQ(logical(got), logical(want)) << what;
            }
        }
    }
}

// impl_info() gives the GEMM's plan: its M x N x K and blocking.
TEST(InnerProductGemm, InfoGivesThePlan) {
    inner_product_desc c;
    c.ndims = 2;
    c.mb = 8;
    c.ic = 32;
    c.oc = 48;
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (detected_isa() < level) continue;
        isa_guard guard;
        set_max_isa(level);
        const inner_product_fwd op(c, format_tag::nc, format_tag::oi);
        EXPECT_NE(op.impl_info().find("M8N48K32 mc"), std::string::npos) << op.impl_info();
    }
}

TEST(InnerProductErrors, BadProblemsAndTensors) {
    const status bad = status::invalid_arguments;
    inner_product_desc c = blockdnn::parse_ip_desc("mb2ic8ih3oc5");
    c.with_bias = true;
    inner_product_desc b = c;
    b.oc = 0;
    expect_error(bad, {"inner_product_fwd: oc = 0 must be positive"},
            [&] { inner_product_fwd(b, format_tag::nchw, format_tag::oihw); });
    b = c;
    b.id = 2;
    expect_error(bad, {"inner_product_fwd: id = 2 must be 1 when ndims = 4"},
            [&] { inner_product_fwd(b, format_tag::nchw, format_tag::oihw); });
    expect_error(bad, {"inner_product_fwd: wei layout oi has 2 dims, expected 4"},
            [&] { inner_product_fwd(c, format_tag::nchw, format_tag::oi); });
    expect_error(bad, {"inner_product_fwd: wei layout goiw has groups"},
            [&] { inner_product_fwd(c, format_tag::nchw, format_tag::goiw); });
    expect_error(bad, {"inner_product_fwd: dst layout nchw has 4 dims, expected 2"},
            [&] { inner_product_fwd(c, format_tag::nchw, format_tag::oihw, format_tag::nchw); });

    const inner_product_fwd op(c, format_tag::nchw, format_tag::oihw);
    const tensor src(op.src_desc()), wei(op.wei_desc()), bia(op.bia_desc()), dst(op.dst_desc());
    poison(dst);
    const std::vector<float> before = snapshot(dst);
    expect_error(bad, {"inner_product_fwd: wei dims[3] (w) = 4, expected iw = 3"}, [&] {
        op.execute(src, tensor(tensor_desc({5, 8, 3, 4}, format_tag::oihw)), bia, dst);
    });
    expect_error(bad, {"inner_product_fwd: bia dims[0] (x) = 4, expected oc = 5"},
            [&] { op.execute(src, wei, tensor(tensor_desc({4}, format_tag::x)), dst); });
    expect_error(bad, {"inner_product_fwd: dst dims[1] (c) = 6, expected oc = 5"}, [&] {
        op.execute(src, wei, bia, tensor(tensor_desc({2, 6}, format_tag::nc)));
    });
    expect_error(bad, {"inner_product_fwd: bia tensor has no memory"}, [&] { op.execute(src, wei, dst); });
    EXPECT_EQ(snapshot(dst), before);
}

// Weights given at creation: the op keeps its own copy (the GEMM packs it once), gives the
// same bits as the op that takes the weights per call, and does not see later changes to them.
TEST(InnerProductWeightsAtCreation, MatchWeightsPerCall) {
    const unsigned seed = 777;
    seeded_ints rnd(seed);
    for (isa level : {isa::avx512_core, isa::avx2, isa::scalar}) {
        if (detected_isa() < level) continue;
        for (int t = 0; t < 10; ++t) {
            inner_product_desc c;
            c.ndims = t % 2 ? 4 : 2;
            c.mb = rnd(1, 9);
            c.ic = rnd(1, 70);
            c.oc = rnd(1, 70);
            if (c.ndims == 4) c.ih = c.iw = rnd(1, 3);
            c.with_bias = t % 3 != 0;
            post_ops po;
            if (t % 4 == 1) po.append_sum(0.5f);
            if (t % 2) po.append_eltwise(eltwise_alg::relu);
            const format_tag st = c.ndims == 2 ? format_tag::nc : format_tag::nchw;
            const format_tag wt = c.ndims == 2 ? format_tag::oi : format_tag::oihw;
            const tensor src = make_tensor(c.src_dims(), st, real_values(count(c.src_dims()), seed + t));
            const tensor wei = make_tensor(c.wei_dims(), wt, real_values(count(c.wei_dims()), t));
            const tensor bia =
                    c.with_bias ? make_tensor(c.bia_dims(), format_tag::x, real_values(c.oc, t + 1)) : tensor();
            const std::vector<float> old = real_values(c.mb * c.oc, t + 2);
            const tensor want = make_tensor(c.dst_dims(), format_tag::nc, old);
            const tensor got = make_tensor(c.dst_dims(), format_tag::nc, old);
            isa_guard guard;
            set_max_isa(level);
            const inner_product_fwd per_call(c, st, wt, format_tag::nc, po);
            const inner_product_fwd held(c, st, wei, bia, format_tag::nc, po);
            EXPECT_FALSE(per_call.holds_weights());
            EXPECT_TRUE(held.holds_weights());
            EXPECT_STREQ(held.impl_name(), per_call.impl_name()) << c.str();
            EXPECT_EQ(held.wei_desc(), wei.desc());
            per_call.execute(src, wei, bia, want);
            for (dim_t i = 0; i < wei.desc().nelems_padded(); ++i) wei.f32()[i] = 99.f; // not seen by `held`
            if (c.with_bias) bia.f32()[0] = 99.f;
            held.execute(src, got);
            EXPECT_EQ(logical(got), logical(want)) << held.impl_name() << " " << c.str();
        }
    }
}

TEST(InnerProductWeightsAtCreation, BadUseIsNamed) {
    const status bad = status::invalid_arguments;
    inner_product_desc c = blockdnn::parse_ip_desc("mb2ic8ih3oc5");
    const tensor src(tensor_desc(c.src_dims(), format_tag::nchw)), dst(tensor_desc(c.dst_dims(), format_tag::nc));
    const tensor wei(tensor_desc(c.wei_dims(), format_tag::oihw));
    const inner_product_fwd per_call(c, format_tag::nchw, format_tag::oihw);
    const inner_product_fwd held(c, format_tag::nchw, wei, tensor());
    expect_error(bad, {"inner_product_fwd: execute(src, dst) needs weights given at creation"},
            [&] { per_call.execute(src, dst); });
    expect_error(bad, {"inner_product_fwd: this op holds the weights"}, [&] { held.execute(src, wei, dst); });
    expect_error(bad, {"inner_product_fwd: wei dims[3] (w) = 4, expected iw = 3"}, [&] {
        inner_product_fwd(c, format_tag::nchw, tensor(tensor_desc({5, 8, 3, 4}, format_tag::oihw)), tensor());
    });
    expect_error(bad, {"inner_product_fwd: wei tensor has no memory"},
            [&] { inner_product_fwd(c, format_tag::nchw, tensor(), tensor()); });
    expect_error(bad, {"inner_product_fwd", "with_bias = false"},
            [&] { inner_product_fwd(c, format_tag::nchw, wei, tensor(tensor_desc({5}, format_tag::x))); });
    c.with_bias = true;
    expect_error(bad, {"inner_product_fwd: bia tensor has no memory"},
            [&] { inner_product_fwd(c, format_tag::nchw, wei, tensor()); });
}
