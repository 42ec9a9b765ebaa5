// SPDX-License-Identifier: Apache-2.0
// The public shape of the ops: eltwise_desc (validation, text form, the constructor taking it),
// and for each op, execute(const <op>_args &) against the positional execute: bitwise equal
// results, and the same error for a wrong tensor.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include <gtest/gtest.h>

#include "core/prb_parse.hpp"
#include "common/ref_util.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;
using namespace ref_test;
using ft = format_tag;

namespace {

bool same_bits(const tensor &a, const tensor &b) {
    return a.desc() == b.desc() && std::memcmp(a.data(), b.data(), a.desc().size_bytes()) == 0;
}

// Expects both calls to throw the same blockdnn::error (message and status), naming `what`.
void expect_same_error(const char *what, const std::function<void()> &positional, const std::function<void()> &args) {
    std::string a, b;
    status sa = status::success, sb = status::success;
    try {
        positional();
    } catch (const error &e) {
        a = e.what();
        sa = e.code();
    }
    try {
        args();
    } catch (const error &e) {
        b = e.what();
        sb = e.code();
    }
    EXPECT_FALSE(a.empty()) << "the positional form did not throw";
    EXPECT_NE(a.find(what), std::string::npos) << a;
    EXPECT_EQ(a, b);
    EXPECT_EQ(sa, sb);
}

// A src -> dst op run through both forms on seeded src: the same bits in dst. Returns the
// positional run's dst.
template <class Args, class Op>
tensor expect_args_equal_positional(const Op &op, unsigned seed) {
    const tensor src(op.src_desc()), y1(op.dst_desc()), y2(op.dst_desc());
    fill_random(src, seed);
    op.execute(src, y1);
    op.execute(Args {src, y2});
    EXPECT_TRUE(same_bits(y1, y2));
    return y1;
}

// A src -> dst op given a wrong dst (`other`, the error naming `dst_what`) or a src without
// memory: the same error through both forms.
template <class Op>
void expect_src_dst_errors(const Op &op, const tensor &other, const char *dst_what) {
    const tensor src(op.src_desc()), dst(op.dst_desc());
    expect_same_error(
            dst_what, [&] { op.execute(src, other); },
            [&] {
                op.execute({src, other});
            });
    expect_same_error(
            "src tensor has no memory", [&] { op.execute(tensor(), dst); },
            [&] { op.execute({.src = {}, .dst = dst}); });
}

} // namespace

TEST(EltwiseDesc, ValidateNamesFieldValueAndRule) {
    eltwise_desc d;
    d.dims = {2, 3};
    d.validate();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto bad = [&](std::initializer_list<const char *> frags, auto change) {
        eltwise_desc e = d;
        change(e);
        expect_error(status::invalid_arguments, frags, [&] { e.validate(); });
        expect_error(status::invalid_arguments, frags, [&] { eltwise_fwd(e, ft::nc, ft::nc); });
    };
    bad({"eltwise_fwd: alg = 42 is not an eltwise_alg"}, [](eltwise_desc &e) { e.alg = static_cast<eltwise_alg>(42); });
    bad({"eltwise_fwd: desc is empty"}, [](eltwise_desc &e) { e.dims = {}; });
    bad({"dims has 7 entries", "1x1x1x1x1x1x1"}, [](eltwise_desc &e) { e.dims = dims_t(7, 1); });
    bad({"dims[1] = 0 must be positive"}, [](eltwise_desc &e) { e.dims = {2, 0}; });
    bad({"alpha = nan is not finite"}, [&](eltwise_desc &e) { e.alpha = nan; });
    bad({"beta = -inf is not finite"}, [](eltwise_desc &e) { e.beta = -INFINITY; });
    bad({"clip lower bound alpha = 1 exceeds upper bound beta = 0"}, [](eltwise_desc &e) {
        e.alg = eltwise_alg::clip;
        e.alpha = 1;
    });
}

