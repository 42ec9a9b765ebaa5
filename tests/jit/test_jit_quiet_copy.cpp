// SPDX-License-Identifier: Apache-2.0
// jit_quiet_copy_t: a kernel's code copied with its droppable prefetches made NOPs.
#include <cstdint>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "jit/jit_dump.hpp"
#include "jit/jit_quiet_copy.hpp"
#include "jit_test_util.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace Xbyak::util;

namespace {

std::size_t count_of(const std::string &text, const std::string &what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// A kernel with droppable prefetches in every operand form Xbyak encodes differently (plain
// base, REX base with a 32-bit displacement, SIB with REX index, rsp's forced SIB, a 32-bit
// address (0x67 prefix), RIP-relative), one in a loop that jumps back over it, one kept
// prefetch, and a RIP-relative constant: it writes 8 floats of 0.5 + 3 * 1.25 to its argument.
lambda_kernel_t prefetching_kernel() {
    return lambda_kernel_t(isa::avx2, [](lambda_kernel_t &g) {
        g.preamble({r12, r13});
        g.mov(r12, rdi);
        g.mov(r13, 16);
        g.droppable_prefetcht1(g.ptr[rdi]);
        g.droppable_prefetcht1(g.ptr[r12 + 4096]);
        g.droppable_prefetcht1(g.ptr[r12 + r13 * 4 + 64]);
        g.droppable_prefetcht1(g.ptr[rsp]);
        g.droppable_prefetcht1(g.ptr[eax + 64]);
        Xbyak::Label here;
        g.L(here);
        g.droppable_prefetcht1(g.ptr[rip + here]);
        g.prefetcht1(g.ptr[rdi + 128]);
        g.vmovups(ymm0, g.vconst(0.5f));
        g.mov(eax, 3);
        Xbyak::Label loop;
        g.L(loop);
        g.droppable_prefetcht1(g.ptr[r12 + rax * 8 + 256]);
        g.vaddps(ymm0, ymm0, g.vconst(1.25f));
        g.dec(eax);
        g.jnz(loop);
        g.vmovups(g.ptr[rdi], ymm0);
        g.postamble();
    });
}

} // namespace

TEST(JitQuietCopy, DroppablePrefetchesBecomeNopsOfTheSameLength) {
    if (detected_isa() < isa::avx2) GTEST_SKIP() << "needs avx2";
    lambda_kernel_t k = prefetching_kernel();
    std::string why;
    ASSERT_EQ(k.create(why), status::success) << why;
    ASSERT_EQ(k.droppable_prefetches().size(), 7u);
    jit_quiet_copy_t q(k);
    ASSERT_EQ(q.create(why), status::success) << why;
    EXPECT_EQ(q.name(), k.name() + "_quiet");
    EXPECT_EQ(q.isa_level(), k.isa_level());
    ASSERT_EQ(q.code_size(), k.code_size());
    ASSERT_EQ(q.insn_size(), k.insn_size());
    EXPECT_TRUE(q.droppable_prefetches().empty());
    EXPECT_NE(q.conf_str().find(k.conf_str()), std::string::npos);

    // Each droppable prefetch differs in two bytes, its opcode (0F 18 -> 0F 1F) and the ModRM
    // reg field (/2 -> /0); nothing else differs, the constant pool included.
    std::size_t n_diff = 0;
    for (std::size_t i = 0; i < k.code_size(); ++i) n_diff += k.code()[i] != q.code()[i];
    EXPECT_EQ(n_diff, 2 * k.droppable_prefetches().size());
    for (std::uint32_t at : k.droppable_prefetches()) {
        std::size_t i = at;
        while ((q.code()[i] & 0xf0) == 0x40 || q.code()[i] == 0x67) ++i; // REX, address size
        EXPECT_EQ(q.code()[i], 0x0f) << "at " << at;
        EXPECT_EQ(q.code()[i + 1], 0x1f) << "at " << at;
        EXPECT_EQ((q.code()[i + 2] >> 3) & 7, 0) << "at " << at;
        EXPECT_EQ(k.code()[i + 1], 0x18) << "at " << at;
    }
    if (have_disassembler()) {
        const std::string kt = disassemble(k), qt = disassemble(q);
        EXPECT_EQ(count_of(kt, "prefetcht1"), 8u) << kt;
        EXPECT_EQ(count_of(qt, "prefetcht1"), 1u) << qt;
        EXPECT_EQ(count_of(qt, " nop "), count_of(kt, " nop ") + 7) << qt;
    }

    float a[8] = {}, b[8] = {};
    k.entry<void (*)(float *)>()(a);
    q.entry<void (*)(float *)>()(b);
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(a[i], 4.25f);
        EXPECT_EQ(b[i], 4.25f);
    }
}

TEST(JitQuietCopy, OutlivesItsSourceCopiesPlainCodeAndRefusesAnUncreatedKernel) {
    if (detected_isa() < isa::avx2) GTEST_SKIP() << "needs avx2";
    std::string why;
    std::unique_ptr<jit_quiet_copy_t> q;
    {
        lambda_kernel_t k = prefetching_kernel();
        ASSERT_EQ(k.create(why), status::success) << why;
        q = std::make_unique<jit_quiet_copy_t>(k);
    }
    ASSERT_EQ(q->create(why), status::success) << why;
    float out[8] = {};
    q->entry<void (*)(float *)>()(out);
    for (float v : out) EXPECT_EQ(v, 4.25f);

    lambda_kernel_t plain(isa::avx2, [](lambda_kernel_t &g) {
        g.mov(eax, 7);
        g.ret();
    });
    ASSERT_EQ(plain.create(why), status::success) << why;
    jit_quiet_copy_t pq(plain);
    ASSERT_EQ(pq.create(why), status::success) << why;
    ASSERT_EQ(pq.code_size(), plain.code_size());
    for (std::size_t i = 0; i < plain.code_size(); ++i) EXPECT_EQ(pq.code()[i], plain.code()[i]) << i;
    EXPECT_EQ(pq.entry<int (*)()>()(), 7);

    // A kernel not created yet has no code to copy: an error, not an empty kernel.
    lambda_kernel_t uncreated(isa::avx2, [](lambda_kernel_t &g) { g.ret(); });
    jit_quiet_copy_t uq(uncreated);
    EXPECT_EQ(uq.create(why), status::runtime_error);
    EXPECT_NE(why.find("not created"), std::string::npos) << why;
}
