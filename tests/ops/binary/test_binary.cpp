// SPDX-License-Identifier: Apache-2.0
// Reference binary add / mul: full shape and every broadcast pattern against a direct oracle,
// exactly (one IEEE operation per element); in place; layouts; post-ops; the bad inputs.
#include <random>

#include <gtest/gtest.h>

#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;

namespace {

std::vector<float> oracle_binary(binary_alg alg, const dims_t &d0, const dims_t &d1, const std::vector<float> &a,
        const std::vector<float> &b, const post_ops &po, const std::vector<float> &old) {
    std::vector<float> dst(a.size());
    const int nd = static_cast<int>(d0.size());
    for (dim_t lin = 0; lin < count(d0); ++lin) {
        dim_t rem = lin, off1 = 0, stride1 = 1;
        for (int d = nd - 1; d >= 0; --d) {
            const dim_t i = rem % d0[d];
            rem /= d0[d];
            off1 += (d1[d] == 1 ? 0 : i) * stride1;
            stride1 *= d1[d];
        }
        float r = alg == binary_alg::add ? a[lin] + b[off1] : a[lin] * b[off1];
        for (const post_op &e : po.entries())
            r = e.what == post_op::kind::sum ? r + e.scale * old[lin] : eltwise_ref(e.alg, r, e.alpha, e.beta);
        dst[lin] = r;
    }
    return dst;
}

} // namespace

TEST(BinaryRef, BroadcastPatternsAndLayoutsMatchOracleExactly) {
    const isa_guard g;
    set_max_isa(isa::scalar);
    const dims_t d0 = {2, 19, 3, 5};
    const std::vector<dims_t> d1s = {{2, 19, 3, 5}, {1, 19, 1, 1}, {1, 1, 1, 1}, {2, 1, 3, 5}, {1, 19, 3, 1}};
    const std::vector<float> a = real_values(count(d0), 1), old = real_values(count(d0), 2);
    const auto acts = act_tags(4);
    int k = 0;
    for (binary_alg alg : {binary_alg::add, binary_alg::mul})
        for (const dims_t &d1 : d1s)
            for (const post_ops &po : {post_ops(), post_ops().append_sum(1.f).append_eltwise(eltwise_alg::relu)}) {
                const std::vector<float> b = real_values(count(d1), 3 + k);
                const format_tag t0 = acts[k % 4], t1 = acts[(k + 1) % 4], td = acts[(k + 2) % 4];
                ++k;
                const binary_fwd op(alg, tensor_desc(d0, t0), tensor_desc(d1, t1), tensor_desc(d0, td), po);
                EXPECT_STREQ(op.impl_name(), "ref");
                const tensor s0 = make_tensor(d0, t0, a), s1 = make_tensor(d1, t1, b), d = make_tensor(d0, td, old);
                op.execute(s0, s1, d);
                EXPECT_EQ(logical(d), oracle_binary(alg, d0, d1, a, b, po, old)) << op.str();
                EXPECT_TRUE(padding_is_zero(d)) << op.str();
            }
}

TEST(BinaryRef, InPlaceAndOtherRanks) {
    const dims_t d0 = {4, 6}, d1 = {1, 6};
    const std::vector<float> a = real_values(24, 5), b = real_values(6, 6);
    const binary_fwd op(binary_alg::mul, tensor_desc(d0, format_tag::nc), tensor_desc(d1, format_tag::nc),
            tensor_desc(d0, format_tag::nc));
    const tensor s0 = make_tensor(d0, format_tag::nc, a), s1 = make_tensor(d1, format_tag::nc, b);
    op.execute(s0, s1, s0); // dst is src0
    EXPECT_EQ(logical(s0), oracle_binary(binary_alg::mul, d0, d1, a, b, {}, a));
    const dims_t v = {7};
    const binary_fwd op1(binary_alg::add, tensor_desc(v, format_tag::x), tensor_desc({1}, format_tag::x),
            tensor_desc(v, format_tag::x));
    const tensor x = make_tensor(v, format_tag::x, real_values(7, 8)), one = make_tensor({1}, format_tag::x, {2.f}),
                 y(tensor_desc(v, format_tag::x));
    op1.execute(x, one, y);
    for (int i = 0; i < 7; ++i) EXPECT_EQ(y.f32()[i], x.f32()[i] + 2.f);
}

