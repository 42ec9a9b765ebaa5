// SPDX-License-Identifier: Apache-2.0
// JIT forward convolution against a naive direct convolution: seeded random problems (1-D,
// 2-D, 3-D, strides, asymmetric padding, dilation, groups, channel tails, bias, post-ops) on
// each ISA and layout block, with forced register and cache blockings; exact compares on
// small-integer data, NaN in every padded channel; identical results for every thread split.
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "conv/conv_fwd_jit.hpp"
#include "conv/conv_prb_str.hpp"
#include "conv_jit_util.hpp"

using namespace blockdnn;
using namespace conv_test;
using blockdnn::impl::conv_conf_hint_t;
using blockdnn::impl::conv_conf_t;
using blockdnn::impl::conv_fwd_jit_t;

namespace {

struct outcome_t {
    bool ok = true;
    std::string what;
};

// Runs one problem (layout tags set) through the JIT kernel and the naive convolution and
// compares exactly.
outcome_t run_case(const conv_prb_t &p, isa level, const conv_conf_hint_t &hint, unsigned seed) {
    std::unique_ptr<conv_fwd_jit_t> jit;
    std::string why;
    status st = conv_fwd_jit_t::create(jit, p, level, why, hint);
    if (st == status::unimplemented && (hint.ur_w > 0 || hint.nb_ic_blocking > 0 || hint.nb_oc_blocking > 0))
        st = conv_fwd_jit_t::create(jit, p, level, why); // the forced blocking did not fit
    if (st != status::success) return {false, "create failed: " + why + " for " + impl::to_string(p)};
    const std::string what = "conv/" + std::string(to_string(level)) + "/" + impl::to_string(p) + " ["
            + impl::to_string(jit->conf()) + "]";
    if (jit->conf().kind != impl::conv_kernel_kind_for(p)) return {false, what + ": wrong kernel kind"};

    const tensor src_p(tensor_desc(src_dims(p), plain_act_tag(p.ndims)));
    const tensor wei_p(tensor_desc(wei_dims(p), plain_wei_tag(p.ndims, p.g > 1)));
    const tensor dst_p(tensor_desc(dst_dims(p), plain_act_tag(p.ndims)));
    fill_int(src_p, seed, 3);
    fill_int(wei_p, seed + 1, 2);
    fill_int(dst_p, seed + 2, 5);
    std::vector<float> bia(static_cast<std::size_t>(p.oc));
    for (std::size_t i = 0; i < bia.size(); ++i) bia[i] = static_cast<float>(static_cast<int>((i * 7 + seed) % 9) - 4);

    const tensor src_b = reorder(src_p, p.src_tag);
    const tensor wei_b = jit->prepare_weights(wei_p);
    const tensor dst_b = reorder(dst_p, p.dst_tag);
    if (is_blocked(p.src_tag)) poison_padding(src_b);
    poison_padding(dst_b);
    const tensor dst_b2 = reorder(dst_p, p.dst_tag);
    poison_padding(dst_b2);

    const float *bp = p.with_bias ? bia.data() : nullptr;
    jit->execute_part(src_b.f32(), wei_b.f32(), bp, dst_b.f32(), 0, 1);
    for (int ithr = 0; ithr < 3; ++ithr) jit->execute_part(src_b.f32(), wei_b.f32(), bp, dst_b2.f32(), ithr, 3);
    naive_conv(p, src_p.f32(), wei_p.f32(), bp, dst_p.f32());

    if (std::memcmp(dst_b.data(), dst_b2.data(), dst_b.desc().size_bytes()) != 0)
        return {false, what + ": results differ between 1 and 3 thread parts"};
    const tensor_desc &bd = dst_b.desc(), &pd = dst_p.desc();
    std::vector<char> logical(static_cast<std::size_t>(bd.nelems_padded()), 0);
    outcome_t out;
    for_each_index(pd, [&](const dim_t *idx) {
        const dim_t ob = bd.offset(idx);
        logical[static_cast<std::size_t>(ob)] = 1;
        const float got = dst_b.f32()[ob], want = dst_p.f32()[pd.offset(idx)];
        // By value: relu gives +0 where the reference's alpha * x gives -0.
        if (out.ok && !(got == want || (std::isnan(got) && std::isnan(want)))) {
            out = {false, what + ": mismatch at n=" + std::to_string(idx[0]) + " c=" + std::to_string(idx[1])
                            + " last=" + std::to_string(idx[pd.ndims() - 1]) + ": got " + std::to_string(got)
                            + " want " + std::to_string(want)};
        }
    });
    for (std::size_t i = 0; out.ok && i < logical.size(); ++i)
        if (!logical[i] && dst_b.f32()[i] != 0.f) out = {false, what + ": padded channel not zero"};
    return out;
}

bool isa_missing(isa level) { return detected_isa() < level; }

// Random problems with random forced blockings; `count` problems, seeds printed on failure.
void random_sweep(isa level, int blk, int count, unsigned seed0, prb_kind kind = prb_kind::direct) {
    std::mt19937 gen(seed0);
    int failures = 0;
    for (int t = 0; t < count && failures < 5; ++t) {
        const conv_prb_t p = random_prb(gen, blk, 400000, kind);
        conv_conf_hint_t hint;
        if (gen() % 2) hint.ur_w = static_cast<int>(gen() % 8) + 1;
        if (gen() % 3 == 0) hint.nb_ic_blocking = static_cast<int>(gen() % 3) + 1;
        if (level == isa::avx512_core && kind != prb_kind::depthwise) hint.bcast_embedded = static_cast<int>(gen() % 2);
        const outcome_t r = run_case(p, level, hint, seed0 + static_cast<unsigned>(t));
        if (!r.ok) {
            ++failures;
            ADD_FAILURE() << "case " << t << " (seed " << seed0 << "): " << r.what;
        }
    }
}

} // namespace

