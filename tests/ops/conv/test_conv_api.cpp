// SPDX-License-Identifier: Apache-2.0
// conv_fwd's public shape: layouts left to the implementation (format_tag::any) and the
// queries that answer them, per ISA level; runs on tensors made from the queried descs against
// the reference on plain layouts.
#include <gtest/gtest.h>

#include "common/isa_param.hpp"
#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;

namespace {

using ft = format_tag;

conv_desc make_desc(dim_t g, dim_t ic, dim_t oc, int ndims = 4, bool bias = true) {
    conv_desc d;
    d.ndims = ndims;
    d.mb = 2;
    d.g = g;
    d.ic = ic;
    d.oc = oc;
    d.iw = 9;
    d.kw = 3;
    d.pw = d.pw_r = 1;
    if (ndims >= 4) d.ih = 7, d.kh = 3, d.ph = d.ph_r = 1;
    if (ndims == 5) d.id = 5, d.kd = 3, d.pd = d.pd_r = 1;
    d.with_bias = bias;
    d.infer_dst_dims();
    return d;
}

struct picks_t {
    ft src, wei, dst;
};

// The op created with any for every layout, under a cap of `level`.
conv_fwd any_op(const conv_desc &d, isa level, const post_ops &po = post_ops()) {
    set_max_isa(level);
    conv_fwd op(d, ft::any, ft::any, ft::any, po);
    reset_max_isa();
    return op;
}

void expect_picks(const conv_fwd &op, picks_t want) {
    EXPECT_EQ(op.src_desc().tag(), want.src) << op.str();
    EXPECT_EQ(op.wei_desc().tag(), want.wei) << op.str();
    EXPECT_EQ(op.dst_desc().tag(), want.dst) << op.str();
}

// dst of the reference op on plain layouts, from the logical values of src, wei, bia.
std::vector<float> reference(const conv_desc &d, const post_ops &po, const std::vector<float> &src,
        const std::vector<float> &wei, const std::vector<float> &bia) {
    isa_guard guard;
    set_max_isa(isa::scalar);
    const bool grouped = d.g > 1;
    const conv_fwd ref(d, plain_act(d.ndims), plain_wei(d.ndims, grouped), plain_act(d.ndims), po);
    const tensor dst(ref.dst_desc());
    ref.execute(make_tensor(d.src_dims(), plain_act(d.ndims), src),
            make_tensor(d.wei_dims(grouped), plain_wei(d.ndims, grouped), wei),
            d.with_bias ? make_tensor(d.bia_dims(), ft::x, bia) : tensor(), dst);
    return logical(dst);
}

// Runs op on tensors made from its queried descs and compares with the reference.
void expect_runs_as_reference(const conv_fwd &op, const post_ops &po = post_ops()) {
    const conv_desc &d = op.desc();
    const std::vector<float> src = int_values(op.src_desc().nelems(), 1), wei = int_values(op.wei_desc().nelems(), 2),
                             bia = int_values(d.oc, 3);
    const tensor dst(op.dst_desc());
    op.execute(make_tensor(d.src_dims(), op.src_desc().tag(), src),
            make_tensor(op.wei_desc().dims(), op.wei_desc().tag(), wei),
            d.with_bias ? make_tensor(d.bia_dims(), ft::x, bia) : tensor(), dst);
    EXPECT_EQ(logical(dst), reference(d, po, src, wei, bia)) << op.impl_name() << " " << op.str();
}

} // namespace

// The tests below that run at every level: the reference (scalar), then each JIT.
class ConvApiIsa : public bdtest::isa_test<isa> {};

TEST(ConvApi, AnyIsATagNameButNoLayout) {
    EXPECT_STREQ(to_string(ft::any), "any");
    EXPECT_EQ(format_tag_from_string("any"), ft::any);
    EXPECT_EQ(ndims_of(ft::any), 0);
    EXPECT_FALSE(is_blocked(ft::any));
    expect_error(status::invalid_arguments, {"tensor_desc", "any", "src_desc()"}, [] {
        tensor_desc({2, 3, 4, 5}, ft::any);
    });
    expect_error(status::invalid_arguments, {"any"}, [] { tensor t(tensor_desc({2, 3}, ft::any)); });
}

