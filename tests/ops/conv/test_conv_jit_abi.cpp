// SPDX-License-Identifier: Apache-2.0
// ABI safety of every convolution kernel kind (jit/jit_abi_check.hpp).
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "core/prb_parse.hpp"
#include "ops/conv/conv_jit.hpp"
#include "jit/jit_abi_check.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using jit_abi_test::checked_call_t;

// Every conv kernel kind (direct with and without split reduction, first-layer, depthwise)
// on both ISAs, with bias and a post-op chain using the injector: the calls of the first work
// item (one per ic chunk) through the checked call, in every kernel of the op (AVX2's quiet
// twin too).
TEST(JitAbi, EveryConvKernelKeepsTheAbi) {
    checked_call_t cc;
    int n_checked = 0;
    struct case_t {
        const char *desc;
        bool plain_src;
        impl::conv_conf_hint_t hint;
    };
    impl::conv_conf_hint_t split, four, three, mem;
    split.nb_ic_blocking = 1;
    four.nb_oc_blocking = 4;
    three.nb_oc_blocking = 3;
    mem.nb_oc_blocking = 2;
    mem.wei_mem_vecs = 1;
    const case_t cases[] = {
            {"mb1ic20ih9oc40oh9kh3ph1", false, {}}, {"mb1ic40ih9oc20oh9kh3ph1", false, split},
            {"mb1ic3ih12oc20oh6kh3sh2ph1", true, {}}, {"g20mb1ic20ih9oc20oh9kh3ph1", false, {}},
            {"g80mb1ic80ih9oc80oh9kh3ph1", false, four}, // 5 (avx2: 10) blocks in groups of 4: a tail kernel
            {"mb1ic32ih7oc32oh7kh1ph0", false, {}},
            {"mb1ic16ih7oc64oh7kh3ph1", false, three}, // 4 (avx2: 8) blocks in groups of 3: a tail kernel
            {"mb1ic16ih7oc64oh7kh3ph1", false, mem},   // a weight vector read by the FMAs
    };
    for (isa level : {isa::avx2, isa::avx512_core}) {
        if (detected_isa() < level) continue;
        const int blk = level == isa::avx512_core ? 16 : 8;
        for (const case_t &k : cases) {
            conv_prb_t p;
            p.desc = parse_conv_desc(k.desc);
            p.desc.with_bias = true;
            // A split reduction takes no sum (dst holds partial sums between the chunks).
            p.po = k.hint.nb_ic_blocking > 0 ? post_ops().append_eltwise(eltwise_alg::gelu_erf)
                                             : post_ops().append_sum(0.5f).append_eltwise(eltwise_alg::gelu_erf);
            p.grouped_wei = p.desc.g > 1;
            const format_tag blocked = blk == 16 ? format_tag::nChw16c : format_tag::nChw8c;
            p.src = tensor_desc(p.desc.src_dims(), k.plain_src ? format_tag::nchw : blocked);
            p.dst = tensor_desc(p.desc.dst_dims(), blocked);
            p.wei = tensor_desc(p.desc.wei_dims(p.grouped_wei), p.grouped_wei ? format_tag::goihw : format_tag::oihw);
            p.bia = tensor_desc(p.desc.bia_dims(), format_tag::x);
            std::unique_ptr<conv_fwd_jit_t> jit;
            std::string why;
            ASSERT_EQ(conv_fwd_jit_t::create(jit, p, level, conv_kernel_kind_for(p.desc, p.src.tag()), why, k.hint),
                    status::success)
                    << why;
            const tensor src(p.src), wei(tensor_desc(p.wei.dims(), jit->wei_tag())), dst(p.dst);
            for (dim_t i = 0; i < src.desc().nelems_padded(); ++i) src.f32()[i] = 0.01f * static_cast<float>(i % 97);
            for (dim_t i = 0; i < wei.desc().nelems_padded(); ++i) wei.f32()[i] = 0.02f * static_cast<float>(i % 89);
            std::vector<float> bia(static_cast<std::size_t>(p.desc.oc) + 16, 0.25f);
            for (dim_t icc = 0; icc < jit->n_ic_chunks(); ++icc) {
                const conv_fwd_call_args_t args = jit->call_args(0, icc, {src.f32(), wei.f32(), bia.data(), dst.f32()});
                for (const kernel_ptr &ker : jit->kernels_shared())
                    cc.check(ker->code(), &args, ker->name() + ":" + to_string(level) + " " + k.desc);
            }
            ++n_checked;
        }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}
