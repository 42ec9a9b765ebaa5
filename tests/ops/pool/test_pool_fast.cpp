// SPDX-License-Identifier: Apache-2.0
// The fast pooling paths (simd:scalar:max_blocked, simd:scalar:avg_blocked, simd:scalar:max_nxc,
// simd:scalar:avg_nxc) against the reference built for the same problem and layouts: seeded random
// problems (1-D, 2-D, 3-D, channel tails, dilation, asymmetric padding) with NaN and infinities in
// the data, compared bit for bit over dst's whole memory (blocked padding included; any NaN matches
// any NaN); the dispatch; thread counts; the window arithmetic.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "blockdnn/stream.hpp"
#include "core/prb_parse.hpp"
#include "ops/pool/pool_impl.hpp"
#include "ops/pool/pool_simd.hpp"
#include "common/isa_param.hpp"
#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;
using blockdnn::impl::pool_prb_t;

namespace {

// The implementation each layout family should get for alg.
const char *fast_name(pool_alg alg, format_tag tag) {
    const bool blocked = tag != format_tag::nwc && tag != format_tag::nhwc && tag != format_tag::ndhwc;
    if (alg == pool_alg::max) return blocked ? "simd:scalar:max_blocked" : "simd:scalar:max_nxc";
    return blocked ? "simd:scalar:avg_blocked" : "simd:scalar:avg_nxc";
}

// A tensor holding `vals` whose padding (the channels past ic of a blocked layout's last
// block) holds NaN, which no implementation may let into dst.
tensor make_src(const dims_t &dims, format_tag tag, const std::vector<float> &vals) {
    tensor t(tensor_desc(dims, tag));
    for (dim_t i = 0; i < t.desc().nelems_padded(); ++i) t.f32()[i] = std::nanf("");
    std::size_t k = 0;
    for_each_index(t.desc(), [&](const dim_t *idx) { t.f32()[t.desc().offset(idx)] = vals.at(k++); });
    return t;
}

// dst's whole memory after pool_fwd on src (logical values `vals`) in layout st, dst in dt.
std::vector<float> run_op(
        const pool_desc &c, format_tag st, format_tag dt, const std::vector<float> &vals, std::string *impl) {
    const pool_fwd op(c, st, dt);
    if (impl) *impl = op.impl_name();
    const tensor s = make_src(c.src_dims(), st, vals), d(op.dst_desc());
    poison(d);
    op.execute(s, d);
    return snapshot(d);
}
std::vector<float> run_op(const pool_desc &c, format_tag tag, const std::vector<float> &vals, std::string *impl) {
    return run_op(c, tag, tag, vals, impl);
}

// The same through the reference implementation itself, on the same layouts.
std::vector<float> run_ref(const pool_desc &c, format_tag st, format_tag dt, const std::vector<float> &vals) {
    pool_prb_t p;
    p.desc = c;
    p.src = tensor_desc(c.src_dims(), st);
    p.dst = tensor_desc(c.dst_dims(), dt);
    const auto ref = blockdnn::impl::create_pool_fwd_ref(p);
    const tensor s = make_src(c.src_dims(), st, vals), d(p.dst);
    poison(d);
    ref->execute({s.f32(), d.f32()});
    return snapshot(d);
}
std::vector<float> run_ref(const pool_desc &c, format_tag tag, const std::vector<float> &vals) {
    return run_ref(c, tag, tag, vals);
}

// The row a pair of layouts other than one blocked or one channels-last layout gets: the blocked
// path between reorders, but the reference where neither side is blocked and the blocks of
// ic channels (8 up to 8 channels, else 16) would be more than half padding.
const char *pair_name(const pool_desc &c, format_tag st, format_tag dt) {
    const dim_t blk = c.ic <= 8 ? 8 : 16;
    const bool padded = !is_blocked(st) && !is_blocked(dt) && (c.ic + blk - 1) / blk * blk > 2 * c.ic;
    return padded ? "ref" : "simd:scalar:reordered";
}

// Index of the first element where a and b differ bit for bit (two NaNs match), or -1.
long first_mismatch(const std::vector<float> &a, const std::vector<float> &b) {
    if (a.size() != b.size()) return 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return static_cast<long>(i);
    }
    return -1;
}

