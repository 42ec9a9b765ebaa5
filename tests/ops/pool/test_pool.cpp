// SPDX-License-Identifier: Apache-2.0
// Reference pooling: max / average (padding in or out of the count) / global average against
// an independent oracle (explicit padding with a marker, then dense windows) on seeded random
// problems; layouts bit for bit; the bad inputs.
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "core/prb_parse.hpp"
#include "ops/pool/pool_impl.hpp"
#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;

namespace {

// Pads each (n, c) plane explicitly (std::nullopt marks padding), then reduces each window.
std::vector<float> oracle_pool(const pool_desc &c, const std::vector<float> &src) {
    const dim_t I[3] = {c.id, c.ih, c.iw}, O[3] = {c.od, c.oh, c.ow}, K[3] = {c.kd, c.kh, c.kw};
    const dim_t S[3] = {c.sd, c.sh, c.sw}, P[3] = {c.pd, c.ph, c.pw}, DL[3] = {c.dd, c.dh, c.dw};
    dim_t E[3];
    for (int k = 0; k < 3; ++k) E[k] = I[k] + P[k] + (k == 0 ? c.pd_r : k == 1 ? c.ph_r : c.pw_r);
    std::vector<float> dst;
    for (dim_t nc = 0; nc < c.mb * c.ic; ++nc) {
        std::vector<std::optional<float>> padded(static_cast<std::size_t>(E[0] * E[1] * E[2]));
        for (dim_t a = 0; a < E[0]; ++a)
            for (dim_t b = 0; b < E[1]; ++b)
                for (dim_t e = 0; e < E[2]; ++e) {
                    const dim_t x = a - P[0], y = b - P[1], z = e - P[2];
                    if (x >= 0 && x < I[0] && y >= 0 && y < I[1] && z >= 0 && z < I[2])
                        padded[(a * E[1] + b) * E[2] + e] = src[((nc * I[0] + x) * I[1] + y) * I[2] + z];
                }
        for (dim_t od = 0; od < O[0]; ++od)
            for (dim_t oh = 0; oh < O[1]; ++oh)
                for (dim_t ow = 0; ow < O[2]; ++ow) {
                    std::vector<float> vals;
                    for (dim_t kd = 0; kd < K[0]; ++kd)
                        for (dim_t kh = 0; kh < K[1]; ++kh)
                            for (dim_t kw = 0; kw < K[2]; ++kw) {
                                const dim_t a = od * S[0] + kd * (DL[0] + 1), b = oh * S[1] + kh * (DL[1] + 1),
                                            e = ow * S[2] + kw * (DL[2] + 1);
                                if (const auto &v = padded[(a * E[1] + b) * E[2] + e]) vals.push_back(*v);
                            }
                    double sum = 0;
                    float mx = -std::numeric_limits<float>::infinity();
                    for (float v : vals) sum += v, mx = std::max(mx, v);
                    if (c.alg == pool_alg::max) dst.push_back(mx);
                    else if (c.alg == pool_alg::avg_include_pad) dst.push_back(float(sum / double(K[0] * K[1] * K[2])));
                    else dst.push_back(float(sum / double(vals.size())));
                }
    }
    return dst;
}

// The op on src in layouts st / dt, as logical values; `impl` receives the implementation's name.
// The reference implementation itself, on the same layouts, must give the same bits (any NaN
// matching any NaN), so the callers' checks hold for it too whichever row the op takes.
std::vector<float> run_pool(
        const pool_desc &c, format_tag st, format_tag dt, const std::vector<float> &src, std::string *impl = nullptr) {
    const pool_fwd op(c, st, dt);
    if (st != dt && (is_blocked(st) || is_blocked(dt) || c.ic > 8)) { // the blocked path between reorders
        EXPECT_STREQ(op.impl_name(), "simd:scalar:reordered") << op.str();
    }
    if (impl) *impl = op.impl_name();
    const tensor s = make_tensor(c.src_dims(), st, src), d(op.dst_desc()), r(op.dst_desc());
    poison(d);
    poison(r);
    op.execute(s, d);
    EXPECT_TRUE(padding_is_zero(d)) << op.str();
    blockdnn::impl::pool_prb_t p;
    p.desc = c;
    p.src = s.desc();
    p.dst = r.desc();
    blockdnn::impl::create_pool_fwd_ref(p)->execute({s.f32(), r.f32()});
    EXPECT_TRUE(padding_is_zero(r)) << "ref " << op.str();
    const std::vector<float> got = logical(d), ref = logical(r);
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::isnan(got[i]) ? !std::isnan(ref[i]) : std::memcmp(&got[i], &ref[i], sizeof(float)) != 0) {
            ADD_FAILURE() << op.impl_name() << " and ref differ at " << i << ": " << got[i] << " vs " << ref[i] << " "
                          << op.str();
            break;
        }
    return got;
}

} // namespace

