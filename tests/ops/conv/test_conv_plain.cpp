// SPDX-License-Identifier: Apache-2.0
// Convolutions on plain activations (nc[d]hw) through the JIT kernels, the activations
// reordered around them (jit:<isa>:plain, src/ops/conv/conv_plain.cpp): which problems the
// rows take, and their results against the reference through the public API, bit for bit on
// small-integer data, with the caller's tensors untouched but dst.
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/machine_model.hpp"
#include "ops/conv/conv_jit_util.hpp"

using namespace conv_test;

namespace {

std::string plain_row(isa level) { return std::string("jit:") + to_string(level) + ":plain"; }

} // namespace

// Hand-picked shapes on nc[d]hw src and dst (either may be left as any): 3x3 with padding,
// strided, large pads, strides above the kernel, 1x1 unit-stride and strided, the first layer
// (ic 3), depthwise, groups, odd channels, mb 1, 1-D and 3-D; bias, sum and relu; weights per
// call and held. Each runs on the plain row of its ISA, but a first layer with dst left as
// any, which the first-layer row takes.
TEST(ConvPlain, HandPickedMatchReference) {
    const char *descs[] = {"mb2ic16ih10oc32oh10kh3ph1", "mb1ic64ih14oc64oh7kh3sh2ph1", "mb2ic17ih9oc23oh9kh3ph1",
            "mb1ic24ih12oc40oh8kh3sh3ph4", "mb3ic32ih11oc48oh4kh1sh3ph0", "mb2ic48ih7oc80oh7kh1ph0",
            "mb2ic3ih30oc16oh15kh7sh2ph3", "g32mb2ic32ih9oc32oh9kh3ph1", "g2mb2ic32ih8oc64oh8kh3ph1",
            "mb2ic20iw31oc24ow31kw5pw2", "mb1ic16id6ih6iw6oc16od6oh6ow6kd3kh3kw3pd1ph1pw1"};
    const std::pair<format_tag, format_tag> any_sides[] = {{format_tag::undef, format_tag::undef},
            {format_tag::undef, format_tag::any}, {format_tag::any, format_tag::undef}};
    int n_checked = 0;
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (isa_missing(level)) continue;
        for (const char *text : descs)
            for (const auto &[s_any, d_any] : any_sides)
                for (int variant = 0; variant < 3; ++variant) {
                    conv_case_t k;
                    k.d = parse_conv_desc(text);
                    k.d.with_bias = variant > 0;
                    if (variant == 2) k.po.append_sum(0.5f).append_eltwise(eltwise_alg::relu);
                    const format_tag plain = plain_act_tag(k.d.ndims);
                    k.src_tag = s_any == format_tag::any ? s_any : plain;
                    k.dst_tag = d_any == format_tag::any ? d_any : plain;
                    k.wei_tag = plain_wei_tag(k.d.ndims, k.d.g > 1);
                    const std::string name = check_through_api(k, level, variant == 1, 40 + variant);
                    // With dst left as any, a first layer's plain src goes to the first-layer
                    // kernel, which picks its blocked dst.
                    if (d_any == format_tag::any && name != plain_row(level)) {
                        EXPECT_EQ(name, std::string("jit:") + to_string(level) + ":first") << k.str();
                    } else {
                        EXPECT_EQ(name, plain_row(level)) << k.str();
                    }
                    ++n_checked;
                }
    }
    if (n_checked == 0) GTEST_SKIP() << "no avx2";
}

// Seeded random problems of every kernel kind (the library's random JIT cases) on nc[d]hw src
// and dst: a JIT row takes each, and matches the reference.
TEST(ConvPlain, SeededRandomMatchReference) {
    std::mt19937 gen(77);
    int n_checked = 0;
    for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}}) {
        if (isa_missing(level)) continue;
        for (int t = 0; t < 24; ++t)
            for (prb_kind kind : {prb_kind::direct, prb_kind::first, prb_kind::depthwise}) {
                conv_case_t k = random_case(gen, blk, 1 << 20, kind);
                k.src_tag = k.dst_tag = plain_act_tag(k.d.ndims);
                EXPECT_EQ(check_through_api(k, level, t % 4 == 0, 100 + t), plain_row(level)) << k.str();
                ++n_checked;
            }
    }
    if (n_checked == 0) GTEST_SKIP() << "no avx2";
}

