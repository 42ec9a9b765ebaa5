// SPDX-License-Identifier: Apache-2.0
// The JIT softmax against the reference on each ISA: every axis of every layout, src and dst
// in one layout or two (reordered around the kernel, a blocked axis too), line lengths around every vector count and nothing written
// past the end, seeded random shapes, NaN and infinities as the reference gives them, in place,
// the same bits on any thread count; white box: init_conf's register budget, the dump, and the
// ABI of every kernel (jit/jit_abi_check.hpp).
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "common/isa_param.hpp"
#include "common/ref_util.hpp"
#include "common/test_util.hpp"
#include "core/utils.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_abi_check.hpp"
#include "jit/jit_dump.hpp"
#include "jit/jit_test_util.hpp"
#include "ops/softmax/jit_softmax_fwd_kernel.hpp"
#include "ops/softmax/softmax_conf.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace ref_test;
using jit_abi_test::checked_call_t;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();

// The reference's dst (in layout dd) for src, whatever cap the caller has set.
tensor reference_dst(const tensor &src, const tensor_desc &dd, int axis) {
    const isa cap = max_isa();
    set_max_isa(isa::scalar);
    const softmax_fwd ref(src.desc(), dd, axis);
    set_max_isa(cap);
    tensor dst(dd);
    ref.execute(src, dst);
    return dst;
}

// The op at the current cap on src into a poisoned dst; the padding must come out zero.
tensor run_op(const softmax_fwd &op, const tensor &src) {
    tensor dst(op.dst_desc());
    poison(dst);
    op.execute(src, dst);
    EXPECT_TRUE(padding_is_zero(dst)) << op.str();
    return dst;
}

std::string jit_name(isa level) { return std::string("jit:") + to_string(level); }

// Runs the op from sd to dd with seeded values times `scale` and compares with the reference.
void expect_matches_reference(
        const tensor_desc &sd, const tensor_desc &dd, int axis, isa level, unsigned seed, float scale = 8.f) {
    std::vector<float> x = real_values(sd.nelems(), seed);
    for (float &v : x) v *= scale;
    const tensor src = make_tensor(sd.dims(), sd.tag(), x);
    const softmax_fwd op(sd, dd, axis);
    EXPECT_EQ(op.impl_name(), jit_name(level)) << op.str();
    EXPECT_LE(rel_err(logical(run_op(op, src)), logical(reference_dst(src, dd, axis))), tol::softmax)
            << op.str() << " " << op.impl_info();
}

using SoftmaxJit = bdtest::capped_isa_test<isa>;

TEST_P(SoftmaxJit, EveryAxisAndLayoutMatchesTheReference) {
    const std::vector<dims_t> shapes = {{1, 1}, {7, 1}, {1, 33}, {5, 1000}, {3, 17, 6}, {1, 35, 9}, {2, 19, 3, 4},
            {1, 16, 1, 17}, {2, 5, 2, 3, 2}, {1, 1, 1, 1, 1}, {2, 24, 3, 5, 7}};
    unsigned seed = 100;
    for (const dims_t &dims : shapes) {
        const std::vector<format_tag> tags = act_tags(static_cast<int>(dims.size()));
        for (std::size_t k = 0; k < tags.size(); ++k)
            for (format_tag dst_tag : {tags[k], tags[(k + 1) % tags.size()]})
                for (int axis = 0; axis < static_cast<int>(dims.size()); ++axis)
                    expect_matches_reference(
                            tensor_desc(dims, tags[k]), tensor_desc(dims, dst_tag), axis, level(), seed++);
    }
    const tensor_desc x({37}, format_tag::x);
    expect_matches_reference(x, x, 0, level(), seed++);
}

// Lines of every length up to past two unrolled steps (lines mode: the in-register lines, the
// unrolled, single and masked vectors), and lane groups of every width (lanes mode). A guard
// after dst must stay untouched.
TEST_P(SoftmaxJit, LineLengthsAroundEveryVectorCountWriteNothingPastTheEnd) {
    constexpr dim_t max_n = 2 * softmax_max_ur_resident * 16 + 17;
    constexpr dim_t guard = 64;
    for (bool lanes : {false, true})
        for (dim_t n = 1; n <= max_n; n += n < 40 || n % 8 == 0 ? 1 : 7) {
            // lines: 7 lines of n (steps of 1 to 4 lines and their remainders); lanes: ncw
            // with 5 elements a line and n lines side by side
            const dims_t dims = lanes ? dims_t {2, 5, n} : dims_t {7, n};
            const tensor_desc d(dims, lanes ? format_tag::ncw : format_tag::nc);
            const int axis = 1;
            std::vector<float> x = real_values(d.nelems(), static_cast<unsigned>(n));
            for (float &v : x) v *= 8.f;
            const tensor src = make_tensor(dims, d.tag(), x);
            std::vector<float> mem(static_cast<std::size_t>(d.nelems() + guard), 777.f);
            const tensor dst(d, mem.data());
            const softmax_fwd op(d, d, axis);
            ASSERT_EQ(op.impl_name(), jit_name(level()));
            op.execute(src, dst);
            ASSERT_LE(rel_err(logical(dst), logical(reference_dst(src, d, axis))), tol::softmax)
                    << d.str() << " " << op.impl_info();
            for (dim_t i = d.nelems(); i < d.nelems() + guard; ++i)
                ASSERT_EQ(mem[static_cast<std::size_t>(i)], 777.f) << d.str() << " wrote past the end at " << i;
        }
}