TEST(EltwiseDesc, StrIsBenchdnnSyntaxAndParsesBack) {
    eltwise_desc d;
    d.alg = eltwise_alg::clip;
    d.alpha = -1.5f;
    d.beta = 0.1f;
    d.dims = {2, 17, 5, 5};
    EXPECT_EQ(d.str(), "--alg=clip --alpha=-1.5 --beta=0.1 2x17x5x5");
    format_tag tag = format_tag::undef;
    const eltwise_desc p = parse_eltwise_desc(d.str(), &tag);
    EXPECT_EQ(p.str(), d.str());
    EXPECT_EQ(p.beta, 0.1f);
    EXPECT_EQ(tensor_desc(p.dims, tag), tensor_desc({2, 17, 5, 5}, ft::nchw));
    eltwise_desc r;
    r.dims = {100};
    EXPECT_EQ(r.str(), "--alg=relu --alpha=0 --beta=0 100");
}

TEST(EltwiseDesc, ConstructorsAgreeAndTagsAreChecked) {
    eltwise_desc d;
    d.alg = eltwise_alg::elu;
    d.alpha = 0.5f;
    d.dims = {2, 17, 3, 3};
    const eltwise_fwd a(d, ft::nChw16c, ft::nChw16c);
    const tensor_desc td(d.dims, ft::nChw16c);
    const eltwise_fwd b(d.alg, d.alpha, d.beta, td);
    EXPECT_EQ(a.src_desc(), td);
    EXPECT_EQ(a.dst_desc(), td);
    EXPECT_EQ(a.desc().dims, td.dims());
    EXPECT_EQ(a.desc().str(), d.str());
    EXPECT_EQ(b.desc().str(), d.str());
    EXPECT_EQ(a.str(), b.str());
    EXPECT_STREQ(a.impl_name(), b.impl_name());
    const tensor src(td), ya(td), yb(td);
    fill_random(src, 7);
    a.execute(src, ya);
    b.execute(src, yb);
    EXPECT_TRUE(same_bits(ya, yb));
    expect_error(status::invalid_arguments, {"eltwise_fwd", "dst_tag = nchw", "src_tag = nChw16c"},
            [&] { eltwise_fwd(d, ft::nChw16c, ft::nchw); });
    expect_error(status::invalid_arguments, {"eltwise_fwd", "src", "nc"}, [&] { eltwise_fwd(d, ft::nc, ft::nc); });
}

// execute(const <op>_args &) against the positional forms, op by op: the same bits, and the
// same error for a tensor of the wrong layout or without memory.

TEST(OpArgs, EltwiseArgsEqualPositional) {
    eltwise_desc d;
    d.alg = eltwise_alg::gelu_erf;
    d.dims = {2, 17, 3, 3};
    const eltwise_fwd op(d, ft::nChw16c, ft::nChw16c);
    const tensor y1 = expect_args_equal_positional<eltwise_fwd_args>(op, 1);
    const tensor x(op.src_desc());
    fill_random(x, 1);
    op.execute({.src = x, .dst = x}); // in place
    EXPECT_TRUE(same_bits(x, y1));
}

TEST(OpArgs, EltwiseWrongTensorSameError) {
    const eltwise_fwd op(eltwise_alg::relu, 0.f, 0.f, tensor_desc({2, 17, 3, 3}, ft::nChw16c));
    expect_src_dst_errors(op, tensor(tensor_desc({2, 17, 3, 3}, ft::nchw)), "dst nchw:2x17x3x3");
}

TEST(OpArgs, SoftmaxArgsEqualPositional) {
    softmax_desc d;
    d.dims = {3, 19, 2, 5};
    d.axis = 1;
    const softmax_fwd op(d, ft::nChw8c, ft::nhwc);
    expect_args_equal_positional<softmax_fwd_args>(op, 2);
}

TEST(OpArgs, SoftmaxWrongTensorSameError) {
    softmax_desc d;
    d.dims = {3, 19};
    d.axis = 1;
    const softmax_fwd op(d, ft::nc, ft::nc);
    const tensor src(op.src_desc()), dst(op.dst_desc()), other(tensor_desc({3, 18}, ft::nc));
    expect_same_error(
            "dst", [&] { op.execute(src, other); },
            [&] {
                op.execute({src, other});
            });
    expect_same_error(
            "src", [&] { op.execute(other, dst); }, [&] { op.execute({.src = other, .dst = dst}); });
}