// A seeded random problem: mb 1-4, ic 1-70, spatial 1-20 (1-10 in 3-D), kernel 1-5, stride
// 1-3, dilation 0-1, padding 0..ext-1 at the start and -1..ext-1 at the end. Invalid draws
// (a window without input) are redrawn.
pool_desc random_problem(std::mt19937 &gen, pool_alg alg, int ndims) {
    auto rnd = [&](dim_t lo, dim_t hi) { return std::uniform_int_distribution<dim_t>(lo, hi)(gen); };
    for (;;) {
        pool_desc c;
        c.alg = alg;
        c.ndims = ndims;
        c.mb = rnd(1, 4);
        c.ic = rnd(1, 70);
        const auto spatial = [&](dim_t &i, dim_t &k, dim_t &s, dim_t &p, dim_t &p_r, dim_t &dl) {
            i = rnd(1, ndims == 5 ? 10 : 20), k = rnd(1, 5), s = rnd(1, 3), dl = rnd(0, 1);
            const dim_t ext = (k - 1) * (dl + 1) + 1;
            p = rnd(0, ext - 1);
            p_r = std::max(ext - i - p, rnd(-1, ext - 1));
        };
        if (ndims == 5) spatial(c.id, c.kd, c.sd, c.pd, c.pd_r, c.dd);
        if (ndims >= 4) spatial(c.ih, c.kh, c.sh, c.ph, c.ph_r, c.dh);
        spatial(c.iw, c.kw, c.sw, c.pw, c.pw_r, c.dw);
        try {
            c.infer_dst_dims();
            c.validate();
            return c;
        } catch (const error &) {}
    }
}

// src values: reals in [-1, 1) with NaN, +inf and -inf sprinkled in (none when `finite`).
std::vector<float> random_src(const pool_desc &c, unsigned seed, bool finite) {
    std::vector<float> v = real_values(count(c.src_dims()), seed);
    if (finite) return v;
    std::mt19937 gen(seed);
    std::uniform_int_distribution<std::size_t> at(0, v.size() - 1);
    const float special[] = {
            std::nanf(""), std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
    for (std::size_t k = 0; k < 1 + v.size() / 97; ++k) v[at(gen)] = special[k % 3];
    return v;
}

constexpr pool_alg algs[] = {pool_alg::max, pool_alg::avg_include_pad, pool_alg::avg_exclude_pad};

// One seeded random problem and its number (which seeds its data).
struct random_case_t {
    int t = 0;
    pool_desc c;
};

// 180 problems: the three algorithms in turn, 1-D, 2-D and 3-D in turn.
std::vector<random_case_t> random_problems() {
    std::vector<random_case_t> v;
    std::mt19937 gen(2024);
    for (int t = 0; t < 180; ++t) v.push_back({t, random_problem(gen, algs[t % 3], 3 + t / 3 % 3)});
    return v;
}

std::string random_name(const random_case_t &r) {
    return "p" + std::to_string(r.t) + "_" + to_string(r.c.alg) + "_" + r.c.str();
}

// The pooling layers of ResNet-50 on the layouts PyTorch (nhwc) and oneDNN (nChw16c, nChw8c)
// hand over.
struct layer_case_t {
    pool_desc c;
    format_tag tag = format_tag::undef;
};

// ResNet-50's global average pool and its 3x3 s2 max pool (smaller mb), with both averages.
std::vector<layer_case_t> resnet50_pools() {
    const pool_desc gap_inc = pool_desc::global(pool_alg::avg_include_pad, {2, 2048, 7, 7});
    const pool_desc gap_exc = pool_desc::global(pool_alg::avg_exclude_pad, {2, 2048, 7, 7});
    pool_desc mp = blockdnn::parse_pool_desc("mb2ic64ih112oh56kh3sh2ph1", pool_alg::max);
    pool_desc ap = mp;
    ap.alg = pool_alg::avg_exclude_pad;
    std::vector<layer_case_t> v;
    for (const pool_desc &c : {gap_inc, gap_exc, mp, ap})
        for (format_tag tag : {format_tag::nhwc, format_tag::nChw16c, format_tag::nChw8c}) v.push_back({c, tag});
    return v;
}

std::string layer_name(const layer_case_t &l) {
    return std::string(to_string(l.tag)) + "_" + to_string(l.c.alg) + "_" + l.c.str();
}

// The fast rows are C++ loops for the scalar level (simd:scalar:*): the cases name it.
class PoolFastRandom : public bdtest::isa_test<bdtest::isa_case_t<random_case_t>> {};
class PoolFastResNet50 : public bdtest::isa_test<bdtest::isa_case_t<layer_case_t>> {};

} // namespace