TEST(BinaryErrors, BadShapesAndTensors) {
    const status bad = status::invalid_arguments;
    const tensor_desc a({2, 8, 3, 3}, format_tag::nchw);
    expect_error(bad, {"binary_fwd: src1_dims[1] = 4 must be 1 (broadcast) or src0's 8"}, [&] {
        binary_fwd(binary_alg::add, a, tensor_desc({1, 4, 1, 1}, format_tag::nchw), a);
    });
    expect_error(bad, {"binary_fwd: src1_dims has 2 dims (1x8), src0_dims has 4 dims (2x8x3x3)", "prepend 1s"}, [&] {
        binary_fwd(binary_alg::add, a, tensor_desc({1, 8}, format_tag::nc), a);
    });
    expect_error(bad, {"binary_fwd: dst dims[0] (n) = 1 must equal src0's 2"}, [&] {
        binary_fwd(binary_alg::add, a, a, tensor_desc({1, 8, 3, 3}, format_tag::nchw));
    });
    expect_error(bad, {"binary_fwd: src1_dims has 0 dims, src0_dims has 4"},
            [&] { binary_fwd(binary_alg::mul, a, tensor_desc(), a); });

    const binary_fwd op(binary_alg::add, a, tensor_desc({1, 8, 1, 1}, format_tag::nchw), a);
    const tensor s0(a), s1(op.src1_desc()), d(a);
    poison(d);
    const std::vector<float> before = snapshot(d);
    expect_error(bad, {"binary_fwd: src1 layout nhwc differs from the nchw"}, [&] {
        op.execute(s0, tensor(tensor_desc({1, 8, 1, 1}, format_tag::nhwc)), d);
    });
    expect_error(bad, {"binary_fwd: dst dims[2] (h) = 4, expected dims[2] = 3"}, [&] {
        op.execute(s0, s1, tensor(tensor_desc({2, 8, 4, 3}, format_tag::nchw)));
    });
    expect_error(bad, {"binary_fwd: dst", "overlaps src1"}, [&] {
        const tensor d_alias(tensor_desc({1, 8, 1, 1}, format_tag::nchw), d.data());
        const binary_fwd op1(binary_alg::add, tensor_desc({1, 8, 1, 1}, format_tag::nchw),
                tensor_desc({1, 8, 1, 1}, format_tag::nchw), tensor_desc({1, 8, 1, 1}, format_tag::nchw));
        op1.execute(tensor(tensor_desc({1, 8, 1, 1}, format_tag::nchw)), d_alias, d_alias);
    });
    EXPECT_EQ(snapshot(d), before);
}

TEST(BinaryDesc, ValidateNamesFieldValueAndRule) {
    const status bad = status::invalid_arguments;
    const auto desc = [](binary_alg alg, const dims_t &d0, const dims_t &d1) {
        binary_desc d;
        d.alg = alg;
        d.src0_dims = d0;
        d.src1_dims = d1;
        return d;
    };
    EXPECT_NO_THROW(desc(binary_alg::add, {2, 8, 3, 3}, {1, 8, 1, 1}).validate());
    expect_error(bad, {"binary_fwd: alg = 7 is not a binary_alg"}, [&] {
        desc(static_cast<binary_alg>(7), {2, 8}, {2, 8}).validate();
    });
    expect_error(bad, {"binary_fwd: src0_dims has 0 dims, must have 1 to 6"},
            [&] { desc(binary_alg::add, {}, {}).validate(); });
    expect_error(bad, {"binary_fwd: src0_dims has 7 dims (1x1x1x1x1x1x1), must have 1 to 6"},
            [&] { desc(binary_alg::add, dims_t(7, 1), dims_t(7, 1)).validate(); });
    expect_error(bad, {"binary_fwd: src0_dims[1] = 0 must be positive"}, [&] {
        desc(binary_alg::add, {2, 0}, {1, 1}).validate();
    });
    expect_error(bad, {"binary_fwd: src0_dims[1] = 2147483648 is out of range (|src0_dims[1]| < 2^31)"}, [&] {
        desc(binary_alg::add, {1, dim_t(1) << 31, 1}, {1, 1, 1}).validate();
    });
    expect_error(bad, {"binary_fwd: src1_dims[0] = -3 must be positive"}, [&] {
        desc(binary_alg::mul, {2, 8}, {-3, 8}).validate();
    });
    expect_error(bad, {"binary_fwd: src1_dims[1] = 4 must be 1 (broadcast) or src0's 8 (src0 2x8, src1 2x4)"}, [&] {
        desc(binary_alg::mul, {2, 8}, {2, 4}).validate();
    });
    // The constructor validates the desc first, then the tags against their dims.
    expect_error(bad, {"binary_fwd: src1_dims has 1 dims (8), src0_dims has 2 dims (2x8)", "prepend 1s"}, [&] {
        binary_fwd(desc(binary_alg::add, {2, 8}, {8}), format_tag::nc, format_tag::x, format_tag::nc);
    });
    expect_error(bad, {"binary_fwd: src1"}, [&] {
        const binary_desc d = desc(binary_alg::add, {2, 8, 3, 3}, {1, 8, 1, 1});
        binary_fwd(d, format_tag::nchw, format_tag::nc, format_tag::nchw);
    });
}