TEST_P(SoftmaxJit, SeededRandomShapesMatchTheReference) {
    std::mt19937 gen(2026);
    for (int c = 0; c < 60; ++c) {
        const int nd = std::uniform_int_distribution<int>(2, 5)(gen);
        dims_t dims(static_cast<std::size_t>(nd));
        for (int k = 0; k < nd; ++k) dims[k] = std::uniform_int_distribution<dim_t>(1, k == 0 ? 4 : 40 / nd + 3)(gen);
        const std::vector<format_tag> tags = act_tags(nd);
        auto pick = [&] { return tags[std::uniform_int_distribution<std::size_t>(0, tags.size() - 1)(gen)]; };
        const format_tag tag = pick(), dst_tag = std::uniform_int_distribution<int>(0, 1)(gen) ? tag : pick();
        const int axis = std::uniform_int_distribution<int>(0, nd - 1)(gen);
        const float scale = std::uniform_real_distribution<float>(0.1f, 40.f)(gen);
        expect_matches_reference(tensor_desc(dims, tag), tensor_desc(dims, dst_tag), axis, level(), 500 + c, scale);
    }
}

// A line holding NaN or +inf, or all -inf, is NaN throughout, as the reference gives it; -inf
// among finite values is a 0; huge values stay finite. Lines of either mode, other lines intact.
TEST_P(SoftmaxJit, NanAndInfinitiesAsTheReference) {
    const std::vector<std::vector<float>> lines = {{1.f, nan_value, 2.f}, {inf, 0.f, 1.f}, {-inf, -inf, -inf},
            {-inf, 3.f, 1.f}, {1e30f, -1e30f, 0.f}, {0.5f, 0.25f, -0.5f}, {-3e38f, 3e38f, 1.f}};
    const dim_t n_lines = static_cast<dim_t>(lines.size()), len = 3;
    for (bool lanes : {false, true}) {
        // lines: nc n_lines x len, axis 1; lanes: the transpose, nc len x n_lines, axis 0
        const dims_t dims = lanes ? dims_t {len, n_lines} : dims_t {n_lines, len};
        std::vector<float> x(static_cast<std::size_t>(n_lines * len));
        for (dim_t l = 0; l < n_lines; ++l)
            for (dim_t k = 0; k < len; ++k) x[lanes ? k * n_lines + l : l * len + k] = lines[l][k];
        const tensor_desc d(dims, format_tag::nc);
        const int axis = lanes ? 0 : 1;
        const tensor src = make_tensor(dims, format_tag::nc, x);
        const softmax_fwd op(d, d, axis);
        ASSERT_EQ(op.impl_name(), jit_name(level()));
        const std::vector<float> got = logical(run_op(op, src)), want = logical(reference_dst(src, d, axis));
        EXPECT_LE(rel_err(got, want), tol::softmax) << (lanes ? "lanes" : "lines");
        for (dim_t l = 0; l < 3; ++l) EXPECT_TRUE(std::isnan(got[lanes ? l : l * len])) << "line " << l;
        EXPECT_EQ(got[lanes ? 3 : 3 * len], 0.f); // line 3 holds -inf first
    }
}

// One large value and many small ones: each small exp is about half an ulp of the running sum,
// which a plain float sum drops (or rounds up) every time. Confident logits (1000 classes, one
// 20 above the rest) and a long line of such terms, in both modes, stay within the bound.
TEST_P(SoftmaxJit, ManySmallTermsBesideALargeOneStayWithinTheBound) {
    for (const auto &[len, small] : {std::pair {dim_t(1000), -20.f}, std::pair {dim_t(100000), -16.5f}})
        for (bool lanes : {false, true}) {
            const dims_t dims = lanes ? dims_t {1, len, 3} : dims_t {3, len};
            const tensor_desc d(dims, lanes ? format_tag::ncw : format_tag::nc);
            std::vector<float> x(static_cast<std::size_t>(d.nelems()), small);
            for (dim_t k = 0; k < 3; ++k) x[static_cast<std::size_t>(lanes ? k : k * len)] = 0.f;
            const tensor src = make_tensor(dims, d.tag(), x);
            const softmax_fwd op(d, d, 1);
            ASSERT_EQ(op.impl_name(), jit_name(level()));
            EXPECT_LE(rel_err(logical(run_op(op, src)), logical(reference_dst(src, d, 1))), tol::softmax)
                    << d.str() << " " << op.impl_info();
        }
}