// The layouts blockdnn-bench ran with before it asked the op: blocked for the JIT levels
// (first layers with ic <= 4 a plain src), the kernel's weights, plain for the reference.
TEST_P(ConvApiIsa, AnyPicksTheImplementationsLayouts) {
    isa_guard guard;
    const isa level = this->level();
    SCOPED_TRACE(to_string(level));
    const bool z = level == isa::avx512_core;
    if (level == isa::scalar) {
        expect_picks(any_op(make_desc(1, 19, 29), level), {ft::nchw, ft::oihw, ft::nchw});
        expect_picks(any_op(make_desc(2, 32, 32), level), {ft::nchw, ft::goihw, ft::nchw});
        expect_picks(any_op(make_desc(1, 5, 7, 3), level), {ft::ncw, ft::oiw, ft::ncw});
        expect_picks(any_op(make_desc(4, 8, 8, 5), level), {ft::ncdhw, ft::goidhw, ft::ncdhw});
        EXPECT_STREQ(any_op(make_desc(1, 19, 29), level).impl_name(), "ref");
        return;
    }
    const ft blk = z ? ft::nChw16c : ft::nChw8c;
    expect_picks(any_op(make_desc(1, 19, 29), level), {blk, z ? ft::OIhw16i16o : ft::OIhw8i8o, blk});
    expect_picks(any_op(make_desc(2, 32, 32), level), {blk, z ? ft::gOIhw16i16o : ft::gOIhw8i8o, blk});
    expect_picks(any_op(make_desc(32, 32, 32), level), {blk, z ? ft::Goihw16g : ft::Goihw8g, blk});
    expect_picks(any_op(make_desc(1, 3, 20), level), {ft::nchw, z ? ft::OIhw16i16o : ft::OIhw8i8o, blk});
    expect_picks(any_op(make_desc(1, 5, 7, 3), level),
            {z ? ft::nCw16c : ft::nCw8c, z ? ft::OIw16i16o : ft::OIw8i8o, z ? ft::nCw16c : ft::nCw8c});
    expect_picks(any_op(make_desc(1, 16, 16, 5), level),
            {z ? ft::nCdhw16c : ft::nCdhw8c, z ? ft::OIdhw16i16o : ft::OIdhw8i8o, z ? ft::nCdhw16c : ft::nCdhw8c});
    const std::string jit = z ? "jit:avx512_core" : "jit:avx2";
    EXPECT_EQ(any_op(make_desc(1, 19, 29), level).impl_name(), jit);
    EXPECT_EQ(any_op(make_desc(1, 3, 20), level).impl_name(), jit + ":first");
    EXPECT_EQ(any_op(make_desc(32, 32, 32), level).impl_name(), jit + ":dw");
    // ic 5..16: the direct kernel's blocked src, not the first-layer kernel's plain one.
    EXPECT_EQ(any_op(make_desc(1, 8, 20), level).impl_name(), jit);
}

// A layout given on one side is matched on the other where the kernels need it.
TEST_P(ConvApiIsa, AnyFollowsTheGivenLayout) {
    isa_guard guard;
    const isa level = this->level();
    if (level == isa::scalar) GTEST_SKIP() << "the reference picks plain layouts (AnyPicksTheImplementationsLayouts)";
    SCOPED_TRACE(to_string(level));
    set_max_isa(level);
    const conv_desc d = make_desc(1, 19, 29);
    const ft oihw_blk = level == isa::avx512_core ? ft::OIhw16i16o : ft::OIhw8i8o;
    expect_picks(conv_fwd(d, ft::nhwc, ft::any, ft::any), {ft::nhwc, oihw_blk, ft::nhwc});
    expect_picks(conv_fwd(d, ft::any, ft::any, ft::nChw8c), {ft::nChw8c, ft::OIhw8i8o, ft::nChw8c});
    const conv_fwd given_wei(d, ft::any, ft::hwio, ft::any);
    EXPECT_EQ(given_wei.wei_desc().tag(), ft::hwio);
    const conv_fwd nxc_dst(d, ft::any, ft::any, ft::nhwc);
    EXPECT_EQ(nxc_dst.src_desc().tag(), ft::nhwc) << nxc_dst.impl_name();
    // An nchw dst, which no kernel writes: the kernel reordered around plain src and dst,
    // its own weights.
    const conv_fwd plain_dst(d, ft::any, ft::any, ft::nchw);
    EXPECT_EQ(plain_dst.impl_name(), std::string("jit:") + to_string(level) + ":plain");
    expect_picks(plain_dst, {ft::nchw, oihw_blk, ft::nchw});
    reset_max_isa();
}

TEST_P(ConvApiIsa, AnyRunsAsTheReference) {
    isa_guard guard;
    const post_ops relu = post_ops().append_eltwise(eltwise_alg::relu);
    const isa level = this->level();
    SCOPED_TRACE(to_string(level));
    for (const conv_desc &d : {make_desc(1, 19, 29), make_desc(2, 32, 32), make_desc(32, 32, 32, 4, false),
                 make_desc(1, 3, 20), make_desc(1, 5, 7, 3), make_desc(4, 8, 8, 5, false)})
        expect_runs_as_reference(any_op(d, level, relu), relu);
}