TEST(conv_jit, random_avx512_core_nChw16c) {
    if (isa_missing(isa::avx512_core)) GTEST_SKIP() << "no avx512_core";
    random_sweep(isa::avx512_core, 16, 400, 1000);
}

TEST(conv_jit, random_avx2_nChw8c) {
    if (isa_missing(isa::avx2)) GTEST_SKIP() << "no avx2";
    random_sweep(isa::avx2, 8, 400, 2000);
}

TEST(conv_jit, random_avx2_nChw16c) {
    if (isa_missing(isa::avx2)) GTEST_SKIP() << "no avx2";
    random_sweep(isa::avx2, 16, 300, 3000);
}

TEST(conv_jit, first_layer_random) {
    for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}, {isa::avx2, 16}}) {
        if (isa_missing(level)) continue;
        random_sweep(level, blk, 150, 4000 + blk + static_cast<unsigned>(level), prb_kind::first);
    }
}

TEST(conv_jit, depthwise_random) {
    for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}, {isa::avx2, 16}}) {
        if (isa_missing(level)) continue;
        random_sweep(level, blk, 150, 5000 + blk + static_cast<unsigned>(level), prb_kind::depthwise);
    }
}

// The distinct ResNet-50 layers (benchdnn shapes_resnet_50) at mb 1, every ISA and block.
TEST(conv_jit, resnet_50_mb1) {
    static const char *descs[] = {
            "mb1ic64ih56oc256oh56kh1ph0n\"res2a_branch1\"",
            "mb1ic64ih56oc64oh56kh3ph1n\"res2a_branch2b\"",
            "g1mb1ic256ih56iw56oc128oh28ow28kh1kw1sh2sw2ph0pw0n\"res3a_branch2a\"",
            "mb1ic128ih28oc128oh28kh3ph1n\"res3a_branch2b\"",
            "mb1ic256ih14oc256oh14kh3ph1n\"res4a_branch2b\"",
            "mb1ic512ih7oc512oh7kh3ph1n\"res5a_branch2b\"",
            "g1mb1ic1024ih14iw14oc512oh7ow7kh1kw1sh2sw2ph0pw0n\"res5a_branch2a\"",
    };
    unsigned seed = 77;
    for (const char *d : descs)
        for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}}) {
            if (isa_missing(level)) continue;
            conv_prb_t p;
            std::string name, why;
            ASSERT_TRUE(impl::parse_conv_prb(d, p, name, why)) << why;
            p.with_bias = true;
            p.post_ops = {{impl::conv_post_op_t::kind::eltwise, eltwise_alg::relu}};
            p.src_tag = p.dst_tag = blocked_act_tag(p.ndims, blk);
            const outcome_t r = run_case(p, level, {}, seed++);
            EXPECT_TRUE(r.ok) << name << ": " << r.what;
        }
}

