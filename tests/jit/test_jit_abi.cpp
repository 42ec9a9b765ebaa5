// SPDX-License-Identifier: Apache-2.0
// ABI safety of generated kernels (jit_abi_check.hpp): the trampoline catches broken kernels,
// and every brgemm kernel keeps the ABI. Each op's kernels are checked by its own tests
// (tests/ops/<op>/test_<op>_jit_abi.cpp).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "jit/brgemm/jit_brgemm_kernel.hpp"
#include "jit_abi_check.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace Xbyak::util;
using jit_abi_test::checked_call_t;
using jit_abi_test::xgetbv1_supported;

TEST(JitAbi, TheTrampolineCatchesBrokenKernels) {
    if (detected_isa() < isa::avx2) GTEST_SKIP() << "needs avx2";
    checked_call_t cc;
    // A correct kernel that uses every callee-saved register: the preamble saves them.
    lambda_kernel_t good(isa::avx2, [](lambda_kernel_t &g) {
        g.preamble({rbx, rbp, r12, r13, r14, r15});
        for (const Xbyak::Reg64 &r : {rbx, rbp, r12, r13, r14, r15}) g.xor_(r, r);
        g.vpcmpeqd(ymm3, ymm3, ymm3);
        g.postamble();
    });
    // Clobbers rbx without saving it.
    lambda_kernel_t clobber(isa::avx2, [](lambda_kernel_t &g) {
        g.xor_(rbx, rbx);
        g.ret();
    });
    // Returns with the stack pointer 8 bytes too high.
    lambda_kernel_t stack(isa::avx2, [](lambda_kernel_t &g) {
        g.mov(rax, g.ptr[rsp]);
        g.add(rsp, 16);
        g.jmp(rax);
    });
    // Writes a ymm register and returns without vzeroupper.
    lambda_kernel_t dirty(isa::avx2, [](lambda_kernel_t &g) {
        g.vpcmpeqd(ymm3, ymm3, ymm3);
        g.ret();
    });
    std::string why;
    for (lambda_kernel_t *k : {&good, &clobber, &stack, &dirty}) ASSERT_EQ(k->create(why), status::success) << why;
    cc.check(good.code(), nullptr, "good");
    cc.check(clobber.code(), nullptr, "clobber", false);
    cc.check(stack.code(), nullptr, "stack", false);
    if (xgetbv1_supported()) {
        cc.check(dirty.code(), nullptr, "dirty", false);
    } else {
        std::printf("XGETBV(1) not supported: the upper vector state is not checked\n");
    }
}

TEST(JitAbi, EveryBrgemmKernelKeepsTheAbi) {
    checked_call_t cc;
    int n_checked = 0;
    // (M, N, K, alpha, beta): register blocks with tails, one row (B from memory), K = 0,
    // alpha and beta other than 1.
    const struct {
        std::int64_t M, N, K;
        float alpha, beta;
    } shapes[] = {{13, 37, 21, 1.f, 0.f}, {1, 70, 9, 1.f, 1.f}, {6, 64, 0, 1.f, 2.f}, {9, 5, 17, 0.5f, -1.f}};
    for (isa level : {isa::avx2, isa::avx512_core}) {
        if (detected_isa() < level) continue;
        for (const auto &sh : shapes) {
            brgemm_conf_t c;
            std::string why;
            ASSERT_EQ(init_conf_brgemm(c, level, sh.M, sh.N, sh.K, sh.K + 1, sh.N, sh.N, sh.alpha, sh.beta, why),
                    status::success)
                    << why;
            std::unique_ptr<brgemm_kernel_t> k;
            ASSERT_EQ(brgemm_kernel_t::create(k, c, why), status::success) << why;
            std::vector<float> A(sh.M * (sh.K + 1), 1.f), B(sh.K * sh.N + 1, 2.f), C(sh.M * sh.N, 3.f);
            const brgemm_batch_element_t batch[2] = {{A.data(), B.data()}, {A.data(), B.data()}};
            const brgemm_call_args_t args {batch, C.data(), 2, nullptr};
            cc.check(k->generator().code(), &args, k->generator().name() + ":" + to_string(c));
            // Every element: alpha * 2 * K * 2 + beta * 3.
            EXPECT_EQ(C.back(), sh.alpha * 4.f * static_cast<float>(sh.K) + sh.beta * 3.f) << to_string(c);
            ++n_checked;
        }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}
