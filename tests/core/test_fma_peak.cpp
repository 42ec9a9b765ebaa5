// SPDX-License-Identifier: Apache-2.0
// The FMA peak probe (testing/fma_peak.hpp) sets every register it reads. Run right after every
// vector register was filled with a denormal, it measures the same peak (cores that take
// microcode assists on denormal operands would otherwise run it many times slower) and
// leaves only normal numbers in the registers it uses.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"
#include "testing/fma_peak.hpp"

using blockdnn::isa;

namespace {

constexpr std::uint32_t denormal_bits = 0x00000001; // 1.4e-45f, the smallest denormal

// void f(long iters), or with store: void f(long iters, float *regs). Fills every vector
// register of the CPU (32 zmm with AVX-512, else 16 ymm) with denormal_bits, then runs
// `loop`(iters): a tail jump, so nothing between the fill and the loop touches a register;
// with store, a call, after which the low 4 floats of each register go to regs[4 * r].
class poison_then_run_t : public Xbyak::CodeGenerator {
public:
    poison_then_run_t(void (*loop)(long), bool store) : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow) {
        const bool avx512 = blockdnn::detected_isa() >= isa::avx512_core;
        n_regs_ = avx512 ? 32 : 16;
        if (store) push(rsi); // kept across the call; also aligns the stack to 16 bytes for it
        mov(eax, denormal_bits);
        vmovd(xmm0, eax);
        for (int r = 0; r < n_regs_; ++r) {
            if (avx512) vbroadcastss(Xbyak::Zmm(r), xmm0);
            else vbroadcastss(Xbyak::Ymm(r), xmm0);
        }
        mov(rax, reinterpret_cast<std::uintptr_t>(loop));
        if (!store) {
            jmp(rax);
        } else {
            call(rax);
            pop(rsi);
            for (int r = 0; r < n_regs_; ++r) vmovups(ptr[rsi + 16 * r], Xbyak::Xmm(r));
            vzeroupper();
            ret();
        }
        readyRE();
    }
    int n_regs() const { return n_regs_; }

private:
    int n_regs_ = 0;
};

bool has(isa level) { return blockdnn::detected_isa() >= level; }

// "The same peak" is within 2x: far from both the noise of a shared machine and the factor of
// a hundred that assists cost. A pair outside it is measured again (up to three pairs), so only
// a difference that persists fails.
void expect_same_peak_after_denormals(isa level) {
    const bdtest::fma_loop_t loop(level == isa::avx512_core);
    const poison_then_run_t poisoned(loop.fn(), false);
    std::ostringstream pairs;
    for (int pair = 0; pair < 3; ++pair) {
        const double clean = bdtest::time_fma_loop(loop.fn(), loop.flops_per_iter());
        const double dirty = bdtest::time_fma_loop(poisoned.getCode<void (*)(long)>(), loop.flops_per_iter());
        ASSERT_GT(clean, 0);
        if (dirty > clean / 2 && dirty < clean * 2) return;
        pairs << " " << clean * 1e-9 << " clean / " << dirty * 1e-9 << " after;";
    }
    ADD_FAILURE() << "GFLOP/s in three pairs:" << pairs.str();
}

void expect_normal_registers_after_denormals(isa level) {
    const bdtest::fma_loop_t loop(level == isa::avx512_core);
    const poison_then_run_t poisoned(loop.fn(), true);
    float regs[32 * 4];
    std::memset(regs, 0, sizeof regs);
    poisoned.getCode<void (*)(long, float *)>()(1000, regs);
    ASSERT_LE(loop.n_vregs(), poisoned.n_regs());
    for (int r = 0; r < loop.n_vregs(); ++r)
        for (int i = 0; i < 4; ++i)
            EXPECT_EQ(std::fpclassify(regs[4 * r + i]), FP_NORMAL)
                    << "register " << r << " lane " << i << ": " << regs[4 * r + i];
}

} // namespace

// Each JIT ISA: skipped where the CPU lacks it.
class FmaPeakIsa : public ::testing::TestWithParam<isa> {
protected:
    void SetUp() override {
        if (!has(GetParam())) GTEST_SKIP() << "this CPU has no " << blockdnn::to_string(GetParam());
    }
};

TEST_P(FmaPeakIsa, PeakIsTheSameAfterDenormalsInEveryRegister) { expect_same_peak_after_denormals(GetParam()); }

TEST_P(FmaPeakIsa, LoopLeavesNormalNumbersInTheRegistersItUses) { expect_normal_registers_after_denormals(GetParam()); }

INSTANTIATE_TEST_SUITE_P(, FmaPeakIsa, ::testing::Values(isa::avx512_core, isa::avx2),
        [](const ::testing::TestParamInfo<isa> &i) { return std::string(blockdnn::to_string(i.param)); });

TEST(FmaPeak, MeasuredOncePerIsa) {
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (!has(level)) continue;
        const double first = bdtest::fma_peak_flops(level);
        EXPECT_GT(first, 1e9) << blockdnn::to_string(level); // any AVX2 core does more than 1 GFLOP/s
        EXPECT_EQ(bdtest::fma_peak_flops(level), first) << blockdnn::to_string(level);
    }
}