// Blocked or channels-last src and dst in one layout stay with their rows; plain ones that no
// kernel takes (per-group channels the direct kernel does not block) go to the groups merged
// into wider ones (jit:regroup), which runs this row on the merged problem. Where a plain side
// meets another layout, or two other layouts meet (channels-last and blocked, blocks of 8 and
// 16; groups, a strided 1x1), this row takes them, and the results match the reference.
TEST(ConvPlain, TakesPlainOrDifferingActivationsAKernelRuns) {
    struct case_t {
        const char *desc;
        format_tag src, dst;
        const char *impl; // "plain": the plain row of the ISA; "": a row of neither; else the row
    };
    using ft = format_tag;
    const case_t cases[] = {{"mb2ic16ih8oc32oh8kh3ph1", ft::nchw, ft::nchw, "plain"},
            {"mb2ic16ih8oc32oh8kh3ph1", ft::nhwc, ft::nhwc, ""},
            {"mb2ic16ih8oc32oh8kh3ph1", ft::nChw8c, ft::nChw8c, ""},
            {"mb2ic16ih8oc32oh8kh3ph1", ft::nhwc, ft::nchw, "plain"},
            {"mb2ic32ih8oc16oh4kh3sh2ph1", ft::nchw, ft::nhwc, "plain"},
            {"mb2ic32ih8oc16oh8kh3ph1", ft::nChw8c, ft::nchw, "jit:avx2:plain"}, // nC*8c: the AVX2 kernels
            {"g2mb1ic18ih5oc18oh5kh3ph1", ft::nchw, ft::nchw, "jit:regroup"},
            {"mb2ic16ih8oc32oh8kh3ph1", ft::nhwc, ft::nChw16c, "plain"},
            {"mb2ic19ih7oc21oh7kh3ph1", ft::nhwc, ft::nChw8c, "plain"},
            {"g2mb2ic32ih8oc64oh8kh3ph1", ft::nChw16c, ft::nhwc, "plain"},
            {"mb3ic32ih9oc48oh5kh1sh2ph0", ft::nChw8c, ft::nhwc, "plain"},
            {"mb2ic32ih8oc32oh8kh3ph1", ft::nChw8c, ft::nChw16c, "plain"},
            {"mb2ic24ih6iw9oc40oh6ow9kh3kw3ph1pw1", ft::nChw16c, ft::nChw8c, "plain"},
            {"mb1ic16id4ih5iw6oc32od4oh5ow6kd3kh3kw3pd1ph1pw1", ft::ndhwc, ft::nCdhw16c, "plain"},
            {"mb2ic16iw11oc24ow11kw3pw1", ft::nCw8c, ft::nwc, "plain"}};
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (isa_missing(level)) continue;
        for (const case_t &t : cases) {
            conv_case_t k;
            k.d = parse_conv_desc(t.desc);
            k.d.with_bias = true;
            k.po.append_sum(0.5f);
            k.src_tag = t.src;
            k.dst_tag = t.dst;
            k.wei_tag = plain_wei_tag(k.d.ndims, k.d.g > 1);
            const std::string name = check_through_api(k, level, false, 7);
            if (std::string(t.impl) == "plain") {
                EXPECT_EQ(name, plain_row(level)) << k.str();
            } else if (*t.impl) {
                EXPECT_EQ(name, t.impl) << k.str();
            } else {
                EXPECT_NE(name, plain_row(level)) << k.str();
                EXPECT_NE(name, "ref") << k.str();
            }
        }
    }
}