// On the three fast layouts of the problem's rank.
TEST_P(PoolFastRandom, MatchesTheReferenceBitForBit) {
    const unsigned seed = 2024;
    const int t = GetParam().desc.t;
    const pool_desc &c = GetParam().desc.c;
    const pool_alg alg = c.alg;
    const std::vector<float> src = random_src(c, seed + t, t % 2 == 0);
    const auto acts = act_tags(c.ndims);
    int cases = 0;
    for (std::size_t k = 1; k < acts.size(); ++k) { // nxc, nC*8c, nC*16c
        std::string impl;
        const std::vector<float> got = run_op(c, acts[k], src, &impl);
        const std::vector<float> want = run_ref(c, acts[k], src);
        EXPECT_EQ(impl, fast_name(alg, acts[k])) << c.str();
        const long i = first_mismatch(got, want);
        ASSERT_EQ(i, -1) << "seed " << seed << " case " << t << ": " << impl << " " << to_string(alg) << " " << c.str()
                         << " " << to_string(acts[k]) << " at " << i << ": " << got[i] << " vs ref " << want[i];
        ++cases;
    }
    EXPECT_EQ(cases, 3);
    // The plain layout, and src and dst in two different layouts: reordered around the blocked
    // path.
    const format_tag pairs[2][2] = {{acts[0], acts[0]}, {acts[t % 4], acts[(t + 1 + t / 4 % 3) % 4]}};
    for (const auto &[st, dt] : pairs) {
        std::string impl;
        const std::vector<float> got = run_op(c, st, dt, src, &impl);
        const std::vector<float> want = run_ref(c, st, dt, src);
        EXPECT_EQ(impl, pair_name(c, st, dt)) << c.str();
        const long i = first_mismatch(got, want);
        ASSERT_EQ(i, -1) << "seed " << seed << " case " << t << ": " << impl << " " << to_string(alg) << " " << c.str()
                         << " " << to_string(st) << " -> " << to_string(dt) << " at " << i << ": " << got[i]
                         << " vs ref " << want[i];
    }
}

INSTANTIATE_TEST_SUITE_P(Seeded, PoolFastRandom,
        ::testing::ValuesIn(bdtest::isa_cases({isa::scalar}, random_problems(), random_name)), bdtest::case_name());

TEST_P(PoolFastResNet50, MatchesTheReference) {
    const pool_desc &c = GetParam().desc.c;
    const format_tag tag = GetParam().desc.tag;
    const std::vector<float> src = random_src(c, 9, false);
    std::string impl;
    const std::vector<float> got = run_op(c, tag, src, &impl);
    EXPECT_EQ(impl, fast_name(c.alg, tag));
    EXPECT_EQ(first_mismatch(got, run_ref(c, tag, src)), -1) << impl << " " << c.str();
}

INSTANTIATE_TEST_SUITE_P(Layers, PoolFastResNet50,
        ::testing::ValuesIn(bdtest::isa_cases({isa::scalar}, resnet50_pools(), layer_name)), bdtest::case_name());