// Weights given at creation with src and dst left to the implementation.
TEST_P(ConvApiIsa, AnyWithWeightsAtCreation) {
    isa_guard guard;
    const isa level = this->level();
    SCOPED_TRACE(to_string(level));
    const conv_desc d = make_desc(1, 19, 29);
    const std::vector<float> src = int_values(d.mb * d.ic * d.ih * d.iw, 1),
                             wei = int_values(d.oc * d.ic * d.kh * d.kw, 2), bia = int_values(d.oc, 3);
    set_max_isa(level);
    const conv_fwd op(
            d, ft::any, make_tensor(d.wei_dims(false), ft::oihw, wei), make_tensor({d.oc}, ft::x, bia), ft::any);
    reset_max_isa();
    EXPECT_TRUE(op.holds_weights());
    const tensor dst(op.dst_desc());
    op.execute(make_tensor(d.src_dims(), op.src_desc().tag(), src), dst);
    EXPECT_EQ(logical(dst), reference(d, post_ops(), src, wei, bia)) << op.impl_name();
}

TEST(ConvApi, AnyNamedInMessagesAndRefusedByTensors) {
    const conv_fwd op(make_desc(1, 19, 29), ft::any, ft::any, ft::any);
    EXPECT_EQ(op.str().find("any"), std::string::npos) << op.str(); // the picks, not any
    expect_error(status::invalid_arguments, {"conv_fwd", "src", "layout"},
            [&] { conv_fwd(make_desc(1, 19, 29), ft::oihw, ft::any, ft::any); });
}

// execute(const conv_fwd_args &) is the one execute; the positional forms build the struct.
TEST_P(ConvApiIsa, ArgsStructEqualsPositional) {
    isa_guard guard;
    const isa level = this->level();
    SCOPED_TRACE(to_string(level));
    for (bool bias : {true, false}) {
        const conv_desc d = make_desc(1, 19, 29, 4, bias);
        const conv_fwd op = any_op(d, level);
        const tensor src = make_tensor(d.src_dims(), op.src_desc().tag(), int_values(op.src_desc().nelems(), 1));
        const tensor_desc &wd = op.wei_desc();
        const tensor wei = make_tensor(wd.dims(), wd.tag(), int_values(wd.nelems(), 2));
        const tensor bia = bias ? make_tensor({d.oc}, ft::x, int_values(d.oc, 3)) : tensor();
        const tensor a(op.dst_desc()), b(op.dst_desc());
        op.execute({.src = src, .wei = wei, .bia = bia, .dst = a});
        if (bias) op.execute(src, wei, bia, b);
        else op.execute(src, wei, b);
        EXPECT_EQ(snapshot(a), snapshot(b));

        set_max_isa(level);
        const conv_fwd held(d, ft::any, wei, bia, ft::any);
        reset_max_isa();
        const tensor c(held.dst_desc()), e(held.dst_desc());
        held.execute(conv_fwd_args {src, {}, {}, c});
        held.execute(src, e);
        EXPECT_EQ(logical(c), logical(a));
        EXPECT_EQ(snapshot(c), snapshot(e));
        expect_error(status::invalid_arguments, {"conv_fwd", "holds the weights", "wei and bia empty"},
                [&] { held.execute({.src = src, .wei = wei, .bia = bia, .dst = c}); });
        expect_error(status::invalid_arguments, {"conv_fwd", "execute(src, dst) needs weights"},
                [&] { op.execute({.src = src, .dst = a}); });
    }
}

// Bias is set in one place, desc.with_bias; a bia tensor that disagrees names both.
TEST(ConvApi, BiasMismatchNamesTensorAndDesc) {
    const conv_desc with = make_desc(1, 19, 29, 4, true), without = make_desc(1, 19, 29, 4, false);
    const conv_fwd op_b(with, ft::nchw, ft::oihw, ft::nchw), op_nb(without, ft::nchw, ft::oihw, ft::nchw);
    const tensor src(op_b.src_desc()), wei(op_b.wei_desc()), bia(op_b.bia_desc()), dst(op_b.dst_desc());
    EXPECT_EQ(op_nb.bia_desc().ndims(), 0);
    const auto bad = status::invalid_arguments;
    const std::initializer_list<const char *> missing {"conv_fwd: bia tensor has no memory", "desc.with_bias = true"};
    const std::initializer_list<const char *> extra {"conv_fwd: a bia tensor", "desc.with_bias = false"};
    expect_error(bad, missing, [&] { op_b.execute(src, wei, dst); });
    expect_error(bad, missing, [&] { op_b.execute({.src = src, .wei = wei, .dst = dst}); });
    expect_error(bad, extra, [&] { op_nb.execute(src, wei, bia, dst); });
    expect_error(bad, extra, [&] { op_nb.execute({.src = src, .wei = wei, .bia = bia, .dst = dst}); });
    // The same at creation with weights.
    expect_error(bad, missing, [&] { conv_fwd(with, ft::any, wei, tensor(), ft::any); });
    expect_error(bad, extra, [&] { conv_fwd(without, ft::any, wei, bia, ft::any); });
    op_b.execute(src, wei, bia, dst); // and the right calls work
    op_nb.execute(src, wei, dst);
}

INSTANTIATE_TEST_SUITE_P(
        Isa, ConvApiIsa, ::testing::Values(isa::scalar, isa::avx2, isa::avx512_core), bdtest::case_name());
