// SPDX-License-Identifier: Apache-2.0
// The standalone eltwise kernel, white box: init_conf's register budget and its conf in
// words, what a dump of the kernel shows, and the ABI safety of every kernel kind
// (jit/jit_abi_check.hpp).
#include <cmath>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "jit/jit_dump.hpp"
#include "ops/eltwise/jit_eltwise_fwd_kernel.hpp"
#include "jit/jit_abi_check.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using jit_abi_test::checked_call_t;

namespace {

// The standalone eltwise kernel for alg at level, created; null if init_conf or create fails.
std::unique_ptr<jit_generator_t> make_eltwise_kernel(isa level, eltwise_alg alg, float alpha, float beta, bool stream) {
    eltwise_conf_t c;
    std::string why;
    if (init_conf_eltwise_fwd(c, level, alg, alpha, beta, stream, why) != status::success) return nullptr;
    std::unique_ptr<jit_generator_t> k;
    if (level == isa::avx512_core) k = std::make_unique<jit_eltwise_fwd_kernel_t<isa::avx512_core>>(c);
    else k = std::make_unique<jit_eltwise_fwd_kernel_t<isa::avx2>>(c);
    if (k->create(why) != status::success) return nullptr;
    return k;
}

} // namespace

TEST(EltwiseConf, InitConfFitsTheRegisterBudget) {
    std::string why;
    eltwise_conf_t c;
    ASSERT_EQ(init_conf_eltwise_fwd(c, isa::avx512_core, eltwise_alg::relu, 0.f, 0.f, false, why), status::success);
    EXPECT_EQ(c.simd_w, 16);
    EXPECT_EQ(c.ur, 8);
    EXPECT_EQ(c.n_vtemps, 1);
    EXPECT_EQ(c.tail_mask_vreg, -1) << "AVX-512 tails use k1";
    ASSERT_EQ(init_conf_eltwise_fwd(c, isa::avx2, eltwise_alg::gelu_erf, 0.f, 0.f, false, why), status::success);
    EXPECT_EQ(c.simd_w, 8);
    EXPECT_EQ(c.n_vtemps, 4);
    EXPECT_EQ(c.ur, 3);
    EXPECT_EQ(c.n_vregs_used, 3 * 5);
    EXPECT_EQ(c.tail_mask_vreg, 7);
    for (isa level : {isa::avx2, isa::avx512_core})
        for (int a = 0; a <= static_cast<int>(eltwise_alg::linear); ++a) {
            ASSERT_EQ(init_conf_eltwise_fwd(c, level, static_cast<eltwise_alg>(a), 0.f, 0.f, false, why),
                    status::success);
            EXPECT_GE(c.ur, 1);
            EXPECT_LE(c.n_vregs_used, level == isa::avx2 ? 16 : 32);
            if (level == isa::avx2) {
                // The masked tail uses register 0 and temporaries [ur, ur + n_vtemps).
                EXPECT_TRUE(c.tail_mask_vreg > 0 && c.tail_mask_vreg < 16) << c.tail_mask_vreg;
                EXPECT_FALSE(c.tail_mask_vreg >= c.ur && c.tail_mask_vreg < c.ur + c.n_vtemps) << to_string(c);
            }
        }
    EXPECT_EQ(init_conf_eltwise_fwd(c, isa::scalar, eltwise_alg::relu, 0.f, 0.f, false, why), status::unimplemented);
    EXPECT_NE(why.find("scalar"), std::string::npos) << why;
}

TEST(EltwiseConf, ToStringNamesEveryFieldAndTellsConfsApart) {
    std::string why;
    eltwise_conf_t a, b;
    init_conf_eltwise_fwd(a, isa::avx512_core, eltwise_alg::relu, 0.1f, 0.f, false, why);
    init_conf_eltwise_fwd(b, isa::avx512_core, eltwise_alg::relu, std::nextafter(0.1f, 1.f), 0.f, false, why);
    EXPECT_NE(to_string(a), to_string(b)) << "alpha must print exactly";
    for (const char *f : {"isa=avx512_core", "alg=relu", "alpha=0.1 ", "beta=0", "stream_stores=0", "simd_w=16", "ur=8",
                 "n_vtemps=1", "n_vregs_used=16", "tail_mask_vreg=-1"})
        EXPECT_NE(to_string(a).find(f), std::string::npos) << to_string(a) << " lacks " << f;
}

// The dump of an eltwise kernel heads its code with the kernel's name, ISA, conf and
// register assignment (conf_str); the dump files themselves are checked in tests/jit/test_jit.cpp.
TEST(EltwiseJit, DumpShowsTheConfTheRegistersAndTheCode) {
    auto k = make_eltwise_kernel(isa::avx512_core, eltwise_alg::relu, 0.f, 0.f, false);
    ASSERT_NE(k, nullptr);
    const std::string text = disassemble(*k);
    expect_dump_holds(text,
            {"; kernel: jit_eltwise_fwd_relu", "; isa: avx512_core", "; conf: isa=avx512_core alg=relu",
                    "; registers: rdi=call_args_t*", "; vector registers: zmm0-zmm7 values"},
            {"vmaxps zmm0, zmm8, zmm0", "kmovw k1, eax", "vzeroupper"});
}

TEST(JitAbi, EveryEltwiseKernelKeepsTheAbi) {
    checked_call_t cc;
    int n_checked = 0;
    for (isa level : {isa::avx2, isa::avx512_core}) {
        if (detected_isa() < level) continue;
        for (int a = 0; a <= static_cast<int>(eltwise_alg::linear); ++a)
            for (bool stream : {false, true}) {
                const auto alg = static_cast<eltwise_alg>(a);
                auto k = make_eltwise_kernel(level, alg, 0.5f, 1.5f, stream);
                ASSERT_NE(k, nullptr);
                // 2 full unrolled iterations, single vectors and a tail.
                alignas(64) float src[300], dst[300];
                for (int i = 0; i < 300; ++i) src[i] = 0.01f * static_cast<float>(i) + 0.005f;
                const eltwise_call_args_t args {src, dst, 8 * 16 * 2 + 16 + 5};
                cc.check(k->code(), &args, k->name() + ":" + to_string(level));
                const float last = static_cast<float>(args.n - 1), e = eltwise_ref(alg, src[args.n - 1], 0.5f, 1.5f);
                EXPECT_NEAR(dst[args.n - 1], e, 1e-5 * std::fabs(e)) << k->name() << " at " << last;
                ++n_checked;
            }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}