TEST(OpArgs, BinaryArgsEqualPositional) {
    binary_desc d;
    d.alg = binary_alg::mul;
    d.src0_dims = {2, 19, 3, 5};
    d.src1_dims = {1, 19, 1, 1};
    const binary_fwd op(d, ft::nChw16c, ft::nchw, ft::nhwc);
    const tensor s0(op.src0_desc()), s1(op.src1_desc()), y1(op.dst_desc()), y2(op.dst_desc());
    fill_random(s0, 3);
    fill_random(s1, 4);
    op.execute(s0, s1, y1);
    op.execute(binary_fwd_args {s0, s1, y2});
    EXPECT_TRUE(same_bits(y1, y2));
}

TEST(OpArgs, BinaryWrongTensorSameError) {
    const binary_fwd op(
            binary_alg::add, tensor_desc({2, 19}, ft::nc), tensor_desc({1, 19}, ft::nc), tensor_desc({2, 19}, ft::nc));
    const tensor s0(op.src0_desc()), s1(op.src1_desc()), dst(op.dst_desc()), other(tensor_desc({2, 19}, ft::nc));
    expect_same_error(
            "src1", [&] { op.execute(s0, other, dst); },
            [&] {
                op.execute({s0, other, dst});
            });
    expect_same_error(
            "src0 tensor has no memory", [&] { op.execute(tensor(), s1, dst); },
            [&] { op.execute({.src0 = {}, .src1 = s1, .dst = dst}); });
}

// eltwise, softmax and binary take the layouts they are given: format_tag::any is refused,
// naming the op and the role, as pool and inner_product do.

namespace {

// Expects make() to throw naming the op and the role given format_tag::any.
void expect_refuses_any(const char *op_role_is_any, const std::function<void()> &make) {
    expect_error(status::invalid_arguments, {op_role_is_any, "does not take"}, make);
}

} // namespace

TEST(OpArgs, EltwiseRefusesAnyTag) {
    eltwise_desc d;
    d.alg = eltwise_alg::relu;
    d.dims = {2, 17, 3, 3};
    expect_refuses_any("eltwise_fwd: src layout is any", [&] { eltwise_fwd(d, ft::any, ft::any); });
    expect_refuses_any("eltwise_fwd: dst layout is any", [&] { eltwise_fwd(d, ft::nchw, ft::any); });
}

TEST(OpArgs, SoftmaxRefusesAnyTag) {
    softmax_desc d;
    d.dims = {3, 19};
    d.axis = 1;
    expect_refuses_any("softmax_fwd: src layout is any", [&] { softmax_fwd(d, ft::any, ft::nc); });
    expect_refuses_any("softmax_fwd: dst layout is any", [&] { softmax_fwd(d, ft::nc, ft::any); });
}

TEST(OpArgs, BinaryRefusesAnyTag) {
    binary_desc d;
    d.alg = binary_alg::add;
    d.src0_dims = {2, 19};
    d.src1_dims = {1, 19};
    expect_refuses_any("binary_fwd: src0 layout is any", [&] { binary_fwd(d, ft::any, ft::nc, ft::nc); });
    expect_refuses_any("binary_fwd: src1 layout is any", [&] { binary_fwd(d, ft::nc, ft::any, ft::nc); });
    expect_refuses_any("binary_fwd: dst layout is any", [&] { binary_fwd(d, ft::nc, ft::nc, ft::any); });
}

TEST(OpArgs, PoolArgsEqualPositional) {
    const pool_desc d = parse_pool_desc("mb2ic19ih9kh3sh2ph1", pool_alg::avg_exclude_pad);
    const pool_fwd op(d, ft::nChw16c, ft::nChw16c);
    expect_args_equal_positional<pool_fwd_args>(op, 5);
}

TEST(OpArgs, PoolWrongTensorSameError) {
    const pool_desc d = parse_pool_desc("mb2ic19ih9kh3sh2ph1");
    const pool_fwd op(d, ft::nchw, ft::nchw);
    expect_src_dst_errors(op, tensor(tensor_desc(d.dst_dims(), ft::nhwc)), "dst");
}

