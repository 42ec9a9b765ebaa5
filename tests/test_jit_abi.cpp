// SPDX-License-Identifier: Apache-2.0
// ABI safety of every kind of generated kernel, checked the way dav1d's checkasm checks asm:
// a trampoline loads canaries into the callee-saved registers (rbx, rbp, r12-r15), calls the
// kernel, and records those registers, the stack pointer and the upper vector state
// (XGETBV with ECX = 1 gives XINUSE: bit 2 = upper halves of ymm0-15, bit 6 = upper halves of
// zmm0-15, both cleared by vzeroupper). zmm16-31 (bit 7) are not checked: vzeroupper does not
// clear them and they cause no SSE transition penalty.
// Every later kernel kind (bnorm, RNN, brgemm) adds itself to the list at the bottom.
#include <cpuid.h>

#include <cstdint>
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "common/prb_parse.hpp"
#include "conv/conv_fwd_jit.hpp"
#include "jit_test_util.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace Xbyak::util;

namespace {

bool xgetbv1_supported() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(0xd, 1, &a, &b, &c, &d)) return false;
    return (a >> 2) & 1; // CPUID.(EAX=0DH,ECX=1):EAX[2]
}

constexpr std::uint64_t xinuse_upper_bits = (1u << 2) | (1u << 6);

// What the trampoline saw after the call.
struct call_state_t {
    std::uint64_t rsp_before = 0, rsp_after = 0;
    std::uint64_t regs[6] = {}; // rbx rbp r12 r13 r14 r15
    std::uint64_t xinuse = 0;
};

const std::uint64_t canaries[6] = {0x5ca1ab1e0000bb01ull, 0x5ca1ab1e0000bb02ull, 0x5ca1ab1e0000bb03ull,
        0x5ca1ab1e0000bb04ull, 0x5ca1ab1e0000bb05ull, 0x5ca1ab1e0000bb06ull};
const char *reg_names[6] = {"rbx", "rbp", "r12", "r13", "r14", "r15"};

// checked_call(fn, arg): calls fn(arg) with canaries in the callee-saved registers and
// records the state into *state (whose address is built into the code).
class checked_call_t {
public:
    checked_call_t()
        : code_(isa::avx2, [this](lambda_kernel_t &g) { emit(g); }, "checked_call") {
        std::string why;
        ok_ = code_.create(why) == status::success;
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
            EXPECT_EQ(state_.xinuse & xinuse_upper_bits, 0u) << what << ": upper vector state left dirty (no vzeroupper)";
        }
    }

    const call_state_t &state() const { return state_; }

private:
    void emit(lambda_kernel_t &g) {
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

} // namespace

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

// Every conv kernel kind (direct with and without split reduction, first-layer, depthwise)
// on both ISAs, with bias and a post-op chain using the injector: the calls of the first work
// item (one per ic chunk) through the checked call.
TEST(JitAbi, EveryConvKernelKeepsTheAbi) {
    checked_call_t cc;
    int n_checked = 0;
    struct case_t {
        const char *desc;
        bool plain_src;
        impl::conv_conf_hint_t hint;
    };
    impl::conv_conf_hint_t split;
    split.nb_ic_blocking = 1;
    const case_t cases[] = {
            {"mb1ic20ih9oc40oh9kh3ph1", false, {}},
            {"mb1ic40ih9oc20oh9kh3ph1", false, split},
            {"mb1ic3ih12oc20oh6kh3sh2ph1", true, {}},
            {"g20mb1ic20ih9oc20oh9kh3ph1", false, {}},
            {"mb1ic32ih7oc32oh7kh1ph0", false, {}},
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
                cc.check(jit->kernel().code(), &args, jit->kernel().name() + ":" + to_string(level) + " " + k.desc);
            }
            ++n_checked;
        }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}