TEST(conv_jit_conf, strides_match_tensor_desc) {
    std::mt19937 gen(5);
    for (int t = 0; t < 50; ++t) {
        conv_prb_t p = random_prb(gen, 16, 1 << 30);
        for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}}) {
            p.src_tag = p.dst_tag = blocked_act_tag(p.ndims, blk);
            conv_conf_t c;
            std::string why;
            ASSERT_EQ(impl::init_conf_conv_fwd_direct(c, p, level, why), status::success) << why;
            if (c.ow != p.ow) continue; // a 1x1 problem regrouped into longer rows
            const tensor_desc s(src_dims(p), p.src_tag), d(dst_dims(p), p.dst_tag), w(wei_dims(p), c.wei_tag);
            const int sp = p.ndims - 2;     // spatial dims
            const int wo = p.g > 1 ? 1 : 0; // weights: [g,] o, i, [d,] [h,] w
            EXPECT_EQ(s.stride(1), c.src_c_stride());
            EXPECT_EQ(s.stride(1 + sp), c.src_w_stride());
            if (sp >= 2) {
                EXPECT_EQ(s.stride(sp), c.src_h_stride());
                EXPECT_EQ(d.stride(sp), c.dst_h_stride());
                EXPECT_EQ(w.stride(wo + sp), c.wei_kh_stride());
            }
            if (sp == 3) {
                EXPECT_EQ(s.stride(2), c.src_d_stride());
            }
            EXPECT_EQ(d.stride(1), c.dst_c_stride());
            if (p.g > 1) {
                EXPECT_EQ(w.stride(0), c.wei_g_stride());
            }
            EXPECT_EQ(w.stride(wo), c.wei_ocb_stride());
            EXPECT_EQ(w.stride(wo + 1), c.wei_icb_stride());
            EXPECT_EQ(w.stride(wo + 1 + sp), c.wei_kw_stride());
        }
    }
}

TEST(conv_jit_conf, register_budget_holds) {
    std::mt19937 gen(6);
    for (int t = 0; t < 300; ++t) {
        conv_prb_t p = random_prb(gen, 16, 1 << 30);
        for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}, {isa::avx2, 16}}) {
            p.src_tag = p.dst_tag = blocked_act_tag(p.ndims, blk);
            conv_conf_t c;
            std::string why;
            ASSERT_EQ(impl::init_conf_conv_fwd_direct(c, p, level, why), status::success) << why;
            const int nvec = c.nb_oc_blocking * c.oc_vecs;
            EXPECT_LE(c.ur_w * nvec + std::max(nvec + (c.bcast_embedded ? 0 : 1), c.n_post_temps), c.n_vregs)
                    << impl::to_string(c);
            EXPECT_EQ(c.nb_oc % c.nb_oc_blocking, 0);
            EXPECT_EQ((c.nb_oc / c.nb_oc_blocking) % c.nb_oc_chunk, 0);
            EXPECT_EQ(c.ur_w_tail, (c.oh_block * c.ow) % c.ur_w);
            EXPECT_EQ(c.oh % c.oh_block, 0);
            EXPECT_EQ(c.simd_w * c.oc_vecs, c.oc_block);
        }
    }
}