TEST(PoolRef, RandomProblemsMatchOracle) {
    const unsigned seed = 777;
    seeded_ints rnd(seed);
    for (int t = 0; t < 90; ++t) {
        pool_desc c;
        c.alg = static_cast<pool_alg>(t % 3);
        c.ndims = static_cast<int>(rnd(3, 5));
        c.mb = rnd(1, 2);
        c.ic = rnd(1, 19);
        const auto [i, k, s, p, pr, dl] = spatial_ptrs(c);
        for (int x = 5 - c.ndims; x < 3; ++x) {
            *i[x] = rnd(1, 8), *k[x] = rnd(1, 3), *s[x] = rnd(1, 3), *dl[x] = rnd(0, 1);
            const dim_t ext = (*k[x] - 1) * (*dl[x] + 1) + 1;
            *p[x] = rnd(0, ext - 1); // a window wholly in padding is rejected; see PoolErrors
            *pr[x] = std::max(ext - *i[x] - *p[x], rnd(-1, ext - 1));
        }
        c.infer_dst_dims();
        try {
            c.validate();
        } catch (const error &) {
            continue; // dilation may leave a window without input taps; PoolErrors covers that
        }
        const std::vector<float> src = real_values(count(c.src_dims()), seed + t);
        const auto acts = act_tags(c.ndims);
        const format_tag st = acts[rnd(0, 3)], dt = acts[rnd(0, 3)];
        const std::vector<float> got = run_pool(c, st, dt, src);
        EXPECT_LE(rel_err(got, oracle_pool(c, src)), tol::pool)
                << "seed " << seed << " case " << t << ": " << to_string(c.alg) << " " << c.str() << " "
                << to_string(st) << "->" << to_string(dt);
    }
}

// include_pad and exclude_pad differ exactly where windows reach into the padding.
TEST(PoolRef, AverageCountsPaddingOnlyWhenAsked) {
    pool_desc c = blockdnn::parse_pool_desc("mb1ic1ih2kh2ph1", pool_alg::avg_include_pad);
    ASSERT_EQ(c.oh, 3);
    const std::vector<float> src = {1, 2, 3, 4};
    // Corner windows hold one element, edges two, the centre four.
    EXPECT_EQ(run_pool(c, format_tag::nchw, format_tag::nchw, src),
            (std::vector<float> {0.25f, 0.75f, 0.5f, 1.f, 2.5f, 1.5f, 0.75f, 1.75f, 1.f}));
    c.alg = pool_alg::avg_exclude_pad;
    EXPECT_EQ(run_pool(c, format_tag::nchw, format_tag::nchw, src),
            (std::vector<float> {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}));
    c.alg = pool_alg::max;
    EXPECT_EQ(run_pool(c, format_tag::nchw, format_tag::nchw, {-1, -2, -3, -4}),
            (std::vector<float> {-1, -1, -2, -1, -1, -2, -3, -3, -4})); // padding never wins
}

TEST(PoolRef, GlobalAverage) {
    const pool_desc c = pool_desc::global(pool_alg::avg_exclude_pad, {2, 3, 4, 5});
    EXPECT_EQ(c.dst_dims(), (dims_t {2, 3, 1, 1}));
    EXPECT_EQ(c.kh, 4);
    EXPECT_EQ(c.kw, 5);
    const std::vector<float> src = real_values(120, 5);
    const std::vector<float> got = run_pool(c, format_tag::nChw16c, format_tag::nhwc, src);
    for (dim_t nc = 0; nc < 6; ++nc) {
        double s = 0;
        for (int k = 0; k < 20; ++k) s += src[nc * 20 + k];
        EXPECT_FLOAT_EQ(got[nc], float(s / 20));
    }
    EXPECT_EQ(pool_desc::global(pool_alg::max, {1, 2, 3}).ndims, 3);
    EXPECT_EQ(pool_desc::global(pool_alg::max, {1, 2, 3, 4, 5}).kd, 3);
}

// Real problems (ResNet's max pool and global pool, GoogLeNet-style 3x3 s1 pools, a 3-D pool):
// every layout pair gives the plain result bit for bit.
TEST(PoolRef, LayoutsAgreeBitForBit) {
    const char *const descs[] = {"mb2ic64ih112oh56kh3sh2ph1n\"resnet:pool1\"", "mb2ic30ih13kh3ph1n\"tail\"",
            "mb1ic16id6kd2sd2n\"3d\"", "mb3ic17iw20kw3sw2pw1n\"1d\""};
    for (const char *s : descs)
        for (pool_alg alg : {pool_alg::max, pool_alg::avg_include_pad, pool_alg::avg_exclude_pad}) {
            const pool_desc c = blockdnn::parse_pool_desc(s, alg);
            const std::vector<float> src = int_values(count(c.src_dims()), 3);
            const auto acts = act_tags(c.ndims);
            const std::vector<float> want = run_pool(c, acts[0], acts[0], src);
            for (std::size_t k = 1; k < acts.size(); ++k)
                EXPECT_EQ(run_pool(c, acts[k], acts[(k + 1) % acts.size()], src), want)
                        << s << " " << to_string(alg) << " " << to_string(acts[k]);
        }
}