TEST_P(SoftmaxJit, InPlaceGivesTheOutOfPlaceBits) {
    for (const auto &[dims, tag, axis] :
            {std::tuple {dims_t {4, 300}, format_tag::nc, 1}, std::tuple {dims_t {2, 21, 9, 7}, format_tag::nchw, 1},
                    std::tuple {dims_t {2, 21, 9, 7}, format_tag::nChw16c, 2},
                    std::tuple {dims_t {2, 21, 9, 7}, format_tag::nChw16c, 1}}) {
        const tensor_desc d(dims, tag);
        const tensor src = make_tensor(dims, tag, real_values(d.nelems(), 7));
        const softmax_fwd op(d, d, axis);
        const std::vector<float> out = logical(run_op(op, src));
        op.execute(src, src);
        EXPECT_EQ(logical(src), out) << d.str();
    }
}

// Each line is one kernel call's work whatever the split, so the thread count changes no bit.
TEST_P(SoftmaxJit, SameBitsOnAnyThreadCount) {
    for (const auto &[dims, tag, axis] : {std::tuple {dims_t {64, 1000}, format_tag::nc, 1},
                 std::tuple {dims_t {2, 21, 40, 40}, format_tag::nchw, 1},
                 std::tuple {dims_t {3, 32, 20, 20}, format_tag::nChw8c, 3}}) {
        const tensor_desc d(dims, tag);
        const tensor src = make_tensor(dims, tag, real_values(d.nelems(), 11));
        const softmax_fwd op(d, d, axis);
        std::vector<float> one;
        {
            const threads_guard_t t(1);
            one = logical(run_op(op, src));
        }
        for (int n : {2, 3, 5}) {
            const threads_guard_t t(n);
            EXPECT_EQ(logical(run_op(op, src)), one) << d.str() << " on " << n << " threads";
        }
    }
}

// src and dst of two families (activations and weights): no reorder joins them, so the
// reference runs, as before the JIT took two layouts.
TEST_P(SoftmaxJit, TwoFamiliesRunTheReference) {
    const dims_t dims = {4, 3, 5, 5};
    const tensor_desc sd(dims, format_tag::nchw), dd(dims, format_tag::oihw);
    const tensor src = make_tensor(dims, format_tag::nchw, real_values(sd.nelems(), 9));
    for (int axis : {1, 2}) {
        const softmax_fwd op(sd, dd, axis);
        EXPECT_STREQ(op.impl_name(), "ref");
        EXPECT_EQ(logical(run_op(op, src)), logical(reference_dst(src, dd, axis)));
    }
}

// Several threads executing one op at once, each into its own dst, with the kernel between
// reorders (each caller's scratch its own): the bits of one execute alone.
TEST_P(SoftmaxJit, ConcurrentExecutesGiveTheSameBits) {
    const dims_t dims = {2, 21, 12, 9};
    const tensor_desc d(dims, format_tag::nChw16c);
    const tensor src = make_tensor(dims, format_tag::nChw16c, real_values(d.nelems(), 10));
    const softmax_fwd op(d, d, 1);
    const std::vector<float> want = logical(run_op(op, src));
    std::vector<std::vector<float>> got(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < got.size(); ++t)
        threads.emplace_back([&, t] {
            for (int k = 0; k < 20; ++k) {
                const tensor dst(d);
                op.execute(src, dst);
                got[t] = logical(dst);
                if (got[t] != want) return;
            }
        });
    for (std::thread &t : threads) t.join();
    for (const std::vector<float> &g : got) EXPECT_EQ(g, want);
}

// impl_info() names the reorders around the kernel and its split.
TEST_P(SoftmaxJit, ImplInfoNamesTheReorders) {
    const dims_t dims = {2, 21, 9, 7};
    const auto info = [&](format_tag s, format_tag d, int axis) {
        return softmax_fwd(tensor_desc(dims, s), tensor_desc(dims, d), axis).impl_info();
    };
    EXPECT_NE(info(format_tag::nChw16c, format_tag::nChw16c, 1)
                      .find("src reordered to nchw; dst reordered from nchw; outer=2 len=21 inner=63"),
            std::string::npos);
    EXPECT_NE(info(format_tag::nChw16c, format_tag::nhwc, 1).find("src reordered to nhwc; outer=126 len=21 inner=1"),
            std::string::npos);
    EXPECT_NE(info(format_tag::nhwc, format_tag::nChw8c, 1).find("dst reordered from nhwc; outer=126"),
            std::string::npos);
    const std::string same = info(format_tag::nchw, format_tag::nchw, 1);
    EXPECT_EQ(same.find("reordered"), std::string::npos) << same;
}

