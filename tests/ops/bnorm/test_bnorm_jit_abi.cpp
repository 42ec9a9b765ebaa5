// SPDX-License-Identifier: Apache-2.0
// ABI safety of every batch normalization kernel (jit/jit_abi_check.hpp).
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "ops/bnorm/bnorm_jit.hpp"
#include "jit/jit_abi_check.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using jit_abi_test::checked_call_t;

// Batch normalization: every kernel (statistics and normalization, forward and backward) of
// blocked (16c, 8c), channels-last with a channel tail and plain with a spatial tail layouts,
// called on a few points with valid buffers: with the data in cache (units of several blocks,
// a loop over them) and from memory (streaming stores, the fused kernels).
TEST(JitAbi, EveryBnormKernelKeepsTheAbi) {
    checked_call_t cc;
    int n_checked = 0, n_grouped = 0;
    alignas(64) static float buf[5][1 << 14], prm[5 * 64], out[4 * 64];
    for (float &x : prm) x = 1.f; // positive variance, unit gamma
    for (isa level : {isa::avx2, isa::avx512_core}) {
        if (detected_isa() < level) continue;
        for (format_tag tag : {format_tag::nChw16c, format_tag::nChw8c, format_tag::nhwc, format_tag::nchw})
            for (bnorm_dir_t dir : {bnorm_dir_t::fwd_inference, bnorm_dir_t::fwd_training, bnorm_dir_t::bwd})
                for (bool global : {false, true})
                    for (bool from_memory : {false, true}) {
                        if (global && dir != bnorm_dir_t::bwd) continue;
                        bnorm_jit_prb_t p;
                        p.dir = dir;
                        p.src = tensor_desc({2, 100, 3, 7}, tag); // channel tail (nhwc), spatial tail (nchw)
                        p.fuse_relu = true;
                        p.global_stats = global;
                        bnorm_machine_t m;
                        if (from_memory) m.l3_share_bytes = 0; // streaming-store kernels too
                        std::unique_ptr<bnorm_jit_t> jit;
                        std::string why;
                        ASSERT_EQ(bnorm_jit_t::create(jit, p, level, m, why), status::success) << why;
                        // A call's blocks, at most 64 x 21 floats apart, lie within buf.
                        const int blocks = jit->conf().stats[0].blocks;
                        n_grouped += blocks > 1;
                        for (const kernel_ptr &k : jit->kernels()) {
                            bnorm_call_args_t a;
                            a.src = buf[0];
                            a.dst = buf[1];
                            a.diff_dst = buf[2];
                            a.dst_fwd = buf[3];
                            a.diff_src = buf[4];
                            a.prm = prm;
                            a.out = out;
                            a.n_pts = 3;
                            a.tail = 1;
                            a.inv_n = 1.f / 3;
                            a.eps = 1e-5f;
                            a.pf_src = buf[0];
                            a.pf_ddst = buf[2];
                            a.n_blk = blocks;
                            cc.check(k->code(), &a, k->name() + ":" + to_string(level) + ":" + to_string(tag));
                            ++n_checked;
                        }
                    }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
    EXPECT_GT(n_grouped, 0) << "no conf with a loop over blocks";
}
