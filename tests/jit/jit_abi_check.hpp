// SPDX-License-Identifier: Apache-2.0
// The ABI check of generated kernels, done the way dav1d's checkasm checks asm: a trampoline
// loads canaries into the callee-saved registers (rbx, rbp, r12-r15), calls the kernel, and
// records those registers, the stack pointer and the upper vector state (XGETBV with ECX = 1
// gives XINUSE: bit 2 = upper halves of ymm0-15, bit 6 = upper halves of zmm0-15, both cleared
// by vzeroupper). zmm16-31 (bit 7) are not checked: vzeroupper does not clear them and they
// cause no SSE transition penalty. tests/jit/test_jit_abi.cpp checks the trampoline itself and
// brgemm's kernels; each op's own tests (tests/ops/<op>/test_<op>_jit_abi.cpp) check its kernels.
#pragma once

#include <cpuid.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "jit_test_util.hpp"

namespace jit_abi_test {

inline bool xgetbv1_supported() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(0xd, 1, &a, &b, &c, &d)) return false;
    return (a >> 2) & 1; // CPUID.(EAX=0DH,ECX=1):EAX[2]
}

inline constexpr std::uint64_t xinuse_upper_bits = (1u << 2) | (1u << 6);

// What the trampoline saw after the call.
struct call_state_t {
    std::uint64_t rsp_before = 0, rsp_after = 0;
    std::uint64_t regs[6] = {}; // rbx rbp r12 r13 r14 r15
    std::uint64_t xinuse = 0;
};

inline constexpr std::uint64_t canaries[6] = {0x5ca1ab1e0000bb01ull, 0x5ca1ab1e0000bb02ull, 0x5ca1ab1e0000bb03ull,
        0x5ca1ab1e0000bb04ull, 0x5ca1ab1e0000bb05ull, 0x5ca1ab1e0000bb06ull};
inline constexpr const char *reg_names[6] = {"rbx", "rbp", "r12", "r13", "r14", "r15"};

// checked_call(fn, arg): calls fn(arg) with canaries in the callee-saved registers and
// records the state into *state (whose address is built into the code).
class checked_call_t {
public:
    checked_call_t()
        : code_(
                blockdnn::isa::avx2, [this](lambda_kernel_t &g) { emit(g); }, "checked_call") {
        std::string why;
        ok_ = code_.create(why) == blockdnn::status::success;
        EXPECT_TRUE(ok_) << why;
    }

    // Calls fn(arg) and checks the ABI; `what` names the kernel in failures.
    void check(const void *fn, const void *arg, const std::string &what, bool expect_clean = true) {
        ASSERT_TRUE(ok_);
        state_ = call_state_t {};
        code_.entry<void (*)(const void *, const void *)>()(fn, arg);
        bool clean = state_.rsp_after == state_.rsp_before;
        for (int i = 0; i < 6; ++i) clean = clean && state_.regs[i] == canaries[i];
        if (xgetbv1_supported()) clean = clean && (state_.xinuse & xinuse_upper_bits) == 0;
        if (!expect_clean) {
            EXPECT_FALSE(clean) << what << ": the checks missed a broken kernel";
            return;
        }
        EXPECT_EQ(state_.rsp_after, state_.rsp_before) << what << ": stack pointer not restored";
        for (int i = 0; i < 6; ++i)
            EXPECT_EQ(state_.regs[i], canaries[i]) << what << ": callee-saved " << reg_names[i] << " clobbered";
        if (xgetbv1_supported()) {
            EXPECT_EQ(state_.xinuse & xinuse_upper_bits, 0u)
                    << what << ": upper vector state left dirty (no vzeroupper)";
        }
    }

    const call_state_t &state() const { return state_; }

private:
    void emit(lambda_kernel_t &g) {
        using namespace Xbyak::util;
        const Xbyak::Reg64 saved[6] = {rbx, rbp, r12, r13, r14, r15};
        g.preamble({rbx, rbp, r12, r13, r14, r15});
        g.sub(rsp, 8); // 6 pushes + return address: realign to 16 for the call
        g.mov(rax, reinterpret_cast<std::uintptr_t>(&state_));
        g.mov(g.ptr[rax + offsetof(call_state_t, rsp_before)], rsp);
        for (int i = 0; i < 6; ++i) g.mov(saved[i], canaries[i]);
        g.mov(rax, rdi);
        g.mov(rdi, rsi);
        g.call(rax);
        g.mov(r8, reinterpret_cast<std::uintptr_t>(&state_));
        g.mov(g.ptr[r8 + offsetof(call_state_t, rsp_after)], rsp);
        for (int i = 0; i < 6; ++i) g.mov(g.ptr[r8 + offsetof(call_state_t, regs) + 8 * i], saved[i]);
        if (xgetbv1_supported()) {
            g.mov(ecx, 1);
            g.xgetbv();
            g.mov(g.ptr[r8 + offsetof(call_state_t, xinuse)], eax);
        }
        g.mov(rsp, g.ptr[r8 + offsetof(call_state_t, rsp_before)]); // recovers from a bad kernel
        g.add(rsp, 8);
        g.postamble();
    }

    call_state_t state_;
    lambda_kernel_t code_;
    bool ok_ = false;
};

} // namespace jit_abi_test