TEST(conv_jit_conf, picks_blocks_of_the_isa) {
    conv_prb_t p;
    std::string name, why;
    ASSERT_TRUE(impl::parse_conv_prb("mb1ic64ih56oc64oh56kh3ph1", p, name, why)) << why;
    p.src_tag = p.dst_tag = format_tag::nChw16c;
    conv_conf_t c;
    ASSERT_EQ(impl::init_conf_conv_fwd_direct(c, p, isa::avx512_core, why), status::success) << why;
    EXPECT_EQ(c.simd_w, 16);
    EXPECT_EQ(c.oc_block, 16);
    EXPECT_EQ(c.wei_tag, format_tag::OIhw16i16o);
    EXPECT_GE(c.ur_w * c.nb_oc_blocking, 8); // enough accumulators to hide the FMA latency
    ASSERT_EQ(impl::init_conf_conv_fwd_direct(c, p, isa::avx2, why), status::success) << why;
    EXPECT_EQ(c.simd_w, 8);
    EXPECT_EQ(c.oc_vecs, 2);
    p.src_tag = p.dst_tag = format_tag::nChw8c;
    ASSERT_EQ(impl::init_conf_conv_fwd_direct(c, p, isa::avx2, why), status::success) << why;
    EXPECT_EQ(c.wei_tag, format_tag::OIhw8i8o);
    EXPECT_GE(c.ur_w * c.nb_oc_blocking * c.oc_vecs, 8);
}

TEST(conv_jit_conf, rejects_with_reason) {
    conv_prb_t p;
    std::string name, why;
    ASSERT_TRUE(impl::parse_conv_prb("g2mb1ic24ih8oc32oh8kh3ph1", p, name, why)) << why;
    conv_conf_t c;
    p.src_tag = p.dst_tag = format_tag::nChw16c;
    EXPECT_EQ(impl::init_conf_conv_fwd_direct(c, p, isa::avx512_core, why), status::unimplemented);
    EXPECT_NE(why.find("ic/g=12"), std::string::npos) << why;
    p.g = 1;
    p.src_tag = p.dst_tag = format_tag::nChw8c;
    EXPECT_EQ(impl::init_conf_conv_fwd_direct(c, p, isa::avx512_core, why), status::unimplemented);
    EXPECT_NE(why.find("nChw8c"), std::string::npos) << why;
    p.src_tag = p.dst_tag = format_tag::nchw;
    EXPECT_EQ(impl::init_conf_conv_fwd_direct(c, p, isa::avx2, why), status::unimplemented);
    EXPECT_NE(why.find("nchw"), std::string::npos) << why;
    p.src_tag = p.dst_tag = format_tag::nChw8c;
    p.post_ops = {{impl::conv_post_op_t::kind::eltwise, eltwise_alg::gelu_erf}};
    EXPECT_EQ(impl::init_conf_conv_fwd_direct(c, p, isa::avx2, why), status::unimplemented);
    EXPECT_NE(why.find("gelu_erf"), std::string::npos) << why;
}

TEST(conv_prb_str, benchdnn_rules) {
    conv_prb_t p;
    std::string name, why;
    ASSERT_TRUE(impl::parse_conv_prb("mb1ic64ih56oc64oh56kh3ph1n\"resnet_50:res2a_branch2b*3\"", p, name, why));
    EXPECT_EQ(name, "resnet_50:res2a_branch2b*3");
    EXPECT_EQ(p.ndims, 4);
    EXPECT_EQ(p.iw, 56);
    EXPECT_EQ(p.ow, 56);
    EXPECT_EQ(p.kw, 3);
    EXPECT_EQ(p.pw, 1);
    EXPECT_EQ(p.pw_r, 1);
    ASSERT_TRUE(impl::parse_conv_prb("ic16ih16oc16oh15kh3ph1nplain_name", p, name, why));
    EXPECT_EQ(name, "plain_name");
    EXPECT_EQ(p.mb, 2);
    EXPECT_EQ(p.ph_r, 0); // asymmetric: top 1, bottom 0
    ASSERT_TRUE(impl::parse_conv_prb("ic4iw100oc8kw5dw1pw2", p, name, why));
    EXPECT_EQ(p.ndims, 3);
    EXPECT_EQ(p.ow, 96 + 4 - 4);
    ASSERT_TRUE(impl::parse_conv_prb("mb1ic32id8oc16kd3pd1", p, name, why));
    EXPECT_EQ(p.ndims, 5);
    EXPECT_EQ(p.ih, 8);
    EXPECT_EQ(p.kw, 3);
    EXPECT_EQ(p.od, 8);
    EXPECT_FALSE(impl::parse_conv_prb("mb1ic32ix8oc16kh3", p, name, why));
    EXPECT_FALSE(impl::parse_conv_prb("mb1oc16ih8kh3", p, name, why));
}
