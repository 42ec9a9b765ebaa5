// SPDX-License-Identifier: Apache-2.0
// The unit-stride 1x1 convolution on the GEMM (src/ops/conv/conv_gemm.cpp): which problems
// its table rows take, and its results against the reference on hand-picked and seeded random
// shapes (1-D, 2-D, 3-D, odd channels, rows that leave partial register blocks and panels;
// bias, sum and relu), on 1 and 2 threads, on small-integer data that keeps every f32 sum exact.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "conv_jit_util.hpp"
#include "core/machine_model.hpp"

using namespace blockdnn;
using namespace conv_test;

namespace {

using ft = format_tag;

// The row name under `level`.
std::string gemm_row(isa level) { return std::string("jit:") + to_string(level) + ":gemm_1x1"; }

tensor int_tensor(const tensor_desc &d, unsigned seed, int range) {
    tensor t(d);
    fill_int(t, seed, range);
    return t;
}

// An op created with its weights (oihw family) and bias, channels-last src and dst.
conv_fwd held_op(const conv_desc &d, const tensor &wei, const post_ops &po = {}, const tensor &bia = {}) {
    return conv_fwd(d, nxc_act_tag(d.ndims), wei, bia, nxc_act_tag(d.ndims), po);
}

// Runs d through the row of `level` on 1 and 2 threads and compares with the reference.
void check_against_reference(const conv_desc &d, isa level, const post_ops &po, unsigned seed) {
    const int nd = d.ndims;
    const tensor wei = int_tensor(tensor_desc(d.wei_dims(false), plain_wei_tag(nd, false)), seed, 2);
    const tensor src = int_tensor(tensor_desc(d.src_dims(), nxc_act_tag(nd)), seed + 1, 3);
    const tensor dst_old = int_tensor(tensor_desc(d.dst_dims(), nxc_act_tag(nd)), seed + 2, 5);
    const tensor bia = d.with_bias ? int_tensor(tensor_desc(d.bia_dims(), ft::x), seed + 3, 4) : tensor();
    const std::vector<float> wei0(wei.f32(), wei.f32() + wei.desc().size_bytes() / 4);
    const tensor want = copy_of(dst_old);
    {
        isa_guard g;
        set_max_isa(isa::scalar);
        conv_fwd(d, nxc_act_tag(nd), plain_wei_tag(nd, false), nxc_act_tag(nd), po).execute(src, wei, bia, want);
    }
    isa_guard g;
    set_max_isa(level);
    const conv_fwd op = held_op(d, wei, po, bia);
    ASSERT_EQ(op.impl_name(), gemm_row(level)) << d.str();
    for (int nthr : {1, 2}) {
        set_num_threads(nthr);
        const tensor got = copy_of(dst_old);
        op.execute(src, tensor(), tensor(), got);
        reset_num_threads();
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.desc().size_bytes()), 0)
                << to_string(level) << " " << d.str() << " " << po.str() << ", " << nthr << " threads";
    }
    EXPECT_EQ(std::memcmp(wei.data(), wei0.data(), wei.desc().size_bytes()), 0) << "the caller's weights changed";
}

std::vector<isa> jit_isas() {
    std::vector<isa> v;
    for (isa level : {isa::avx512_core, isa::avx2})
        if (detected_isa() >= level) v.push_back(level);
    return v;
}

} // namespace

TEST(ConvGemm1x1, TakesHeldUnitStride1x1OnChannelsLast) {
    const conv_desc d = parse_conv_desc("mb2ic64ih9iw8oc128oh9ow8kh1kw1ph0pw0");
    const tensor wei(tensor_desc(d.wei_dims(false), ft::oihw));
    for (isa level : jit_isas()) {
        isa_guard g;
        set_max_isa(level);
        EXPECT_EQ(held_op(d, wei).impl_name(), gemm_row(level));
        EXPECT_EQ(held_op(d, wei, post_ops().append_sum(0.5f)).impl_name(), gemm_row(level));
        // src or dst left as any takes the other's channels-last layout.
        const conv_fwd dst_any(d, ft::nhwc, wei, tensor(), ft::any);
        EXPECT_EQ(dst_any.impl_name(), gemm_row(level));
        EXPECT_EQ(dst_any.dst_desc().tag(), ft::nhwc);
        const conv_fwd src_any(d, ft::any, wei, tensor(), ft::nhwc);
        EXPECT_EQ(src_any.impl_name(), gemm_row(level));
        EXPECT_EQ(src_any.src_desc().tag(), ft::nhwc);
        EXPECT_EQ(held_op(d, wei, post_ops().append_eltwise(eltwise_alg::relu)).impl_name(), gemm_row(level));
        EXPECT_EQ(held_op(d, wei, post_ops().append_sum(1.f).append_eltwise(eltwise_alg::relu)).impl_name(),
                gemm_row(level));
        conv_desc biased = d;
        biased.with_bias = true;
        EXPECT_EQ(held_op(biased, wei, post_ops().append_eltwise(eltwise_alg::relu), tensor(tensor_desc({128}, ft::x)))
                          .impl_name(),
                gemm_row(level));
    }
}