TEST(BinaryDesc, StrAndTheTwoConstructorsAgree) {
    binary_desc d;
    d.alg = binary_alg::mul;
    d.src0_dims = {2, 19, 3, 5};
    d.src1_dims = {1, 19, 1, 1};
    EXPECT_EQ(d.str(), "--alg=mul 2x19x3x5:1x19x1x1");
    d.alg = binary_alg::add;
    EXPECT_EQ(d.str(), "--alg=add 2x19x3x5:1x19x1x1");
    const post_ops po = post_ops().append_eltwise(eltwise_alg::relu);
    const binary_fwd from_desc(d, format_tag::nChw16c, format_tag::nchw, format_tag::nhwc, po);
    const binary_fwd from_tensors(binary_alg::add, tensor_desc(d.src0_dims, format_tag::nChw16c),
            tensor_desc(d.src1_dims, format_tag::nchw), tensor_desc(d.src0_dims, format_tag::nhwc), po);
    EXPECT_EQ(from_desc.str(), from_tensors.str());
    EXPECT_EQ(from_desc.desc().str(), d.str());
    EXPECT_EQ(from_tensors.desc().src1_dims, d.src1_dims);
    EXPECT_EQ(from_desc.src0_desc().str(), "nChw16c:2x19x3x5");
    EXPECT_EQ(from_desc.dst_desc().tag(), format_tag::nhwc);
    EXPECT_EQ(from_desc.alg(), binary_alg::add);
    const std::vector<float> a = real_values(2 * 19 * 3 * 5, 11), b = real_values(19, 12);
    const tensor s0 = make_tensor(d.src0_dims, format_tag::nChw16c, a);
    const tensor s1 = make_tensor(d.src1_dims, format_tag::nchw, b);
    const tensor x(from_desc.dst_desc()), y(from_tensors.dst_desc());
    from_desc.execute(s0, s1, x);
    from_tensors.execute(s0, s1, y);
    EXPECT_EQ(logical(x), oracle_binary(binary_alg::add, d.src0_dims, d.src1_dims, a, b, po, {}));
    EXPECT_EQ(logical(x), logical(y));
}

TEST(BinaryParse, RoundTripsStrAndNamesBadText) {
    binary_desc d;
    d.alg = binary_alg::mul;
    d.src0_dims = {2, 19, 3, 5};
    d.src1_dims = {1, 19, 1, 1};
    const binary_desc r = parse_binary_desc(d.str());
    EXPECT_EQ(r.alg, d.alg);
    EXPECT_EQ(r.src0_dims, d.src0_dims);
    EXPECT_EQ(r.src1_dims, d.src1_dims);
    EXPECT_EQ(r.str(), d.str());
    std::string name;
    const binary_desc b = parse_binary_desc("2x16x7x7:2x16x1x1_nbias", binary_alg::add, &name);
    EXPECT_EQ(b.alg, binary_alg::add);
    EXPECT_EQ(b.src1_dims, dims_t({2, 16, 1, 1}));
    EXPECT_EQ(name, "bias");
    EXPECT_EQ(parse_binary_desc("8x8:8x8", binary_alg::mul).alg, binary_alg::mul);
    const status bad = status::invalid_arguments;
    expect_error(bad, {"binary descriptor '2x16'", "no ':'"}, [] { parse_binary_desc("2x16"); });
    expect_error(bad, {"--alg='sub'", "add, mul"}, [] { parse_binary_desc("--alg=sub 2x16:2x16"); });
    expect_error(bad, {"dims '2y16'", "'y'"}, [] { parse_binary_desc("2x16:2y16"); });
    expect_error(bad, {"binary descriptor '2x16:3x16'", "src1_dims[0] = 3 must be 1 (broadcast) or src0's 2"},
            [] { parse_binary_desc("2x16:3x16"); });
}