TEST(OpArgs, InnerProductArgsEqualPositional) {
    inner_product_desc d = parse_ip_desc("mb3ic19ih3oc7");
    d.with_bias = true;
    const inner_product_fwd op(d, ft::nchw, ft::oihw);
    const tensor src(op.src_desc()), wei(op.wei_desc()), bia(op.bia_desc()), y1(op.dst_desc()), y2(op.dst_desc());
    fill_random(src, 6);
    fill_random(wei, 7);
    fill_random(bia, 8);
    op.execute(src, wei, bia, y1);
    op.execute(inner_product_fwd_args {src, wei, bia, y2});
    EXPECT_TRUE(same_bits(y1, y2));
    // Weights given at creation: wei and bia stay empty.
    const inner_product_fwd held(d, ft::nchw, wei, bia);
    const tensor h1(held.dst_desc()), h2(held.dst_desc());
    held.execute(src, h1);
    held.execute({.src = src, .dst = h2});
    EXPECT_TRUE(same_bits(h1, h2));
    EXPECT_TRUE(same_bits(h1, y1));
}

TEST(OpArgs, InnerProductWrongTensorSameError) {
    const inner_product_desc d = parse_ip_desc("mb3ic19ih3oc7");
    const inner_product_fwd op(d, ft::nchw, ft::oihw);
    const tensor src(op.src_desc()), wei(op.wei_desc()), dst(op.dst_desc());
    const tensor other(tensor_desc(d.wei_dims(), ft::hwio));
    expect_same_error(
            "wei", [&] { op.execute(src, other, dst); },
            [&] {
                op.execute({src, other, {}, dst});
            });
    expect_same_error(
            "execute(src, dst) needs weights given at creation", [&] { op.execute(src, dst); },
            [&] { op.execute({.src = src, .dst = dst}); });
    const inner_product_fwd held(d, ft::nchw, wei, tensor());
    expect_same_error(
            "this op holds the weights", [&] { held.execute(src, wei, dst); },
            [&] { held.execute({.src = src, .wei = wei, .dst = dst}); });
}

// Every op class is a blockdnn::primitive: code holding a `const primitive &` gets the queries
// every op answers, and a copy of an op shares its state.
TEST(Primitive, OpsAnswerThroughTheBase) {
    softmax_desc sd;
    sd.dims = {2, 5, 3};
    sd.axis = 1;
    const isa_guard g;
    set_max_isa(isa::scalar); // the reference, whose impl_info() is its name alone
    const softmax_fwd softmax(sd, ft::ncw, ft::nwc);
    const primitive &p = softmax;
    EXPECT_STREQ(p.impl_name(), "ref");
    EXPECT_EQ(p.impl_info(), "ref");
    EXPECT_EQ(p.str(), "axis:1 src:" + softmax.src_desc().str() + " dst:" + softmax.dst_desc().str());
    const softmax_fwd copy = softmax;
    EXPECT_EQ(&copy.desc(), &softmax.desc()); // the same state
    // An op is assigned only from its own kind, never through the base.
    static_assert(std::is_copy_assignable_v<softmax_fwd> && !std::is_copy_assignable_v<primitive>);
    softmax_fwd moved = copy;
    const softmax_fwd taker = std::move(moved);
    EXPECT_STREQ(taker.impl_name(), "ref");
    // NOLINTBEGIN(bugprone-use-after-move): what a moved-from op does is the point
    const std::initializer_list<const char *> moved_from {"moved from", "assign a created op"};
    expect_error(status::invalid_arguments, moved_from, [&] { (void)moved.impl_name(); });
    expect_error(status::invalid_arguments, moved_from, [&] { (void)moved.impl_info(); });
    expect_error(status::invalid_arguments, moved_from, [&] { (void)moved.str(); });
    expect_error(status::invalid_arguments, moved_from, [&] { (void)moved.src_desc(); });
    const tensor t(softmax.src_desc()), u(softmax.dst_desc());
    expect_error(status::invalid_arguments, moved_from, [&] { moved.execute(t, u); });
    // NOLINTEND(bugprone-use-after-move)

    const bnorm_fwd bnorm({bnorm_mode::training, tensor_desc({2, 3, 5, 5}, ft::nchw), {}, 1e-5f, bnorm_flags::none});
    rnn_desc rd;
    rd.cell = rnn_cell::lstm;
    rd.t = 2;
    rd.mb = 2;
    rd.slc = rd.dhc = 4;
    const rnn_fwd rnn(rd);
    for (const primitive *op : {static_cast<const primitive *>(&bnorm), static_cast<const primitive *>(&rnn)}) {
        EXPECT_STRNE(op->impl_name(), "");
        EXPECT_EQ(op->impl_info().rfind(op->impl_name(), 0), 0u) << op->impl_info(); // starts with the name
        EXPECT_FALSE(op->str().empty());
    }
}
