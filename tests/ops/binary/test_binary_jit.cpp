// SPDX-License-Identifier: Apache-2.0
// The JIT binary against the reference on each ISA: every broadcast pattern in every layout of
// src0, src1 and dst (the same bits: one IEEE operation per element), post-op chains, rows of
// every length and nothing written past the end, seeded random shapes, NaN and infinities, in
// place, the same bits on any thread count, what impl_info() says; white box: init_conf's
// register budget, the dump, and the ABI of the kernels (jit/jit_abi_check.hpp).
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
#include "ops/binary/binary_conf.hpp"
#include "ops/binary/jit_binary_fwd_kernel.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace ref_test;
using jit_abi_test::checked_call_t;

namespace {

struct binary_case_t {
    binary_alg alg;
    tensor_desc src0, src1, dst;
    post_ops po;
};

std::string case_str(const binary_case_t &c) {
    return cat(to_string(c.alg), " ", c.src0.str(), " ", c.src1.str(), " ", c.dst.str(), " ", c.po.str());
}

// dst's logical values after the op at the current cap and after the reference, from the same
// seeded src0, src1 and old dst (padding poisoned, so nothing may read it); dst's padding must
// come out zero.
std::pair<std::vector<float>, std::vector<float>> run_both(const binary_case_t &c, unsigned seed, std::string *impl) {
    const tensor s0 = make_tensor(c.src0.dims(), c.src0.tag(), real_values(c.src0.nelems(), seed));
    const tensor s1 = make_tensor(c.src1.dims(), c.src1.tag(), real_values(c.src1.nelems(), seed + 1));
    const std::vector<float> old = real_values(c.dst.nelems(), seed + 2);
    std::vector<float> out[2];
    const isa cap = max_isa();
    for (int k = 0; k < 2; ++k) {
        set_max_isa(k == 0 ? cap : isa::scalar);
        const binary_fwd op(c.alg, c.src0, c.src1, c.dst, c.po);
        set_max_isa(cap);
        if (k == 0) *impl = op.impl_name();
        tensor d(c.dst);
        poison(d);
        const tensor filled = make_tensor(c.dst.dims(), c.dst.tag(), old);
        for_each_index(c.dst, [&](const dim_t *idx) { d.f32()[c.dst.offset(idx)] = filled.f32()[c.dst.offset(idx)]; });
        op.execute(s0, s1, d);
        EXPECT_TRUE(padding_is_zero(d)) << case_str(c);
        out[k] = logical(d);
    }
    return {out[0], out[1]};
}

std::string want_impl(const binary_case_t &c, isa level) {
    const bool ref = c.dst.inner_nblks() > 1 || (c.src0 != c.dst && c.po.has_sum());
    return ref ? "ref" : std::string("jit:") + to_string(level);
}

using BinaryJit = bdtest::capped_isa_test<isa>;

// Every subset of broadcast dims, every layout of each tensor, both algs: the reference's bits
// (compared as floats, so a zero's sign may differ: relu(-0) is -0 in the JIT).
TEST_P(BinaryJit, EveryBroadcastAndLayoutGivesTheReferenceBits) {
    unsigned seed = 1;
    for (const dims_t &d0 : {dims_t {2, 19, 3, 5}, dims_t {1, 16, 1, 7}, dims_t {2, 3, 4, 2, 3}}) {
        const int nd = static_cast<int>(d0.size());
        const std::vector<format_tag> tags = act_tags(nd);
        for (int mask = 0; mask < (1 << nd); ++mask) {
            dims_t d1 = d0;
            for (int k = 0; k < nd; ++k)
                if (mask >> k & 1) d1[k] = 1;
            for (format_tag t0 : tags)
                for (format_tag t1 : tags)
                    for (format_tag td : {t0, tags[(mask + 1) % tags.size()]}) {
                        const binary_alg alg = seed % 2 ? binary_alg::add : binary_alg::mul;
                        const binary_case_t c {alg, tensor_desc(d0, t0), tensor_desc(d1, t1), tensor_desc(d0, td), {}};
                        std::string impl;
                        const auto [got, want] = run_both(c, seed++, &impl);
                        EXPECT_EQ(impl, want_impl(c, level())) << case_str(c);
                        ASSERT_EQ(got, want) << case_str(c);
                    }
        }
    }
}

// sum and relu give the reference's bits; eltwise functions the injector approximates stay
// within eltwise_fwd's JIT bound; a sum with src0 in another layout than dst is the reference's.
TEST_P(BinaryJit, PostOpsAsTheReference) {
    const dims_t d0 = {2, 21, 5, 3};
    const std::vector<std::pair<post_ops, double>> chains = {{post_ops().append_sum(1.f), 0.0},
            {post_ops().append_sum(0.5f).append_eltwise(eltwise_alg::relu), 0.0},
            {post_ops().append_eltwise(eltwise_alg::relu, 0.25f).append_sum(-2.f), 0.0},
            {post_ops().append_eltwise(eltwise_alg::gelu_erf).append_sum(1.f).append_eltwise(eltwise_alg::tanh),
                    tol::eltwise_jit},
            {post_ops().append_eltwise(eltwise_alg::log), tol::eltwise_jit}};
    unsigned seed = 40;
    for (const auto &[po, bound] : chains)
        for (format_tag t : act_tags(4))
            for (const dims_t &d1 : {d0, dims_t {1, 21, 1, 1}, dims_t {1, 1, 1, 1}})
                for (format_tag t0 : {t, format_tag::nchw}) {
                    const binary_case_t c {
                            binary_alg::add, tensor_desc(d0, t0), tensor_desc(d1, t), tensor_desc(d0, t), po};
                    std::string impl;
                    const auto [got, want] = run_both(c, seed++, &impl);
                    EXPECT_EQ(impl, want_impl(c, level())) << case_str(c);
                    if (bound == 0.0) EXPECT_EQ(got, want) << case_str(c);
                    else EXPECT_LE(rel_err(got, want), bound) << case_str(c);
                }
}

// Rows of every length up to past two unrolled iterations, one long row split into calls, and
// short repeated rows (per-channel nhwc of 1 to 40 channels); a guard after dst stays untouched.
TEST_P(BinaryJit, RowsOfEveryLengthWriteNothingPastTheEnd) {
    constexpr dim_t guard = 64;
    std::vector<std::pair<dims_t, dims_t>> shapes;
    for (dim_t n = 1; n <= 2 * binary_max_ur * 16 + 17; n += n < 40 ? 1 : 9) shapes.push_back({{3, n}, {1, n}});
    shapes.push_back({{1, 2 * 16384 + 37}, {1, 2 * 16384 + 37}});
    shapes.push_back({{3, 2 * 16384 + 37}, {3, 1}});
    for (dim_t ch = 1; ch <= 40; ++ch) shapes.push_back({{2, ch, 3, 7}, {1, ch, 1, 1}});
    for (const auto &[d0, d1] : shapes) {
        const format_tag tag = d0.size() == 2 ? format_tag::nc : format_tag::nhwc;
        const tensor_desc dd(d0, tag), d1d(d1, tag);
        const tensor s0 = make_tensor(d0, tag, real_values(dd.nelems(), 3)),
                     s1 = make_tensor(d1, tag, real_values(d1d.nelems(), 4));
        std::vector<float> mem(static_cast<std::size_t>(dd.nelems() + guard), 777.f);
        const tensor dst(dd, mem.data());
        const binary_fwd op(binary_alg::add, dd, d1d, dd);
        ASSERT_EQ(op.impl_name(), std::string("jit:") + to_string(level()));
        op.execute(s0, s1, dst);
        set_max_isa(isa::scalar);
        const binary_fwd ref(binary_alg::add, dd, d1d, dd);
        set_max_isa(level());
        const tensor want(dd);
        ref.execute(s0, s1, want);
        ASSERT_EQ(logical(dst), logical(want)) << dd.str() << " " << d1d.str() << " " << op.impl_info();
        for (dim_t i = dd.nelems(); i < dd.nelems() + guard; ++i)
            ASSERT_EQ(mem[static_cast<std::size_t>(i)], 777.f) << dd.str() << " wrote past the end at " << i;
    }
}

TEST_P(BinaryJit, SeededRandomShapesGiveTheReferenceBits) {
    std::mt19937 gen(77);
    for (int n = 0; n < 80; ++n) {
        const int nd = std::uniform_int_distribution<int>(2, 5)(gen);
        dims_t d0(static_cast<std::size_t>(nd)), d1;
        for (int k = 0; k < nd; ++k) d0[k] = std::uniform_int_distribution<dim_t>(1, k == 0 ? 3 : 40 / nd + 4)(gen);
        d1 = d0;
        for (int k = 0; k < nd; ++k)
            if (std::uniform_int_distribution<int>(0, 2)(gen) == 0) d1[k] = 1;
        const std::vector<format_tag> tags = act_tags(nd);
        auto pick = [&] { return tags[std::uniform_int_distribution<std::size_t>(0, tags.size() - 1)(gen)]; };
        const format_tag td = pick();
        const format_tag t0 = std::uniform_int_distribution<int>(0, 1)(gen) ? td : pick();
        post_ops po;
        if (std::uniform_int_distribution<int>(0, 2)(gen) == 0) po.append_eltwise(eltwise_alg::relu);
        if (t0 == td && std::uniform_int_distribution<int>(0, 2)(gen) == 0) po.append_sum(0.75f);
        const binary_alg alg = std::uniform_int_distribution<int>(0, 1)(gen) ? binary_alg::add : binary_alg::mul;
        const binary_case_t c {alg, tensor_desc(d0, t0), tensor_desc(d1, pick()), tensor_desc(d0, td), po};
        std::string impl;
        const auto [got, want] = run_both(c, 900 + n, &impl);
        EXPECT_EQ(impl, want_impl(c, level())) << case_str(c);
        EXPECT_EQ(got, want) << case_str(c);
    }
}

// NaN and infinities pass as IEEE add / mul make them (inf - inf and 0 * inf are NaN).
TEST_P(BinaryJit, NanAndInfinitiesAsTheReference) {
    constexpr float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> a = {1.f, nan, inf, -inf, 0.f, inf, 3e38f, -2.f, 5.f};
    const std::vector<float> b = {nan, 1.f, -inf, -inf, inf, 0.f, 3e38f, 1e-30f, -0.f};
    const dims_t d = {1, 9};
    for (binary_alg alg : {binary_alg::add, binary_alg::mul}) {
        const tensor_desc td(d, format_tag::nc);
        const binary_fwd op(alg, td, td, td);
        const tensor s0 = make_tensor(d, format_tag::nc, a), s1 = make_tensor(d, format_tag::nc, b), dst(td);
        op.execute(s0, s1, dst);
        const std::vector<float> got = logical(dst);
        for (std::size_t i = 0; i < a.size(); ++i) {
            const float want = alg == binary_alg::add ? a[i] + b[i] : a[i] * b[i];
            if (std::isnan(want)) EXPECT_TRUE(std::isnan(got[i])) << to_string(alg) << " at " << i;
            else EXPECT_EQ(got[i], want) << to_string(alg) << " at " << i;
        }
    }
}

// dst == src0, the sum post-op then reading src0's values as dst's old ones.
TEST_P(BinaryJit, InPlaceGivesTheOutOfPlaceBits) {
    for (format_tag t : act_tags(4)) {
        const dims_t d0 = {2, 19, 6, 5}, d1 = {1, 19, 1, 1};
        const tensor_desc dd(d0, t), d1d(d1, format_tag::nchw);
        const binary_fwd op(binary_alg::mul, dd, d1d, dd, post_ops().append_sum(2.f).append_eltwise(eltwise_alg::relu));
        const tensor s0 = make_tensor(d0, t, real_values(dd.nelems(), 5)),
                     s1 = make_tensor(d1, format_tag::nchw, real_values(19, 6));
        const tensor out = make_tensor(d0, t, logical(s0));
        op.execute(s0, s1, out);
        op.execute(s0, s1, s0);
        EXPECT_EQ(logical(s0), logical(out)) << dd.str();
    }
}

TEST_P(BinaryJit, SameBitsOnAnyThreadCount) {
    for (const auto &[d0, d1, t] : {std::tuple {dims_t {8, 64, 28, 28}, dims_t {8, 64, 28, 28}, format_tag::nChw16c},
                 std::tuple {dims_t {4, 3, 90, 90}, dims_t {1, 3, 1, 1}, format_tag::nhwc},
                 std::tuple {dims_t {2, 40, 50, 50}, dims_t {1, 40, 1, 1}, format_tag::nchw}}) {
        const tensor_desc dd(d0, t), d1d(d1, t);
        const binary_fwd op(binary_alg::add, dd, d1d, dd, post_ops().append_eltwise(eltwise_alg::tanh));
        const tensor s0 = make_tensor(d0, t, real_values(dd.nelems(), 7)),
                     s1 = make_tensor(d1, t, real_values(d1d.nelems(), 8));
        std::vector<float> one;
        {
            const threads_guard_t th(1);
            const tensor dst(dd);
            op.execute(s0, s1, dst);
            one = logical(dst);
        }
        for (int n : {2, 3, 5}) {
            const threads_guard_t th(n);
            const tensor dst(dd);
            op.execute(s0, s1, dst);
            EXPECT_EQ(logical(dst), one) << dd.str() << " on " << n << " threads";
        }
    }
}

// impl_info() names each reorder and the rows the kernel runs.
TEST_P(BinaryJit, ImplInfoNamesTheReordersAndTheRows) {
    const dims_t d0 = {2, 32, 5, 5};
    const binary_fwd bias(binary_alg::add, tensor_desc(d0, format_tag::nChw16c),
            tensor_desc({1, 32, 1, 1}, format_tag::nchw), tensor_desc(d0, format_tag::nChw16c));
    EXPECT_NE(bias.impl_info().find("rows=25 len=16 src1=row src1_row_stride=0"), std::string::npos)
            << bias.impl_info();
    const binary_fwd mixed(binary_alg::add, tensor_desc(d0, format_tag::nhwc), tensor_desc(d0, format_tag::nchw),
            tensor_desc(d0, format_tag::nChw8c));
    EXPECT_NE(mixed.impl_info().find("src0 reordered to nChw8c; src1 reordered to nChw8c; "), std::string::npos)
            << mixed.impl_info();
}

// Layouts of two families (activations, weights) where a reorder between them would be needed
// run the reference, before anything is written; a plain src1 of another family is read in
// place.
TEST_P(BinaryJit, LayoutsOfTwoFamiliesAsTheReference) {
    using ft = format_tag;
    const std::vector<std::tuple<dims_t, ft, ft, ft, bool>> cases = {{{4, 3}, ft::nc, ft::io, ft::io, false},
            {{4, 3}, ft::oi, ft::oi, ft::nc, false}, {{2, 3, 5}, ft::nwc, ft::wio, ft::ncw, false},
            {{4, 3}, ft::nc, ft::io, ft::nc, true}, {{1, 2, 3, 4}, ft::goiw, ft::OIhw16i16o, ft::goiw, true}};
    unsigned seed = 60;
    for (const auto &[dims, t0, t1, td, jit] : cases) {
        dims_t d1 = dims;
        d1[0] = 1;
        const binary_case_t c {binary_alg::mul, tensor_desc(dims, t0), tensor_desc(d1, t1), tensor_desc(dims, td), {}};
        std::string impl;
        const auto [got, want] = run_both(c, seed++, &impl);
        EXPECT_EQ(impl, jit ? std::string("jit:") + to_string(level()) : "ref") << case_str(c);
        EXPECT_EQ(got, want) << case_str(c);
    }
}

// Several threads executing one op at once, each into its own dst, src0 and src1 reordered
// (each caller's scratch its own): the bits of one execute alone.
TEST_P(BinaryJit, ConcurrentExecutesGiveTheSameBits) {
    const dims_t d0 = {2, 21, 12, 9}, d1 = {1, 21, 12, 1};
    const tensor_desc sd(d0, format_tag::nhwc), s1d(d1, format_tag::nChw8c), dd(d0, format_tag::nChw16c);
    const binary_fwd op(binary_alg::mul, sd, s1d, dd);
    const tensor s0 = make_tensor(d0, format_tag::nhwc, real_values(sd.nelems(), 11));
    const tensor s1 = make_tensor(d1, format_tag::nChw8c, real_values(s1d.nelems(), 12));
    const tensor first(dd);
    op.execute(s0, s1, first);
    const std::vector<float> want = logical(first);
    std::vector<std::vector<float>> got(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < got.size(); ++t)
        threads.emplace_back([&, t] {
            for (int k = 0; k < 20; ++k) {
                const tensor dst(dd);
                op.execute(s0, s1, dst);
                got[t] = logical(dst);
                if (got[t] != want) return;
            }
        });
    for (std::thread &t : threads) t.join();
    for (const std::vector<float> &g : got) EXPECT_EQ(g, want);
    EXPECT_NE(op.impl_info().find("src0 reordered to nChw16c; src1 reordered to nChw16c"), std::string::npos)
            << op.impl_info();
}

INSTANTIATE_TEST_SUITE_P(Isa, BinaryJit, ::testing::Values(isa::avx512_core, isa::avx2), bdtest::case_name());

// The kernel for (alg, src1_scalar, po) at level, created; null if init_conf or create fails.
std::unique_ptr<jit_generator_t> make_binary_kernel(isa level, binary_alg alg, bool scalar, const post_ops &po) {
    binary_conf_t c;
    std::string why;
    if (init_conf_binary_fwd(c, level, alg, scalar, po, why) != status::success) return nullptr;
    std::unique_ptr<jit_generator_t> k;
    if (level == isa::avx512_core) k = std::make_unique<jit_binary_fwd_kernel_t<isa::avx512_core>>(c);
    else k = std::make_unique<jit_binary_fwd_kernel_t<isa::avx2>>(c);
    if (k->create(why) != status::success) return nullptr;
    return k;
}

TEST(BinaryConf, InitConfFitsTheRegisterBudget) {
    const post_ops heavy = post_ops().append_eltwise(eltwise_alg::gelu_erf).append_sum(0.5f);
    for (isa level : {isa::avx2, isa::avx512_core})
        for (const post_ops &po : {post_ops(), heavy}) {
            binary_conf_t c;
            std::string why;
            ASSERT_EQ(init_conf_binary_fwd(c, level, binary_alg::mul, true, po, why), status::success) << why;
            EXPECT_GE(c.ur, 1);
            EXPECT_LE(c.ur, binary_max_ur);
            EXPECT_LE(c.n_vregs_used, n_vregs_of(level)) << to_string(c);
            EXPECT_EQ(c.n_vtemps, po.empty() ? 1 : 4) << to_string(c);
        }
    binary_conf_t c;
    std::string why;
    ASSERT_EQ(init_conf_binary_fwd(c, isa::avx2, binary_alg::add, false, heavy, why), status::success);
    EXPECT_EQ(to_string(c),
            "isa=avx2 alg=add src1=row post_ops=gelu_erf:0:0+sum:0.5 simd_w=8 ur=2 n_vtemps=4 "
            "n_vregs_used=12");
    EXPECT_EQ(init_conf_binary_fwd(c, isa::scalar, binary_alg::add, false, {}, why), status::unimplemented);
    EXPECT_NE(why.find("no binary JIT kernel for isa scalar"), std::string::npos) << why;
}

TEST(BinaryJitDump, ShowsTheConfTheRegistersAndTheCode) {
    auto k = make_binary_kernel(isa::avx512_core, binary_alg::add, true, post_ops().append_sum(1.f));
    ASSERT_NE(k, nullptr);
    expect_dump_holds(disassemble(*k),
            {"; kernel: jit_binary_fwd_add_scalar", "; conf: isa=avx512_core alg=add src1=scalar post_ops=sum:1",
                    "; registers: rdi=call_args_t*", "; vector registers: zmm0-zmm7 values"},
            {"vbroadcastss", "vaddps zmm0", "kmovw k1, eax", "vzeroupper"});
}

// Each kind of kernel over rows with the unrolled, single and masked vectors.
TEST(JitAbi, EveryBinaryKernelKeepsTheAbi) {
    checked_call_t cc;
    int n_checked = 0;
    for (isa level : {isa::avx2, isa::avx512_core}) {
        if (detected_isa() < level) continue;
        for (bool scalar : {false, true})
            for (const post_ops &po : {post_ops(), post_ops().append_eltwise(eltwise_alg::tanh).append_sum(0.5f)}) {
                auto k = make_binary_kernel(level, binary_alg::add, scalar, po);
                ASSERT_NE(k, nullptr);
                const std::int64_t len = 2 * binary_max_ur * 16 + 16 + 5, rows = 3;
                std::vector<float> src0(len * rows, 1.f), src1(len * rows, 2.f), dst(len * rows, 0.f);
                const binary_call_args_t args {src0.data(), src1.data(), dst.data(), rows, len, scalar ? 1 : len};
                cc.check(k->code(), &args, k->name() + ":" + to_string(level));
                EXPECT_NEAR(dst.back(), po.empty() ? 3.f : std::tanh(3.f), 1e-6) << k->name();
                ++n_checked;
            }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}

} // namespace