// Max pooling on one channel-blocked layout (simd:scalar:max_blocked) against the reference on
// the plain layout: seeded problems (1-D, 2-D, 3-D, channel tails, stride above the kernel,
// dilation, padding) with NaN in the data; max is exact, so bit for bit (NaN where NaN).
TEST(PoolMaxBlocked, MatchesTheReferenceBitForBit) {
    seeded_ints rnd(777);
    int n_blocked = 0;
    for (int t = 0; t < 60; ++t) {
        pool_desc c;
        c.alg = pool_alg::max;
        c.ndims = static_cast<int>(rnd(3, 5));
        c.mb = rnd(1, 3);
        c.ic = rnd(1, 40);
        const auto spatial = [&](dim_t &i, dim_t &k, dim_t &s, dim_t &p, dim_t &p_r, dim_t &d) {
            k = rnd(1, 4), s = rnd(1, 5), d = rnd(0, 1);
            i = rnd((k - 1) * (d + 1) + 1, 12);
            p = rnd(0, k - 1), p_r = rnd(0, k - 1);
        };
        if (c.ndims == 5) spatial(c.id, c.kd, c.sd, c.pd, c.pd_r, c.dd);
        if (c.ndims >= 4) spatial(c.ih, c.kh, c.sh, c.ph, c.ph_r, c.dh);
        spatial(c.iw, c.kw, c.sw, c.pw, c.pw_r, c.dw);
        c.infer_dst_dims();
        std::vector<float> src = int_values(count(c.src_dims()), static_cast<unsigned>(t));
        for (std::size_t i = 0; i < src.size(); i += 37) src[i] = std::nanf("");
        const auto acts = act_tags(c.ndims);
        const std::vector<float> want = run_pool(c, acts[0], acts[0], src);
        for (format_tag tag : acts) {
            std::string impl;
            const std::vector<float> got = run_pool(c, tag, tag, src, &impl);
            n_blocked += impl == "simd:scalar:max_blocked";
            ASSERT_EQ(got.size(), want.size());
            for (std::size_t i = 0; i < got.size(); ++i)
                ASSERT_TRUE(std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i])
                        << impl << " " << c.str() << " " << to_string(tag) << " at " << i;
        }
    }
    EXPECT_GT(n_blocked, 0);
}

TEST(PoolErrors, BadProblemsAndTensors) {
    const status bad = status::invalid_arguments;
    pool_desc c = blockdnn::parse_pool_desc("mb2ic3ih8kh3sh2ph1");
    pool_desc b = c;
    b.oh = 5;
    expect_error(bad, {"pool_fwd: oh = 5 does not match"}, [&] { pool_fwd(b, format_tag::nchw, format_tag::nchw); });
    b = c;
    b.kh = 12;
    expect_error(
            bad, {"pool_fwd: kernel extent ext_kh = 12"}, [&] { pool_fwd(b, format_tag::nchw, format_tag::nchw); });
    b = c;
    b.ph = 3; // the first window holds only padding
    b.infer_dst_dims();
    expect_error(bad, {"pool_fwd: the window of output index 0 along h (oh = 5) covers no input element"},
            [&] { pool_fwd(b, format_tag::nchw, format_tag::nchw); });
    b = c;
    b.ic = 0;
    expect_error(bad, {"pool_fwd: ic = 0 must be positive"}, [&] { pool_fwd(b, format_tag::nchw, format_tag::nchw); });
    b = c;
    b.dw = -1;
    expect_error(bad, {"pool_fwd: dw = -1 must be >= 0"}, [&] { pool_fwd(b, format_tag::nchw, format_tag::nchw); });
    expect_error(bad, {"pool_fwd: dst layout ncdhw has 5 dims, expected 4"},
            [&] { pool_fwd(c, format_tag::nchw, format_tag::ncdhw); });
    expect_error(bad, {"global pooling", "got 2"}, [] { pool_desc::global(pool_alg::max, {2, 3}); });

    const pool_fwd op(c, format_tag::nchw, format_tag::nChw8c);
    const tensor src(op.src_desc()), dst(op.dst_desc());
    poison(dst);
    const std::vector<float> before = snapshot(dst);
    expect_error(bad, {"pool_fwd: src dims[3] (w) = 7, expected iw = 8"}, [&] {
        op.execute(tensor(tensor_desc({2, 3, 8, 7}, format_tag::nchw)), dst);
    });
    expect_error(bad, {"pool_fwd: dst layout nchw differs from the nChw8c"}, [&] {
        op.execute(src, tensor(tensor_desc({2, 3, 4, 4}, format_tag::nchw)));
    });
    std::vector<float> mem(static_cast<std::size_t>(op.dst_desc().nelems_padded() + op.src_desc().nelems()));
    expect_error(bad, {"pool_fwd: dst", "overlaps src"},
            [&] { op.execute(tensor(op.src_desc(), mem.data()), tensor(op.dst_desc(), mem.data() + 4)); });
    EXPECT_EQ(snapshot(dst), before);
}