TEST(PoolFast, DispatchPicksTheFastPathsOnlyForOneFastLayout) {
    const pool_desc c2 = blockdnn::parse_pool_desc("mb2ic19ih9kh3sh2ph1");
    const pool_desc c1 = blockdnn::parse_pool_desc("mb2ic19iw9kw3sw2pw1");
    const pool_desc c3 = blockdnn::parse_pool_desc("mb2ic19id5ih9iw7kd2kh3kw3sh2sw2ph1pw1");
    using ft = format_tag;
    for (pool_alg alg : algs) {
        pool_desc c = c2;
        c.alg = alg;
        for (ft tag : {ft::nhwc, ft::nChw8c, ft::nChw16c})
            EXPECT_STREQ(pool_fwd(c, tag, tag).impl_name(), fast_name(alg, tag)) << to_string(tag);
        for (const auto &[st, dt] : {std::pair {ft::nchw, ft::nchw}, std::pair {ft::nhwc, ft::nChw16c},
                     std::pair {ft::nChw8c, ft::nChw16c}, std::pair {ft::nchw, ft::nhwc}})
            EXPECT_STREQ(pool_fwd(c, st, dt).impl_name(), "simd:scalar:reordered");
        c = c1;
        c.alg = alg;
        for (ft tag : {ft::nwc, ft::nCw8c, ft::nCw16c})
            EXPECT_STREQ(pool_fwd(c, tag, tag).impl_name(), fast_name(alg, tag)) << to_string(tag);
        EXPECT_STREQ(pool_fwd(c, ft::ncw, ft::ncw).impl_name(), "simd:scalar:reordered");
        c = c3;
        c.alg = alg;
        for (ft tag : {ft::ndhwc, ft::nCdhw8c, ft::nCdhw16c})
            EXPECT_STREQ(pool_fwd(c, tag, tag).impl_name(), fast_name(alg, tag)) << to_string(tag);
        EXPECT_STREQ(pool_fwd(c, ft::ncdhw, ft::ncdhw).impl_name(), "simd:scalar:reordered");
    }
}

// The blocked path between reorders in passes of fewer images than mb (each pass's src and dst
// at its images' offsets), with src, dst, both or neither in the blocked layout, against the
// reference bit for bit; and few channels with neither side blocked go to the reference.
TEST(PoolFast, ReorderedPassesMatchTheReference) {
    using ft = format_tag;
    for (pool_alg alg : algs) {
        pool_desc c = blockdnn::parse_pool_desc("mb6ic19ih9kh3sh2ph1");
        c.alg = alg;
        const std::vector<float> vals = random_src(c, 31, false);
        for (const auto &[st, dt] : {std::pair {ft::nchw, ft::nchw}, std::pair {ft::nChw16c, ft::nchw},
                     std::pair {ft::nhwc, ft::nChw8c}, std::pair {ft::nChw8c, ft::nChw16c}})
            for (dim_t pass : {1, 2, 3, 6}) {
                pool_prb_t p;
                p.desc = c;
                p.src = tensor_desc(c.src_dims(), st);
                p.dst = tensor_desc(c.dst_dims(), dt);
                const auto op = blockdnn::impl::create_pool_fwd_reordered_in_passes(p, pass);
                const tensor s = make_src(c.src_dims(), st, vals), d(p.dst);
                poison(d);
                op->execute({s.f32(), d.f32()});
                EXPECT_EQ(first_mismatch(snapshot(d), run_ref(c, st, dt, vals)), -1)
                        << to_string(alg) << " " << to_string(st) << " -> " << to_string(dt) << " pass " << pass;
            }
    }
    const pool_desc few = blockdnn::parse_pool_desc("mb2ic3ih9kh3sh2ph1");
    EXPECT_STREQ(pool_fwd(few, ft::nchw, ft::nchw).impl_name(), "ref");
    EXPECT_STREQ(pool_fwd(few, ft::nchw, ft::nChw16c).impl_name(), "simd:scalar:reordered");
}

// The refusal reasons name the rule that failed.
TEST(PoolFast, RefusalsSayWhy) {
    pool_prb_t p;
    p.desc = blockdnn::parse_pool_desc("mb2ic19ih9kh3sh2ph1", pool_alg::avg_include_pad);
    p.src = tensor_desc(p.desc.src_dims(), format_tag::nhwc);
    p.dst = tensor_desc(p.desc.dst_dims(), format_tag::nchw);
    std::string why;
    EXPECT_FALSE(blockdnn::impl::accept_pool_fwd_max_nxc(p, why));
    EXPECT_EQ(why, "not max pooling");
    EXPECT_FALSE(blockdnn::impl::accept_pool_fwd_avg_nxc(p, why));
    EXPECT_EQ(why, "layouts src:nhwc dst:nchw are not one channels-last nwc / nhwc / ndhwc layout");
    EXPECT_FALSE(blockdnn::impl::accept_pool_fwd_avg_blocked(p, why));
    EXPECT_EQ(why, "layouts src:nhwc dst:nchw are not one channel-blocked nC*8c / nC*16c layout");
    p.desc.alg = pool_alg::max;
    EXPECT_FALSE(blockdnn::impl::accept_pool_fwd_avg_blocked(p, why));
    EXPECT_EQ(why, "not average pooling");
}