TEST(ConvGemm1x1, LeavesOtherProblemsToTheDirectKernel) {
    const conv_desc d = parse_conv_desc("mb2ic64ih9iw8oc128oh9ow8kh1kw1ph0pw0");
    const tensor wei(tensor_desc(d.wei_dims(false), ft::oihw));
    auto with = [&](const char *text) { return parse_conv_desc(text); };
    for (isa level : jit_isas()) {
        isa_guard g;
        set_max_isa(level);
        const std::string row = gemm_row(level);
        // Weights per call, src and dst both left as any, blocked layouts.
        EXPECT_NE(conv_fwd(d, ft::nhwc, ft::oihw, ft::nhwc).impl_name(), row);
        EXPECT_NE(conv_fwd(d, ft::nhwc, ft::any, ft::nhwc).impl_name(), row);
        EXPECT_NE(conv_fwd(d, ft::any, wei, tensor(), ft::any).impl_name(), row);
        EXPECT_NE(conv_fwd(d, ft::nChw16c, wei, tensor(), ft::any).impl_name(), row);
        EXPECT_NE(conv_fwd(d, ft::nChw16c, wei, tensor(), ft::nChw16c).impl_name(), row);
        EXPECT_NE(held_op(d, tensor(tensor_desc(d.wei_dims(false), ft::hwio))).impl_name(), row);
        EXPECT_NE(held_op(d, tensor(tensor_desc(d.wei_dims(false), ft::OIhw16i16o))).impl_name(), row);
        // An eltwise post-op other than relu, a leaky relu, a relu before another post-op, a sum
        // with scale 0.
        EXPECT_NE(held_op(d, wei, post_ops().append_eltwise(eltwise_alg::relu, 0.1f)).impl_name(), row);
        EXPECT_NE(held_op(d, wei, post_ops().append_eltwise(eltwise_alg::tanh)).impl_name(), row);
        EXPECT_NE(held_op(d, wei, post_ops().append_eltwise(eltwise_alg::relu).append_sum(1.f)).impl_name(), row);
        EXPECT_NE(held_op(d, wei, post_ops().append_eltwise(eltwise_alg::relu).append_eltwise(eltwise_alg::relu))
                          .impl_name(),
                row);
        EXPECT_NE(held_op(d, wei, post_ops().append_sum(0.f)).impl_name(), row);
        // Not a unit-stride 1x1 without padding and groups; too few rows or output channels.
        for (const char *text : {"mb2ic64ih17iw16oc128oh9ow8kh1kw1sh2sw2ph0pw0",
                     "mb2ic64ih9iw8oc128oh11ow10kh1kw1ph1pw1", "mb2ic64ih9iw8oc128oh9ow8kh3kw3ph1pw1",
                     "mb1ic64ih7iw18oc128oh7ow18kh1kw1ph0pw0", "mb2ic64ih9iw8oc112oh9ow8kh1kw1ph0pw0"}) {
            const conv_desc o = with(text);
            EXPECT_NE(held_op(o, tensor(tensor_desc(o.wei_dims(false), ft::oihw))).impl_name(), row) << text;
        }
        const conv_desc grouped = with("g2mb2ic64ih9iw8oc128oh9ow8kh1kw1ph0pw0");
        EXPECT_NE(
                conv_fwd(grouped, ft::nhwc, tensor(tensor_desc(grouped.wei_dims(true), ft::goihw)), tensor(), ft::nhwc)
                        .impl_name(),
                row);
    }
}

