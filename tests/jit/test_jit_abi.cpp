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
#include "jit/brgemm/jit_brgemm_kernel.hpp"
#include "ops/rnn/jit_rnn_cell_fwd_kernel.hpp"
#include "ops/bnorm/bnorm_jit.hpp"
#include "core/prb_parse.hpp"
#include "ops/conv/conv_jit.hpp"
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
        : code_(
                isa::avx2, [this](lambda_kernel_t &g) { emit(g); }, "checked_call") {
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
            EXPECT_EQ(state_.xinuse & xinuse_upper_bits, 0u)
                    << what << ": upper vector state left dirty (no vzeroupper)";
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

namespace {

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
            const brgemm_call_args_t args {batch, C.data(), 2};
            cc.check(k->generator().code(), &args, k->generator().name() + ":" + to_string(c));
            // Every element: alpha * 2 * K * 2 + beta * 3.
            EXPECT_EQ(C.back(), sh.alpha * 4.f * static_cast<float>(sh.K) + sh.beta * 3.f) << to_string(c);
            ++n_checked;
        }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}

TEST(JitAbi, EveryRnnCellKernelKeepsTheAbi) {
    checked_call_t cc;
    int n_checked = 0;
    const struct {
        rnn_cell cell;
        rnn_cell_part_t part;
        eltwise_alg act;
    } kinds[] = {{rnn_cell::vanilla_rnn, rnn_cell_part_t::full, eltwise_alg::tanh},
            {rnn_cell::vanilla_rnn, rnn_cell_part_t::full, eltwise_alg::relu},
            {rnn_cell::vanilla_rnn, rnn_cell_part_t::full, eltwise_alg::sigmoid},
            {rnn_cell::lstm, rnn_cell_part_t::full, eltwise_alg::tanh},
            {rnn_cell::gru, rnn_cell_part_t::gru_part1, eltwise_alg::tanh},
            {rnn_cell::gru, rnn_cell_part_t::gru_part2, eltwise_alg::tanh},
            {rnn_cell::lbr_gru, rnn_cell_part_t::full, eltwise_alg::tanh}};
    for (isa level : {isa::avx2, isa::avx512_core}) {
        if (detected_isa() < level) continue;
        const int hb = 2 * simd_w_of(level);
        for (const auto &kd : kinds)
            for (int n_valid : {hb, hb - 3}) { // a full panel, and one with a tail
                rnn_cell_conf_t c;
                std::string why;
                const std::int64_t LDG = 4 * hb, H = hb;
                ASSERT_EQ(
                        init_conf_rnn_cell(c, level, kd.cell, kd.part, kd.act, 0.1f, hb, n_valid, LDG, LDG, H, H, why),
                        status::success)
                        << why;
                std::unique_ptr<rnn_cell_kernel_t> k;
                ASSERT_EQ(rnn_cell_kernel_t::create(k, c, why), status::success) << why;
                const int rows = 3;
                std::vector<float> gates(rows * LDG, 0.f), gates_h(rows * LDG, 0.f), bias(4 * hb, 0.f);
                std::vector<float> h_prev(rows * H, 0.5f), h_new(rows * H, -1.f), cs(rows * H, 0.25f),
                        rh(rows * H, -1.f);
                const rnn_cell_call_args_t args {gates.data(), gates_h.data(), bias.data(), h_prev.data(), h_new.data(),
                        cs.data(), rh.data(), rows};
                cc.check(k->generator().code(), &args, k->generator().name() + ":" + to_string(c));
                // Zero pre-activations: a known first output of each kind.
                const float got = kd.part == rnn_cell_part_t::gru_part1 ? rh[0] : h_new[0];
                float want = 0.f;
                switch (kd.cell) {
                case rnn_cell::vanilla_rnn: want = kd.act == eltwise_alg::sigmoid ? 0.5f : 0.f; break;
                case rnn_cell::lstm: want = 0.5f * std::tanh(0.5f * 0.25f); break; // c = 0.5 c_prev
                case rnn_cell::gru:
                    want = kd.part == rnn_cell_part_t::gru_part1 ? 0.25f : 0.f;
                    break;                                   // part 2: u = 0 here
                case rnn_cell::lbr_gru: want = 0.25f; break; // o = 0, h = u h_prev
                }
                EXPECT_NEAR(got, want, 1e-6) << to_string(c);
                if (n_valid < H) {
                    const std::vector<float> &out = kd.part == rnn_cell_part_t::gru_part1 ? rh : h_new;
                    EXPECT_EQ(out[n_valid], -1.f) << "writes stop at n_valid: " << to_string(c);
                }
                ++n_checked;
            }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}

} // namespace

// Batch normalization: every kernel (statistics and normalization, forward and backward) of
// blocked (16c, 8c), channels-last with a channel tail and plain with a spatial tail layouts,
// called on a few points with valid buffers.
TEST(JitAbi, EveryBnormKernelKeepsTheAbi) {
    checked_call_t cc;
    int n_checked = 0;
    alignas(64) static float buf[5][1 << 14], prm[5 * 64], out[4 * 64];
    for (float &x : prm) x = 1.f; // positive variance, unit gamma
    for (isa level : {isa::avx2, isa::avx512_core}) {
        if (detected_isa() < level) continue;
        for (format_tag tag : {format_tag::nChw16c, format_tag::nChw8c, format_tag::nhwc, format_tag::nchw})
            for (bnorm_dir_t dir : {bnorm_dir_t::fwd_inference, bnorm_dir_t::fwd_training, bnorm_dir_t::bwd})
                for (bool global : {false, true}) {
                    if (global && dir != bnorm_dir_t::bwd) continue;
                    bnorm_jit_prb_t p;
                    p.dir = dir;
                    p.src = tensor_desc({2, 100, 3, 7}, tag); // channel tail (nhwc), spatial tail (nchw)
                    p.fuse_relu = true;
                    p.global_stats = global;
                    bnorm_machine_t m;
                    m.l3_bytes = 0; // streaming-store kernels too
                    std::unique_ptr<bnorm_jit_t> jit;
                    std::string why;
                    ASSERT_EQ(bnorm_jit_t::create(jit, p, level, m, why), status::success) << why;
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
                        cc.check(k->code(), &a, k->name() + ":" + to_string(level) + ":" + to_string(tag));
                        ++n_checked;
                    }
                }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}

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
                for (const kernel_ptr &ker : jit->kernels_shared())
                    cc.check(ker->code(), &args, ker->name() + ":" + to_string(level) + " " + k.desc);
            }
            ++n_checked;
        }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}