// NaN wins a max wherever it is in the window; it poisons an average; infinities of both
// signs in one window average to NaN, one alone to itself.
TEST(PoolFast, NaNAndInfinities) {
    const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
    pool_desc c = blockdnn::parse_pool_desc("mb1ic3iw4kw2sw2");
    // channel 0: NaN second in window 0, first in window 1; channel 1: -inf, +inf; channel 2: 7, -inf.
    const std::vector<float> src = {5, nan, nan, 5, -inf, 1, inf, -inf, 7, 7, -inf, 2};
    for (format_tag tag : {format_tag::nwc, format_tag::nCw8c, format_tag::nCw16c}) {
        c.alg = pool_alg::max;
        const pool_fwd op(c, tag, tag);
        const tensor s = make_tensor(c.src_dims(), tag, src), d(op.dst_desc());
        op.execute(s, d);
        std::vector<float> got = logical(d);
        EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1])) << op.impl_name();
        EXPECT_EQ(got[2], 1.f);
        EXPECT_EQ(got[3], inf);
        EXPECT_EQ(got[4], 7.f);
        EXPECT_EQ(got[5], 2.f);
        c.alg = pool_alg::avg_exclude_pad;
        const pool_fwd avg(c, tag, tag);
        avg.execute(s, d);
        got = logical(d);
        EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1])) << avg.impl_name();
        EXPECT_EQ(got[2], -inf);
        EXPECT_TRUE(std::isnan(got[3]));
        EXPECT_EQ(got[4], 7.f);
        EXPECT_EQ(got[5], -inf);
    }
}

// Each dst element is computed by one task, so one and two threads give the same bits.
TEST(PoolFast, OneAndTwoThreadsAgree) {
    std::mt19937 gen(31);
    for (int t = 0; t < 18; ++t) {
        const pool_alg alg = algs[t % 3];
        const int ndims = 3 + t / 3 % 3;
        const pool_desc c = random_problem(gen, alg, ndims);
        const std::vector<float> src = random_src(c, 100 + t, false);
        for (format_tag tag : {act_tags(ndims)[1], act_tags(ndims)[3]}) {
            std::vector<float> one, two;
            std::string impl;
            {
                const threads_guard_t g(1);
                one = run_op(c, tag, src, &impl);
            }
            {
                const threads_guard_t g(2);
                two = run_op(c, tag, src, nullptr);
            }
            EXPECT_EQ(first_mismatch(one, two), -1) << impl << " " << c.str();
        }
    }
}

// tap_range against the taps for_each_window_tap visits, over every small 1-D window.
TEST(PoolFast, TapRangeIsTheRunOfTapsInsideTheInput) {
    using blockdnn::impl::tap_range;
    for (dim_t i = 1; i <= 6; ++i)
        for (dim_t k = 1; k <= 4; ++k)
            for (dim_t s = 1; s <= 3; ++s)
                for (dim_t dl = 0; dl <= 2; ++dl)
                    for (dim_t p = 0; p <= 6; ++p)
                        for (dim_t o = 0; o < 6; ++o) {
                            pool_desc c;
                            c.ndims = 3, c.iw = i, c.kw = k, c.sw = s, c.dw = dl, c.pw = p;
                            std::vector<dim_t> taps;
                            blockdnn::impl::for_each_window_tap(
                                    c, 0, 0, o, [&](dim_t, dim_t, dim_t iw) { taps.push_back(iw); });
                            const auto r = tap_range(o, s, p, dl, k, i);
                            std::vector<dim_t> want;
                            for (dim_t kw = r.lo; kw < r.hi; ++kw) want.push_back(o * s - p + kw * (dl + 1));
                            ASSERT_EQ(taps, want)
                                    << "i" << i << " k" << k << " s" << s << " dl" << dl << " p" << p << " o" << o;
                        }
}