// Partial register blocks and panels: oc 128-200 (129, 130, 200: not a multiple of a panel), ic odd
// or 1, rows not a multiple of the row block; 1-D and 3-D; ic past AVX-512's K chunk (1024):
// two chunks, the last a tail (1101), and three even ones (2100), where the epilogue runs on
// the last chunk only (tests/jit/test_brgemm.cpp chunks AVX2's too); bias, sum and relu.
TEST(ConvGemm1x1, MatchesTheReferenceOnHandPickedShapes) {
    const char *const shapes[] = {"mb1ic64ih16iw8oc128oh16ow8kh1kw1ph0pw0", "mb1ic17ih13iw11oc129oh13ow11kh1kw1ph0pw0",
            "mb3ic1ih7iw7oc200oh7ow7kh1kw1ph0pw0", "mb1ic300ih11iw12oc130oh11ow12kh1kw1ph0pw0",
            "mb2ic33iw131oc144ow131kw1pw0", "mb1ic20id3ih7iw7oc136od3oh7ow7kd1kh1kw1pd0ph0pw0",
            "mb1ic1101ih12iw11oc130oh12ow11kh1kw1ph0pw0", "mb1ic2100ih8iw16oc128oh8ow16kh1kw1ph0pw0"};
    for (isa level : jit_isas()) {
        unsigned seed = 1;
        for (const char *text : shapes) {
            const conv_desc d = parse_conv_desc(text);
            check_against_reference(d, level, {}, seed++);
            check_against_reference(d, level, post_ops().append_sum(1.f), seed++);
            check_against_reference(d, level, post_ops().append_sum(0.5f).append_eltwise(eltwise_alg::relu), seed++);
            conv_desc biased = d;
            biased.with_bias = true;
            check_against_reference(biased, level, post_ops().append_eltwise(eltwise_alg::relu), seed++);
            check_against_reference(
                    biased, level, post_ops().append_sum(1.f).append_eltwise(eltwise_alg::relu), seed++);
        }
    }
}

TEST(ConvGemm1x1, MatchesTheReferenceOnSeededRandomShapes) {
    std::mt19937 gen(2026);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
    for (isa level : jit_isas()) {
        for (int i = 0; i < 8; ++i) {
            conv_desc d;
            d.ndims = 4;
            d.mb = pick(1, 3);
            d.ic = pick(1, 160);
            d.oc = pick(128, 260);
            d.ih = d.oh = pick(1, 20);
            d.iw = d.ow = pick(1, 20);
            if (d.mb * d.oh * d.ow < 128) d.iw = d.ow = 128 / (d.mb * d.oh) + 1;
            d.with_bias = i % 2 == 1;
            post_ops po;
            if (i % 3 == 0) po.append_sum(2.f);
            if (i % 4 < 2) po.append_eltwise(eltwise_alg::relu);
            check_against_reference(d, level, po, 100 + static_cast<unsigned>(i));
        }
    }
}

// A dst larger than the last-level cache the threads may count on (a model with 16 KiB of it
// pinned) is stored non-temporally where nothing reads it first (no sum), the bias and relu on
// the GEMM's epilogue: the same values as the reference, and the streaming plan in the op's
// info. The caller's dst is a fresh tensor, so on a cache line (tensors are 64-byte aligned).
TEST(ConvGemm1x1, StreamsADstPastTheLastLevelCache) {
    impl::machine_model_t m;
    m.l3_share_bytes = 16 << 10;
    m.cores = 1;
    const impl::machine_model_override_t pin {m};
    conv_desc d = parse_conv_desc("mb2ic40ih9iw8oc144oh9ow8kh1kw1ph0pw0");
    for (isa level : jit_isas()) {
        {
            isa_guard g;
            set_max_isa(level);
            const tensor wei = int_tensor(tensor_desc(d.wei_dims(false), plain_wei_tag(4, false)), 1, 2);
            EXPECT_NE(held_op(d, wei).impl_info().find("stream_c"), std::string::npos);
        }
        check_against_reference(d, level, {}, 1);
        conv_desc biased = d;
        biased.with_bias = true;
        check_against_reference(biased, level, post_ops().append_eltwise(eltwise_alg::relu), 2);
        check_against_reference(biased, level, post_ops().append_sum(1.f), 3);
    }
}
