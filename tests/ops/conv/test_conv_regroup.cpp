// SPDX-License-Identifier: Apache-2.0
// Grouped convolutions with groups narrower than the channel blocks, run merged into wider
// groups with block-diagonal weights (jit:regroup, src/ops/conv/conv_regroup.cpp): which
// problems the row takes, and their results against the reference through the public API,
// bit for bit on small-integer data, with the caller's tensors untouched but dst.
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "ops/conv/conv_jit_util.hpp"

using namespace conv_test;
using ft = format_tag;

namespace {

// The ISA caps this CPU has among the JIT ones.
std::vector<isa> jit_levels() {
    std::vector<isa> v;
    for (isa level : {isa::avx512_core, isa::avx2})
        if (!isa_missing(level)) v.push_back(level);
    return v;
}

format_tag act_tag(int ndims, int pick) {
    switch (pick) {
    case 0: return ft::any;
    case 1: return blocked_act_tag(ndims, 16);
    case 2: return blocked_act_tag(ndims, 8);
    case 3: return plain_act_tag(ndims);
    default: return nxc_act_tag(ndims);
    }
}

} // namespace

// Hand-picked shapes: ResNeXt's 32 groups of 4, 2 and 3 -> 5 channels a group, strided, strides
// above the kernel, big pads, dilation, 1x1, a merge into a single group, 1-D and 3-D, and
// groups no merge for blocks divides, run as one group (g4 of 3 -> 5, g3 of 2). Each in
// every activation layout (blocked by 16 and 8, plain, channels-last, any) and two pairs of
// layouts that differ (channels-last with blocked), with bias, a sum and relu, weights per
// call, held, and given in a blocked layout. jit:regroup takes each.
TEST(ConvRegroup, HandPickedMatchReference) {
    const char *descs[] = {"g32mb2ic128ih9oc128oh9kh3ph1", "g8mb1ic16ih7oc16oh7kh3ph1", "g16mb2ic48ih7oc80oh7kh3ph1",
            "g8mb1ic32ih11oc32oh5kh3sh2ph1", "g4mb1ic8ih9oc8oh3kh1sh3ph0", "g8mb1ic32ih5oc32oh11kh3ph4",
            "g8mb1ic32ih9oc32oh5kh3dh1", "g32mb2ic128ih7oc256oh7kh1", "g8mb2ic32iw17oc32ow17kw3pw1",
            "g16mb1ic64id5ih5iw5oc64od5oh5ow5kd3kh3kw3pd1ph1pw1", "g4mb2ic12ih9oc20oh9kh3ph1",
            "g3mb1ic6id6ih5iw5oc6od3oh5ow5kd3kh3kw3sd2pd1ph1pw1"};
    const std::vector<isa> levels = jit_levels();
    if (levels.empty()) GTEST_SKIP() << "no avx2";
    for (isa level : levels)
        for (const char *text : descs)
            for (int layout = 0; layout < 7; ++layout)
                for (int variant = 0; variant < 4; ++variant) {
                    conv_case_t k;
                    k.d = parse_conv_desc(text);
                    k.d.with_bias = variant > 0;
                    if (variant == 2) k.po.append_sum(0.5f).append_eltwise(eltwise_alg::relu);
                    // The last two: channels-last with blocked, either way round.
                    k.src_tag = act_tag(k.d.ndims, layout == 5 ? 4 : layout == 6 ? 2 : layout);
                    k.dst_tag = act_tag(k.d.ndims, layout == 5 ? 1 : layout == 6 ? 4 : layout);
                    k.wei_tag =
                            variant == 3 ? impl::direct_wei_tag(k.d.ndims, true, 8) : plain_wei_tag(k.d.ndims, true);
                    EXPECT_EQ(check_through_api(k, level, variant == 1, 60 + variant), "jit:regroup") << k.str();
                }
}

// Seeded random groups of 2 to 15 channels (none a multiple of 8), each side its own count,
// g a multiple of the groups merged for blocks of 8 or 16, random spatial shapes and post-ops.
TEST(ConvRegroup, SeededRandomMatchReference) {
    const std::vector<isa> levels = jit_levels();
    if (levels.empty()) GTEST_SKIP() << "no avx2";
    std::mt19937 gen(20261206);
    auto rnd = [&](dim_t lo, dim_t hi) { return std::uniform_int_distribution<dim_t>(lo, hi)(gen); };
    auto narrow = [&] {
        dim_t c = rnd(2, 15);
        return c == 8 ? 7 : c;
    };
    for (int t = 0; t < 40; ++t) {
        // The shape of a random case, with narrow groups.
        conv_case_t k = random_case(gen, 8, 1 << 19);
        const dim_t icg = narrow(), ocg = narrow(), blk = rnd(0, 1) ? 8 : 16;
        const dim_t merge = std::lcm(blk / std::gcd(blk, icg), blk / std::gcd(blk, ocg));
        k.d.g = merge * rnd(1, 2);
        k.d.ic = k.d.g * icg;
        k.d.oc = k.d.g * ocg;
        k.d.mb = rnd(1, 2);
        k.wei_tag = plain_wei_tag(k.d.ndims, true);
        k.src_tag = k.dst_tag = act_tag(k.d.ndims, static_cast<int>(rnd(0, 4)));
        for (isa level : levels) EXPECT_EQ(check_through_api(k, level, t % 3 == 0, 200 + t), "jit:regroup") << k.str();
    }
}

