// SPDX-License-Identifier: Apache-2.0
// JIT forward convolutions on every problem of benchdnn's ResNet-50, GoogLeNet v1, MobileNet
// and 3-D lists at mb 1, against the reference, on each ISA this machine has, blocked and
// channels-last: small-integer data (exact f32 sums), bias and a relu, 1 and 2 thread parts
// with identical results.
#include <cstdio>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "conv_benchdnn_shapes.hpp"
#include "conv_jit_util.hpp"

using namespace blockdnn;
using namespace conv_test;

namespace {

// The logical values of t, canonical order.
std::vector<float> logical_of(const tensor &t) {
    std::vector<float> v;
    v.reserve(static_cast<std::size_t>(t.desc().nelems()));
    for_each_index(t.desc(), [&](const dim_t *idx) { v.push_back(t.f32()[t.desc().offset(idx)]); });
    return v;
}

// Sanitized builds run every 8th problem: the reference is slow there.
#if defined(__SANITIZE_ADDRESS__)
constexpr int problem_step = 8;
#else
constexpr int problem_step = 1;
#endif

// Checks every problem of one list.
void check_list(const conv_shapes::shape_list_t &list) {
    int failures = 0, skipped = 0;
    for (int i = 0; i < list.count && failures < 3; i += problem_step) {
        std::string name;
        conv_desc d = impl::parse_conv_desc(list.descs[i], &name);
        d.mb = 1;
        d.with_bias = true;
        const post_ops po = post_ops().append_eltwise(eltwise_alg::relu);
        const format_tag plain = plain_act_tag(d.ndims), wplain = plain_wei_tag(d.ndims, d.g > 1);
        const tensor src(tensor_desc(d.src_dims(), plain)), wei(tensor_desc(d.wei_dims(d.g > 1), wplain));
        const tensor bia(tensor_desc(d.bia_dims(), format_tag::x)), ref(tensor_desc(d.dst_dims(), plain));
        fill_int(src, 11u + static_cast<unsigned>(i), 3);
        fill_int(wei, 12u + static_cast<unsigned>(i), 2);
        fill_int(bia, 13u + static_cast<unsigned>(i), 4);
        {
            isa_guard g;
            set_max_isa(isa::scalar);
            conv_fwd(d, plain, wplain, plain, po).execute(src, wei, bia, ref);
        }
        const std::vector<float> want = logical_of(ref);
        for (auto [level, nxc] : {std::pair {isa::avx512_core, false}, {isa::avx2, false}, {isa::avx512_core, true},
                     {isa::avx2, true}}) {
            if (detected_isa() < level) continue;
            conv_case_t k;
            k.d = d;
            k.po = po;
            const int blk = level == isa::avx512_core ? 16 : 8;
            // Blocked: a first layer reads the plain input (first-layer kernel). Channels-last
            // src and dst go to the direct kernel, a first layer too (as an ic tail).
            k.src_tag = nxc ? nxc_act_tag(d.ndims) : d.ic <= 4 && d.g == 1 ? plain : blocked_act_tag(d.ndims, blk);
            k.dst_tag = nxc ? nxc_act_tag(d.ndims) : blocked_act_tag(d.ndims, blk);
            k.wei_tag = wplain;
            const impl::conv_prb_t prb = make_prb(k);
            std::unique_ptr<conv_fwd_jit_t> jit;
            std::string why;
            const status st = conv_fwd_jit_t::create(jit, prb, level, impl::conv_kernel_kind_for(d, k.src_tag), why);
            if (st != status::success) {
                // Not this kernel's problem (groups with per-group channels not a multiple of
                // the block): dispatch must fall to the reference. (Channels-last with 8 but
                // not 16 channels per group falls to the avx2 kernel instead.)
                isa_guard g;
                set_max_isa(level);
                const char *impl = conv_fwd(d, k.src_tag, k.wei_tag, k.dst_tag, po).impl_name();
                EXPECT_EQ(st, status::unimplemented) << why;
                const std::string got = impl;
                const bool to_avx2 = nxc && level == isa::avx512_core && got == "jit:avx2";
                EXPECT_TRUE(got == "ref" || to_avx2) << list.name << " " << name << " " << to_string(level) << ": "
                                                     << got << ": " << why;
                ++skipped;
                continue;
            }
            const tensor src_k = reorder(src, k.src_tag);
            // 1 and 2 threads of the library's pool.
            const tensor dst1(prb.dst), dst2(prb.dst);
            set_num_threads(1);
            jit->execute({src_k.f32(), wei.f32(), bia.f32(), dst1.f32()}); // plain weights: reordered per call
            set_num_threads(2);
            jit->execute({src_k.f32(), wei.f32(), bia.f32(), dst2.f32()});
            reset_num_threads();
            const bool same_threads = std::memcmp(dst1.data(), dst2.data(), dst1.desc().size_bytes()) == 0;
            const bool same_ref = logical_of(dst1) == want;
            if (!same_threads || !same_ref) {
                ++failures;
                ADD_FAILURE() << list.name << " " << name << " " << list.descs[i] << " " << to_string(level)
                              << (nxc ? " channels-last" : "") << ": "
                              << (same_ref ? "" : "differs from the reference; ")
                              << (same_threads ? "" : "1 and 2 threads differ; ") << impl::to_string(jit->conf());
            }
        }
    }
    if (skipped)
        std::printf("%s: %d (problem, ISA, layout) triples this ISA's kernels leave to others\n", list.name, skipped);
}

class conv_jit_shapes : public ::testing::TestWithParam<int> {};

} // namespace

TEST_P(conv_jit_shapes, every_problem_at_mb1) { check_list(conv_shapes::lists[GetParam()]); }

INSTANTIATE_TEST_SUITE_P(benchdnn, conv_jit_shapes,
        ::testing::Range(0, static_cast<int>(sizeof(conv_shapes::lists) / sizeof(conv_shapes::lists[0]))),
        [](const ::testing::TestParamInfo<int> &info) {
            std::string n = conv_shapes::lists[info.param].name;
            for (char &ch : n)
                if (ch == '-') ch = '_';
            return n;
        });