// A batch runs in passes of images: the largest divisor of mb whose activations, blocked, fit
// the last-level cache share of the threads (a model pinned small here), or up to one image per
// thread (two here); the whole batch where no divisor gives each thread an image. Each pass
// reorders its own images; the results match the reference with a plain or a blocked side,
// channels-last with blocked, depthwise, 3-D, strided 1x1 with and without copies reduced to
// unit stride, sum, bias and relu, weights per call (reordered once for all passes) and held.
TEST(ConvPlain, BatchesRunInPassesOfImages) {
    using ft = format_tag;
    // mb6ic20ih9oc24oh9kh3ph1: blocked in 16s, an image is 32 x 81 floats of src and 32 x 81
    // of dst, 20736 bytes; 45000 bytes hold 2 images, so do the two threads. The 3-D images
    // (16 x 64 floats twice, 8192 bytes) go 5 to the share, 3 to a pass of 6. The strided
    // 1x1s' images take more than the share: a pass of 2 for the threads. mb 5 has no divisor
    // but 1 up to 2, too few images for the threads: one pass.
    impl::machine_model_t small;
    small.l3_share_bytes = 45000;
    small.cores = 1;
    const impl::machine_model_override_t pin(small);
    const threads_guard_t two(2);
    struct case_t {
        const char *desc;
        ft src, dst;
        int pass;
        bool rtus; // copies reduced to unit stride (oc 512 and up on the pinned model)
    };
    const case_t cases[] = {{"mb6ic20ih9oc24oh9kh3ph1", ft::nchw, ft::nchw, 2, false},
            {"mb5ic20ih9oc24oh9kh3ph1", ft::nchw, ft::nchw, 5, false},
            {"mb6ic20ih9oc24oh9kh3ph1", ft::nhwc, ft::nchw, 2, false},
            {"mb6ic20ih9oc24oh9kh3ph1", ft::nchw, ft::any, 2, false},
            {"g32mb6ic32ih9oc32oh9kh3ph1", ft::nchw, ft::nchw, 2, false},
            {"mb6ic8id4ih4iw4oc8od4oh4ow4kd3kh3kw3pd1ph1pw1", ft::ncdhw, ft::ncdhw, 3, false},
            {"mb6ic20ih18oc24oh9kh1sh2ph0", ft::nchw, ft::nchw, 2, false},
            {"mb4ic16ih8oc512oh4kh1sh2ph0", ft::nchw, ft::nchw, 2, true}};
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (isa_missing(level)) continue;
        const ft blocked = level == isa::avx2 ? ft::nChw8c : ft::nChw16c;
        std::vector<case_t> all(std::begin(cases), std::end(cases));
        all.push_back({"mb6ic20ih9oc24oh9kh3ph1", blocked, ft::nchw, 2, false});
        all.push_back({"mb6ic20ih9oc24oh9kh3ph1", ft::nhwc, blocked, 2, false});
        all.push_back({"mb6ic20ih9oc24oh9kh3ph1", blocked, ft::nhwc, 2, false});
        for (const case_t &t : all)
            for (int variant = 0; variant < 2; ++variant) {
                conv_case_t k;
                k.d = parse_conv_desc(t.desc);
                k.d.with_bias = true;
                if (variant == 1) k.po.append_sum(0.5f).append_eltwise(eltwise_alg::relu);
                k.src_tag = t.src;
                k.dst_tag = t.dst;
                k.wei_tag = plain_wei_tag(k.d.ndims, k.d.g > 1);
                EXPECT_EQ(check_through_api(k, level, variant == 1, 60 + variant), plain_row(level)) << k.str();
                isa_guard g;
                set_max_isa(level);
                const std::string info = conv_fwd(k.d, k.src_tag, k.wei_tag, k.dst_tag, k.po).impl_info();
                const std::string pass =
                        std::to_string(t.pass) + (t.pass == 1 ? " image at a time" : " images at a time");
                EXPECT_NE(info.find(pass), std::string::npos) << k.str() << ": " << info;
                EXPECT_EQ(info.find(" rtus=") != std::string::npos, t.rtus) << k.str() << ": " << info;
            }
    }
}

// One pixel per image (a classifier head, a squeeze-and-excitation block): the plain tensors
// are channels-last ones, which the kernel reads and writes in place; depthwise ones whose g
// the channels-last kernel does not take get the blocked layouts instead.
TEST(ConvPlain, OnePixelImagesAreReadInPlace) {
    const char *descs[] = {"mb64ic80ih1oc100oh1kh1", "mb32ic64iw1oc24ow1kw1", "mb5ic48id1ih1iw1oc33od1oh1ow1kd1kh1kw1",
            "mb7ic24ih3oc40oh1kh3ph0", "g20mb4ic20ih1oc20oh1kh3ph1", "g24mb4ic24ih1oc24oh1kh1"};
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (isa_missing(level)) continue;
        for (const char *text : descs) {
            conv_case_t k;
            k.d = parse_conv_desc(text);
            k.d.with_bias = true;
            k.po.append_sum(2.f).append_eltwise(eltwise_alg::relu);
            k.src_tag = k.dst_tag = plain_act_tag(k.d.ndims);
            k.wei_tag = plain_wei_tag(k.d.ndims, k.d.g > 1);
            EXPECT_EQ(check_through_api(k, level, false, 9), plain_row(level)) << text;
            isa_guard g;
            set_max_isa(level);
            const std::string info = conv_fwd(k.d, k.src_tag, k.wei_tag, k.dst_tag, k.po).impl_info();
            // A 3x3 on a 3x3 image has a one-pixel dst only: its src is reordered. Channels-last
            // depthwise takes g a multiple of the vector.
            const bool in_place =
                    k.d.ih * k.d.iw * k.d.id == 1 && (k.d.g == 1 || k.d.g % (level == isa::avx2 ? 8 : 16) == 0);
            EXPECT_EQ(info.find("read in place") != std::string::npos, in_place) << info;
        }
    }
}