INSTANTIATE_TEST_SUITE_P(Isa, SoftmaxJit, ::testing::Values(isa::avx512_core, isa::avx2), bdtest::case_name());

// The kernel for mode at level, created; null if init_conf or create fails.
std::unique_ptr<jit_generator_t> make_softmax_kernel(isa level, softmax_mode mode) {
    softmax_conf_t c;
    std::string why;
    if (init_conf_softmax_fwd(c, level, mode, why) != status::success) return nullptr;
    std::unique_ptr<jit_generator_t> k;
    if (level == isa::avx512_core) k = std::make_unique<jit_softmax_fwd_kernel_t<isa::avx512_core>>(c);
    else k = std::make_unique<jit_softmax_fwd_kernel_t<isa::avx2>>(c);
    if (k->create(why) != status::success) return nullptr;
    return k;
}

TEST(SoftmaxConf, InitConfFitsTheRegisterBudget) {
    for (isa level : {isa::avx2, isa::avx512_core})
        for (softmax_mode mode : {softmax_mode::lines, softmax_mode::lanes}) {
            softmax_conf_t c;
            std::string why;
            ASSERT_EQ(init_conf_softmax_fwd(c, level, mode, why), status::success) << why;
            EXPECT_EQ(c.simd_w, simd_w_of(level));
            EXPECT_GE(c.ur, 1);
            EXPECT_LE(c.ur, softmax_max_ur);
            EXPECT_LE(c.n_vregs_used, n_vregs_of(level)) << to_string(c);
            EXPECT_EQ(to_string(c),
                    cat("isa=", to_string(level), " mode=", to_string(mode), " simd_w=", c.simd_w, " ur=", c.ur,
                            " n_vtemps=", c.n_vtemps, " ur_resident=", c.ur_resident,
                            " n_vregs_used=", c.n_vregs_used));
            EXPECT_EQ(c.ur_resident > 0, mode == softmax_mode::lines);
        }
    softmax_conf_t c;
    std::string why;
    EXPECT_EQ(init_conf_softmax_fwd(c, isa::scalar, softmax_mode::lines, why), status::unimplemented);
    EXPECT_NE(why.find("no softmax JIT kernel for isa scalar"), std::string::npos) << why;
}

TEST(SoftmaxJitDump, ShowsTheConfTheRegistersAndTheCode) {
    auto k = make_softmax_kernel(isa::avx512_core, softmax_mode::lines);
    ASSERT_NE(k, nullptr);
    expect_dump_holds(disassemble(*k),
            {"; kernel: jit_softmax_fwd_lines", "; isa: avx512_core", "; conf: isa=avx512_core mode=lines",
                    "; registers: rdi=call_args_t*", "; vector registers: zmm0-zmm3 accumulators"},
            {"vmaxps zmm0", "vdivps", "kmovw k1, eax", "vzeroupper"});
}

// Each kernel on the paths of its mode: lines in registers and through the passes (unrolled,
// single and masked vectors); lane groups of ur vectors, one and a masked tail.
TEST(JitAbi, EverySoftmaxKernelKeepsTheAbi) {
    checked_call_t cc;
    int n_checked = 0;
    for (isa level : {isa::avx2, isa::avx512_core}) {
        if (detected_isa() < level) continue;
        for (softmax_mode mode : {softmax_mode::lines, softmax_mode::lanes}) {
            auto k = make_softmax_kernel(level, mode);
            ASSERT_NE(k, nullptr);
            const std::int64_t w = simd_w_of(level), long_len = 2 * softmax_max_ur * w + w + 5;
            for (std::int64_t len : {std::int64_t(5), long_len}) {
                const std::int64_t n = mode == softmax_mode::lines ? 7 : long_len, stride = long_len;
                std::vector<float> src(static_cast<std::size_t>(len * std::max(n, stride))), dst(src.size());
                for (std::size_t i = 0; i < src.size(); ++i) src[i] = 0.01f * static_cast<float>(i % 101);
                const softmax_call_args_t args {src.data(), dst.data(), len, stride, n};
                cc.check(k->code(), &args, k->name() + ":" + to_string(level));
                // The first line sums to 1.
                double sum = 0;
                for (std::int64_t e = 0; e < len; ++e) sum += dst[mode == softmax_mode::lines ? e : e * stride];
                EXPECT_NEAR(sum, 1.0, 1e-5) << k->name() << " len " << len;
                ++n_checked;
            }
        }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}

} // namespace