// What the row leaves to others: groups that fill blocks of 16 already (the kernels' own
// rows), and more than 16 groups that no merge for blocks divides (the reference); groups of
// 8 on layouts blocked by 16 it merges. impl_info names the merge.
TEST(ConvRegroup, TakesOnlyNarrowGroupsItCanMerge) {
    const std::vector<isa> levels = jit_levels();
    if (levels.empty()) GTEST_SKIP() << "no avx2";
    for (isa level : levels) {
        isa_guard g;
        set_max_isa(level);
        const conv_fwd merged(parse_conv_desc("g32mb1ic128ih9oc128oh9kh3ph1"), ft::any, ft::goihw, ft::any);
        EXPECT_EQ(std::string(merged.impl_name()), "jit:regroup");
        EXPECT_NE(merged.impl_info().find("g32 of 4 -> 4 channels as g16 of 8 -> 8"), std::string::npos)
                << merged.impl_info();
        // Groups of 16 fill every block: the row itself refuses them, on every layout.
        for (format_tag act : {ft::nChw16c, ft::nChw8c, ft::nhwc, ft::nchw}) {
            conv_case_t wide;
            wide.d = parse_conv_desc("g2mb1ic32ih9oc32oh9kh3ph1");
            wide.src_tag = wide.dst_tag = act;
            wide.wei_tag = ft::goihw;
            std::unique_ptr<impl::conv_impl_t> impl;
            std::string why;
            EXPECT_EQ(impl::create_conv_fwd_regroup(make_prb(wide), impl, why), status::unimplemented) << wide.str();
            EXPECT_EQ(why, "the groups fill whole channel blocks") << wide.str();
        }
        // Groups of 8 on layouts blocked by 16: two merged, under either cap.
        const conv_fwd eights(parse_conv_desc("g4mb1ic32ih9oc32oh9kh3ph1"), ft::nChw16c, ft::goihw, ft::nChw16c);
        EXPECT_EQ(std::string(eights.impl_name()), "jit:regroup");
        EXPECT_NE(eights.impl_info().find("g4 of 8 -> 8 channels as g2 of 16 -> 16"), std::string::npos)
                << eights.impl_info();
        const conv_fwd one(parse_conv_desc("g4mb2ic12ih9oc20oh9kh3ph1"), ft::any, ft::goihw, ft::any);
        EXPECT_NE(one.impl_info().find("g4 of 3 -> 5 channels as g1 of 12 -> 20"), std::string::npos)
                << one.impl_info();
        // 3 channels: 8 groups merged fill blocks of 8, 16 blocks of 16, and neither divides
        // g = 20, too many to run as one.
        conv_case_t k;
        k.d = parse_conv_desc("g20mb2ic60ih9oc60oh9kh3ph1");
        k.src_tag = k.dst_tag = ft::any;
        k.wei_tag = ft::goihw;
        EXPECT_EQ(check_through_api(k, level, false, 9), "ref") << k.str();
    }
}

// An Inf and a NaN in src reach only their own group's outputs, as in the reference: merged
// groups would multiply them by the zeros between the groups (0 x Inf is NaN), so such a src
// runs the reference. Weights per call and held; a merge into one group too.
TEST(ConvRegroup, NonFiniteSrcStaysInItsGroup) {
    const std::vector<isa> levels = jit_levels();
    if (levels.empty()) GTEST_SKIP() << "no avx2";
    for (isa level : levels)
        for (const char *text : {"g32mb2ic128ih5oc128oh5kh3ph1", "g8mb1ic24ih5oc40oh5kh3ph1"})
            for (format_tag act : {ft::any, ft::nchw})
                for (bool held : {false, true}) {
                    const conv_desc d = parse_conv_desc(text);
                    SCOPED_TRACE(std::string(text) + " " + to_string(act) + (held ? " held" : "") + " on "
                            + to_string(level));
                    const tensor wei(tensor_desc(d.wei_dims(true), ft::goihw));
                    fill_int(wei, 5, 2);
                    isa_guard g;
                    set_max_isa(level);
                    const conv_fwd op = held ? conv_fwd(d, act, wei, tensor(), act) : conv_fwd(d, act, ft::goihw, act);
                    ASSERT_EQ(std::string(op.impl_name()), "jit:regroup");
                    const tensor src(op.src_desc()), dst(op.dst_desc()), ref(op.dst_desc());
                    fill_int(src, 6, 3);
                    const dim_t inf_at[4] = {0, 0, 0, 0}, nan_at[4] = {0, 2 * d.ic / d.g, 2, 2}; // groups 0 and 2
                    src.f32()[src.desc().offset(inf_at)] = INFINITY;
                    src.f32()[src.desc().offset(nan_at)] = NAN;
                    if (held) op.execute(src, dst);
                    else op.execute(src, wei, tensor(), dst);
                    set_max_isa(isa::scalar);
                    conv_fwd(d, src.desc().tag(), ft::goihw, dst.desc().tag()).execute(src, wei, tensor(), ref);
                    dim_t bad = 0, non_finite = 0;
                    for_each_index(dst.desc(), [&](const dim_t *idx) {
                        const dim_t o = dst.desc().offset(idx);
                        const float got = dst.f32()[o], want = ref.f32()[o];
                        non_finite += !std::isfinite(got);
                        const bool group1 = idx[1] / (d.oc / d.g) == 1; // no non-finite input
                        if (!(got == want || (std::isnan(got) && std::isnan(want))) || (group1 && !std::isfinite(got)))
                            if (bad++ == 0)
                                ADD_FAILURE()
                                        << "dst differs at channel " << idx[1] << ": " << got << ", reference " << want;
                    });
                    EXPECT_EQ(bad, 0);
                    EXPECT_GT(non_finite, 0); // the Inf and the NaN reached their own groups' outputs
                }
}