// Streams run plain convolutions while the caller runs the op too, on three threads: a thread
// waiting inside one execute() may run a queued one of a stream meanwhile, nested in its own
// (each then needs buffers of its own; ThreadScratch tests that nesting alone). Every result is
// the one a single call gives, which matches the reference (the tests above).
TEST(ConvPlain, StreamsAndTheCallerRunPlainConvolutionsAtOnce) {
    const isa level = isa_missing(isa::avx512_core) ? isa::avx2 : isa::avx512_core;
    if (isa_missing(level)) GTEST_SKIP() << "no avx2";
    const conv_desc d = parse_conv_desc("mb2ic32ih14oc32oh14kh3ph1");
    isa_guard g;
    set_max_isa(level);
    const threads_guard_t three(3);
    const conv_fwd op(d, format_tag::nchw, format_tag::oihw, format_tag::nchw);
    ASSERT_EQ(op.impl_name(), plain_row(level));
    const tensor wei(op.wei_desc()), src(op.src_desc()), want(op.dst_desc());
    fill_int(wei, 5, 2);
    fill_int(src, 6, 3);
    op.execute(src, wei, tensor(), want);
    // Two threads each feed a stream one execute() at a time, waiting for it, while this thread
    // runs the op directly.
    constexpr int n_streams = 2, per_stream = 40, direct = 40;
    std::vector<std::unique_ptr<stream>> streams;
    std::vector<tensor> out;
    for (int i = 0; i < n_streams * per_stream + direct; ++i) out.emplace_back(op.dst_desc());
    for (int s = 0; s < n_streams; ++s) streams.push_back(std::make_unique<stream>());
    std::vector<std::thread> feeders;
    for (int s = 0; s < n_streams; ++s)
        feeders.emplace_back([&, s] {
            stream &st = *streams[static_cast<std::size_t>(s)];
            for (int r = 0; r < per_stream; ++r) {
                {
                    stream_scope on(st);
                    op.execute(src, wei, tensor(), out[static_cast<std::size_t>(s * per_stream + r)]);
                }
                while (!st.query()) std::this_thread::sleep_for(std::chrono::microseconds(20));
            }
        });
    for (int i = 0; i < direct; ++i)
        op.execute(src, wei, tensor(), out[static_cast<std::size_t>(n_streams * per_stream + i)]);
    for (std::thread &t : feeders) t.join();
    for (auto &s : streams) EXPECT_NO_THROW(s->synchronize());
    for (std::size_t i = 0; i < out.size(); ++i)
        EXPECT_EQ(std::memcmp(out[i].data(), want.data(), want.desc().size_bytes()), 0) << "execution " << i;
}

// Two threads running one op at once each use their own buffers: both get the reference's
// result.
TEST(ConvPlain, ConcurrentExecutesUseTheirOwnBuffers) {
    const isa level = isa_missing(isa::avx512_core) ? isa::avx2 : isa::avx512_core;
    if (isa_missing(level)) GTEST_SKIP() << "no avx2";
    const conv_desc d = parse_conv_desc("mb2ic32ih16oc32oh16kh3ph1");
    isa_guard g;
    set_max_isa(level);
    const conv_fwd op(d, format_tag::nchw, format_tag::oihw, format_tag::nchw);
    ASSERT_EQ(op.impl_name(), plain_row(level));
    const tensor wei(op.wei_desc()), ref(op.dst_desc());
    fill_int(wei, 5, 2);
    std::vector<tensor> src, dst;
    for (int i = 0; i < 2; ++i) {
        src.emplace_back(op.src_desc());
        dst.emplace_back(op.dst_desc());
        fill_int(src.back(), 10 + i, 3);
    }
    std::vector<std::thread> th;
    std::string errors[2];
    for (int i = 0; i < 2; ++i)
        th.emplace_back([&, i] {
            try {
                for (int r = 0; r < 20; ++r) op.execute(src[i], wei, tensor(), dst[i]);
            } catch (const std::exception &e) {
                errors[i] = e.what();
            }
        });
    for (std::thread &t : th) t.join();
    for (const std::string &e : errors) EXPECT_EQ(e, "");
    set_max_isa(isa::scalar);
    for (int i = 0; i < 2; ++i) {
        conv_fwd(d, format_tag::nchw, format_tag::oihw, format_tag::nchw).execute(src[i], wei, tensor(), ref);
        EXPECT_EQ(std::memcmp(dst[i].data(), ref.data(), ref.desc().size_bytes()), 0) << "thread " << i;
    }
}
