// SPDX-License-Identifier: Apache-2.0
// The brgemm microkernel against a naive triple loop, per ISA: every M, N and K from 1 to 70
// (the other two seeded), seeded random shapes with padded leading dimensions, batches, alpha
// and beta; plus init_conf's blocking and its refusals. The GEMM driver (gemm_jit_t) on top of
// it: its panel width per machine model, and its results at each width. Small-integer fills keep
// every sum exact, so results must match bit for bit.
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/aligned_vector.hpp"
#include "core/machine_model.hpp"
#include "core/utils.hpp"
#include "jit/brgemm/jit_brgemm_kernel.hpp"
#include "jit/gemm/gemm_jit.hpp"
#include "jit/isa_traits.hpp"
#include "common/isa_param.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

struct gemm_case_t {
    std::int64_t M, N, K, LDA, LDB, LDC;
    int bs;
    float alpha, beta;
    std::string str() const {
        return cat(
                "M", M, "N", N, "K", K, " LDA", LDA, "LDB", LDB, "LDC", LDC, " bs", bs, " alpha", alpha, " beta", beta);
    }
};

// Small integers: every product and sum below is exact in f32.
void fill_int(std::vector<float> &v, std::mt19937 &gen, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    for (float &x : v) x = static_cast<float>(d(gen));
}

// Runs one case and compares with the naive loop; C's padding columns must stay untouched.
void check(isa level, const gemm_case_t &g, unsigned seed) {
    SCOPED_TRACE(cat(to_string(level), " ", g.str(), " seed ", seed));
    brgemm_conf_t c;
    std::string why;
    ASSERT_EQ(init_conf_brgemm(c, level, g.M, g.N, g.K, g.LDA, g.LDB, g.LDC, g.alpha, g.beta, why), status::success)
            << why;
    std::unique_ptr<brgemm_kernel_t> ker;
    ASSERT_EQ(brgemm_kernel_t::create(ker, c, why), status::success) << why;

    std::mt19937 gen(seed);
    // Exact sizes, so a read past the last element is a heap overflow under ASan.
    const std::int64_t a_size = (g.M - 1) * g.LDA + g.K, b_size = g.K ? (g.K - 1) * g.LDB + g.N : 0;
    std::vector<std::vector<float>> A(g.bs, std::vector<float>(a_size)), B(g.bs, std::vector<float>(b_size));
    for (int i = 0; i < g.bs; ++i) fill_int(A[i], gen, -3, 3), fill_int(B[i], gen, -3, 3);
    std::vector<float> C((g.M - 1) * g.LDC + g.N);
    fill_int(C, gen, -5, 5);
    std::vector<float> want = C;
    for (std::int64_t m = 0; m < g.M; ++m)
        for (std::int64_t n = 0; n < g.N; ++n) {
            float s = 0;
            for (int i = 0; i < g.bs; ++i)
                for (std::int64_t k = 0; k < g.K; ++k) s += A[i][m * g.LDA + k] * B[i][k * g.LDB + n];
            float &w = want[m * g.LDC + n];
            w = g.alpha * s + (g.beta != 0.f ? g.beta * w : 0.f);
        }
    std::vector<brgemm_batch_element_t> batch(g.bs);
    for (int i = 0; i < g.bs; ++i) batch[i] = {A[i].data(), b_size ? B[i].data() : nullptr};
    (*ker)(batch.data(), g.bs, C.data());
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(C.size()); ++i)
        ASSERT_EQ(C[i], want[i]) << "at m=" << i / g.LDC << " n=" << i % g.LDC << " conf " << to_string(c);
}

// Every size of one dimension (M, N, K), 1 to 70 (K from 0), the other two seeded random in
// 1..70 (drawn in M, N, K order); dense leading dimensions, one batch, alpha 1.
void every_size(isa level, int which, unsigned seed, float beta) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> d(1, 70);
    for (std::int64_t x = which == 2 ? 0 : 1; x <= 70; ++x) {
        std::int64_t mnk[3];
        for (int i = 0; i < 3; ++i) mnk[i] = i == which ? x : d(gen);
        const std::int64_t M = mnk[0], N = mnk[1], K = mnk[2];
        check(level, {M, N, K, std::max<std::int64_t>(K, 1), N, N, 1, 1.f, beta}, static_cast<unsigned>(x));
    }
}

class Brgemm : public bdtest::isa_test<isa> {};

TEST_P(Brgemm, EveryM) { every_size(level(), 0, 11, 0.f); }

TEST_P(Brgemm, EveryN) { every_size(level(), 1, 12, 1.f); }

TEST_P(Brgemm, EveryK) { every_size(level(), 2, 13, 0.f); }

TEST_P(Brgemm, SeededStridesBatchesAlphaBeta) {
    const unsigned seed = 2024;
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> dim(1, 70), pad(0, 9), bs(0, 3), pick(0, 3);
    const float alphas[] = {1.f, 2.f, 0.5f, -1.f}, betas[] = {0.f, 1.f, -1.5f, 2.f};
    for (int i = 0; i < 150; ++i) {
        const std::int64_t M = dim(gen), N = dim(gen), K = dim(gen);
        const gemm_case_t g {
                M, N, K, K + pad(gen), N + pad(gen), N + pad(gen), bs(gen), alphas[pick(gen)], betas[pick(gen)]};
        check(level(), g, seed + i);
    }
}

TEST_P(Brgemm, RnnAndGemmShapes) {
    // The register blocks the RNN and the GEMM driver use: panels of 4 gates x 16 hidden,
    // 64 rows, long K; one row (mb 1); a 512-wide panel with prefetch.
    const gemm_case_t cases[] = {
            {64, 64, 512, 512, 64, 2048, 1, 1.f, 1.f},
            {1, 256, 128, 128, 256, 512, 1, 1.f, 1.f},
            {10, 64, 10, 10, 64, 64, 2, 1.f, 0.f},
            {96, 64, 256, 512, 64, 512, 2, 1.f, 1.f},
    };
    unsigned s = 1;
    for (const gemm_case_t &g : cases) check(level(), g, s++);
}

INSTANTIATE_TEST_SUITE_P(Isa, Brgemm, ::testing::Values(isa::avx512_core, isa::avx2), bdtest::case_name());

TEST(BrgemmConf, Blocking) {
    // The blocking this test expects is the reference machine's, whatever the CPU's model.
    const machine_model_override_t reference {machine_model_t {}};
    brgemm_conf_t c;
    std::string why;
    ASSERT_EQ(init_conf_brgemm(c, isa::avx512_core, 64, 64, 512, 512, 64, 64, 1.f, 1.f, why), status::success);
    // 4 vectors of N: 6 rows x 4 vectors = 24 accumulators, 4 B vectors, 1 broadcast.
    EXPECT_EQ(c.ld_block, 4);
    EXPECT_EQ(c.bd_block, 6);
    EXPECT_EQ(c.bdb, 10);
    EXPECT_EQ(c.bd_block_tail, 4);
    EXPECT_EQ(c.rd_block, 8);
    EXPECT_EQ(c.rdb, 64);
    ASSERT_EQ(init_conf_brgemm(c, isa::avx2, 10, 20, 5, 5, 20, 20, 1.f, 0.f, why), status::success);
    // 3 ymm vectors, the last one 4 floats wide; K 5 unrolled completely.
    EXPECT_EQ(c.n_tail, 4);
    EXPECT_EQ(c.ld_block * c.ldb + c.ld_block_tail, 3);
    EXPECT_LE(c.bd_block * c.ld_block + c.ld_block + 2, 16);
    EXPECT_EQ(c.rd_block, 5);
    EXPECT_EQ(c.rdb, 1);
}

TEST(BrgemmConf, Refusals) {
    brgemm_conf_t c;
    std::string why;
    EXPECT_EQ(init_conf_brgemm(c, isa::scalar, 4, 4, 4, 4, 4, 4, 1.f, 0.f, why), status::unimplemented);
    EXPECT_NE(why.find("scalar"), std::string::npos) << why;
    EXPECT_EQ(init_conf_brgemm(c, isa::avx2, 0, 4, 4, 4, 4, 4, 1.f, 0.f, why), status::unimplemented);
    EXPECT_NE(why.find("M=0"), std::string::npos) << why;
    EXPECT_EQ(init_conf_brgemm(c, isa::avx2, 4, 4, 8, 7, 4, 4, 1.f, 0.f, why), status::unimplemented);
    EXPECT_NE(why.find("LDA=7"), std::string::npos) << why;
    EXPECT_EQ(
            init_conf_brgemm(c, isa::avx512_core, 1 << 20, 4, 8, 1 << 12, 4, 4, 1.f, 0.f, why), status::unimplemented);
    EXPECT_NE(why.find("int32"), std::string::npos) << why;
}

// The reference machine with 512-bit FMAs at full width (two pipes that each start one).
machine_model_t full_width_model() {
    machine_model_t m;
    m.avx512.full_width = true;
    return m;
}

// Cores whose FMAs outrun B's stream from L2 at every width but one vector: four full-width
// 512-bit pipes, three 256-bit ones.
machine_model_t many_pipes_model() {
    machine_model_t m = full_width_model();
    m.avx512.pipes = 4;
    m.avx2.pipes = 3;
    return m;
}

// The plan's blocking of an M x N x K problem (no code generated), for nthr threads (0: the
// pool's).
gemm_blocking_t plan(isa level, std::int64_t M, std::int64_t K, std::int64_t N = 512, int nthr = 0) {
    std::unique_ptr<gemm_jit_t> g;
    std::string why;
    EXPECT_EQ(gemm_jit_t::create(g, level, M, N, K, K, N, 0.f, why, {}, false, {}, nthr), status::success) << why;
    return g ? g->blocking() : gemm_blocking_t {};
}

std::int64_t panel_width(isa level, std::int64_t M, std::int64_t K, std::int64_t N = 512, int nthr = 0) {
    return plan(level, M, K, N, nthr).nb;
}

TEST(GemmConf, PanelWidthFromTheModel) {
    {
        // Split 512-bit FMAs take 24 cycles for 6 x 4 zmm, as long as B's 256 bytes from L2 at
        // 2/3 of 16 bytes a cycle: a tie keeps the widest. 6 x 2 ymm: 6 cycles each.
        const machine_model_override_t reference {machine_model_t {}};
        EXPECT_EQ(panel_width(isa::avx512_core, 3200, 512), 64);
        EXPECT_EQ(panel_width(isa::avx2, 3200, 512), 16);
    }
    {
        const machine_model_override_t full {full_width_model()};
        // 512 rows of B overflow half the 32 KiB L1 at any width. Full-width FMAs take 12
        // cycles for 6 x 4 zmm, 13.5 for 9 x 3 and 14 for 14 x 2, against 24, 18 and 12 for B.
        EXPECT_EQ(panel_width(isa::avx512_core, 3200, 512), 32);
        // 80 rows of 4 zmm (20 KiB) overflow half the L1, of 3 zmm (15 KiB) do not.
        EXPECT_EQ(panel_width(isa::avx512_core, 3200, 80), 48);
        // 64 rows of 4 zmm stay in L1.
        EXPECT_EQ(panel_width(isa::avx512_core, 3200, 64), 64);
        // M rows that fit one block read B once: 6 fit the 6 x 4 block, 9 the 9 x 3 one.
        EXPECT_EQ(panel_width(isa::avx512_core, 6, 512), 64);
        EXPECT_EQ(panel_width(isa::avx512_core, 9, 512), 48);
    }
    {
        // 14 x 2 zmm on four pipes: 7 cycles against B's 12; 6 x 2 ymm on three: 4 against 6.
        const machine_model_override_t many {many_pipes_model()};
        EXPECT_EQ(panel_width(isa::avx512_core, 3200, 512), 16);
        EXPECT_EQ(panel_width(isa::avx2, 3200, 512), 8);
        // The K chunks are the widest panel's whatever the width, so sums round alike on every
        // machine: 1100 over 1024 (a quarter of the 1 MiB L2 over 64-float rows) in 2 chunks.
        EXPECT_EQ(plan(isa::avx512_core, 3200, 1100).kc, 550);
    }
    const machine_model_override_t reference {machine_model_t {}};
    EXPECT_EQ(plan(isa::avx512_core, 3200, 1100).kc, 550);
}

// Rows that fit one register block read B once at any panel width, so the width only sets how
// many accumulators the block holds; the widest (2 ymm, 4 zmm) holds too few for 1 or 2 rows.
// On the reference model (FMA latency 4 + the model's margin of 2, two pipes, two load ports)
// one row of N 512 on AVX2 prices a step of each 11-vector panel at 6 cycles (5 of them and one
// of 9 vectors: 36) and of each 13-vector one at 7 (4 and one of 12 at 6.5: 34.5), within 5%
// of each other, so the narrower 88 floats win; 2 ymm would take 32 panels of 6 cycles. On 16
// threads the busiest thread's panels decide: 16 panels of 4 vectors give each thread one.
TEST(GemmConf, FewRowsWidenThePanel) {
    const machine_model_override_t reference {machine_model_t {}};
    // K 128, planned for `nthr` threads (the count create() is told, whatever the pool's size).
    auto nb_of = [](isa level, std::int64_t M, std::int64_t N, int nthr) {
        return panel_width(level, M, 128, N, nthr);
    };
    EXPECT_EQ(nb_of(isa::avx2, 1, 512, 1), 88);
    // Every row count that fits the widest block: at least as wide, and enough accumulators for
    // the FMA latency x pipes where N has the vectors for them.
    for (isa level : {isa::avx512_core, isa::avx2}) {
        const fma_unit_t &f = machine_model().fma(level);
        const std::int64_t simd_w = simd_w_of(level), widest = (level == isa::avx512_core ? 4 : 2) * simd_w;
        for (std::int64_t M : {1, 2, 3})
            for (std::int64_t N : {40, 100, 512, 1000}) {
                const std::int64_t nb = nb_of(level, M, N, 1);
                SCOPED_TRACE(cat(to_string(level), " M", M, " N", N, " nb", nb));
                EXPECT_GE(nb, widest);
                brgemm_conf_t c;
                std::string why;
                ASSERT_EQ(
                        init_conf_brgemm(c, level, M, std::min(nb, N), 128, 128, nb, N, 1.f, 0.f, why), status::success)
                        << why;
                if (M * div_up(N, simd_w) >= f.latency * f.pipes) {
                    EXPECT_GE(c.bd_block * c.ld_block, f.latency * f.pipes) << to_string(c);
                }
            }
    }
    // Rows whose widest block keeps both pipes busy keep it: 3 x 4 zmm (12 FMAs, 6 cycles at two
    // a cycle, as long as the latency's 6) and 6 x 4. 5 x 2 ymm waits on the latency (6 cycles
    // against 5 of FMAs), but no wider block holds 5 rows in 15 registers, so the split blocks
    // price dearer and 2 ymm stays.
    EXPECT_EQ(nb_of(isa::avx512_core, 3, 512, 1), 64);
    EXPECT_EQ(nb_of(isa::avx512_core, 6, 512, 1), 64);
    EXPECT_EQ(nb_of(isa::avx2, 5, 512, 1), 16);
    // Nor do threads widen them: 600 columns in 10 panels of 64 share unevenly over two threads,
    // but the driver's split of rows and panels is what balances those.
    EXPECT_EQ(nb_of(isa::avx512_core, 6, 600, 2), 64);
    // On 16 threads the busiest thread's panels decide: 16 panels of 4 ymm, one a thread.
    EXPECT_EQ(nb_of(isa::avx2, 1, 512, 16), 32);
}

// B past the threads' L2 (1000 x 2048 floats, 8 MB, against the reference's 1 MiB) streams at
// most a vector a cycle, so a block needs latency x min(M, pipes) accumulators and no more: on
// the reference model (latency 4, two pipes) 1 and 2 rows take 4 ymm, 3 rows 3 ymm (9
// accumulators for the 8 chains), 4 rows and AVX-512 (split: one zmm FMA a cycle) keep the
// widest. One or two threads do not change it: B stays past both threads' L2.
TEST(GemmConf, FewRowsPastL2HoldTheLatency) {
    {
        const machine_model_override_t reference {machine_model_t {}};
        for (int nthr : {1, 2}) {
            EXPECT_EQ(panel_width(isa::avx2, 1, 2048, 1000, nthr), 32);
            EXPECT_EQ(panel_width(isa::avx2, 2, 2048, 1000, nthr), 32);
            EXPECT_EQ(panel_width(isa::avx2, 3, 2048, 1000, nthr), 24);
            EXPECT_EQ(panel_width(isa::avx2, 4, 2048, 1000, nthr), 16);
            EXPECT_EQ(panel_width(isa::avx512_core, 1, 2048, 1000, nthr), 64);
        }
        // N narrower than the chains: one panel of N's vectors, at least the widest.
        EXPECT_EQ(panel_width(isa::avx2, 1, 65536, 24, 1), 24);
        EXPECT_EQ(panel_width(isa::avx2, 1, 65536, 8, 1), 16);
        // The past-L2 shapes of GemmJit.MatchesNaiveAtEachPanelWidth (B 1.1 to 1.2 MB) get
        // these widths, not the widest.
        EXPECT_EQ(panel_width(isa::avx2, 1, 1000, 300, 1), 32);
        EXPECT_EQ(panel_width(isa::avx2, 2, 1100, 260, 1), 32);
        EXPECT_EQ(panel_width(isa::avx2, 3, 1000, 301, 1), 24);
    }
    machine_model_t slow;
    slow.avx2.latency = slow.avx512.latency = 5;
    {
        // Split 512-bit FMAs start one a cycle: 2 rows need 5 chains, which 4 zmm hold. At full
        // width they start two: 10 chains, 5 zmm.
        const machine_model_override_t split {slow};
        EXPECT_EQ(panel_width(isa::avx512_core, 1, 2048, 1000, 1), 80);
        EXPECT_EQ(panel_width(isa::avx512_core, 2, 2048, 1000, 1), 64);
        machine_model_t full = slow;
        full.avx512.full_width = true;
        const machine_model_override_t wide {full};
        EXPECT_EQ(panel_width(isa::avx512_core, 2, 2048, 1000, 1), 80);
    }
    const machine_model_override_t override {slow};
    EXPECT_EQ(panel_width(isa::avx2, 1, 2048, 1000, 1), 40);
    EXPECT_EQ(panel_width(isa::avx2, 2, 2048, 1000, 1), 40);
    // 3 rows would take 4 ymm for the 10 chains, but 3 x 4 accumulators and 4 B vectors do not
    // fit beside the broadcast: the most 3 rows hold is 3 ymm.
    EXPECT_EQ(panel_width(isa::avx2, 3, 2048, 1000, 1), 24);
}

// Sizes the GEMM cannot take are refused by name: empty ones before any blocking rule divides
// by them, panel widths that are not whole vectors, and offsets past 32 bits with the GEMM's
// own sizes beside the kernel's (which names its K chunk).
TEST(GemmConf, RefusalsNameTheSizes) {
    const machine_model_override_t reference {machine_model_t {}};
    const struct { std::int64_t M, N, K; } bad[] = {{0, 1000, 2048}, {-1, 1000, 2048}, {1, 0, 64}, {4, 16, -1}};
    for (const auto &b : bad)
        for (isa level : {isa::avx512_core, isa::avx2}) {
            std::unique_ptr<gemm_jit_t> g;
            std::string why;
            EXPECT_EQ(gemm_jit_t::create(g, level, b.M, b.N, b.K, std::max<std::int64_t>(b.K, 1),
                              std::max<std::int64_t>(b.N, 1), 0.f, why, {}, false, {}, 1),
                    status::unimplemented);
            EXPECT_NE(why.find(cat("M=", b.M, " N=", b.N, " K=", b.K)), std::string::npos) << why;
            EXPECT_FALSE(g);
        }
    std::unique_ptr<gemm_jit_t> g;
    std::string why;
    for (std::int64_t nb : {12, -16}) {
        EXPECT_EQ(gemm_jit_t::create(g, isa::avx2, 4, 64, 64, 64, 64, 0.f, why, {0, 0, nb}, false),
                status::unimplemented);
        EXPECT_NE(why.find(cat("nb=", nb, ", expected a positive multiple of 8")), std::string::npos) << why;
    }
    const std::int64_t K = std::int64_t {1} << 29; // 2 rows of A span 4 GiB
    EXPECT_EQ(gemm_jit_t::create(g, isa::avx2, 2, 16, K, K, 16, 0.f, why, {}, false), status::unimplemented);
    EXPECT_NE(why.find(cat("gemm: M=2 N=16 K=", K, " LDA=", K)), std::string::npos) << why;
    EXPECT_NE(why.find("exceed int32"), std::string::npos) << why;
}

// A plan made without code (jit = false) describes itself from its blocking alone; a made one
// adds its full tile's kernel.
TEST(GemmConf, PlannedOnlyPrintsWithoutKernels) {
    const machine_model_override_t reference {machine_model_t {}};
    for (bool jit : {false, true}) {
        if (jit && detected_isa() < isa::avx2) continue;
        std::unique_ptr<gemm_jit_t> g;
        std::string why;
        ASSERT_EQ(gemm_jit_t::create(g, isa::avx2, 64, 96, 40, 40, 96, 0.f, why, {}, jit), status::success) << why;
        const std::string s = g->str();
        EXPECT_EQ(s.rfind("M64N96K40 mc64 kc40 nb", 0), 0u) << s;
        EXPECT_EQ(s.find("planned only, no kernels") != std::string::npos, !jit) << s;
        if (!jit) continue;
        EXPECT_FALSE(g->kernels().empty());
        const std::string kernel = to_string(g->main_kernel().conf());
        ASSERT_GE(s.size(), kernel.size());
        EXPECT_EQ(s.substr(s.size() - kernel.size()), kernel) << s;
    }
}

// The panel width orders no sum: plans for 1, 2 and 16 threads (different widths for few rows)
// give the same bits on real-valued data, where a different order of the K terms would round
// differently.
TEST(GemmConf, PanelWidthKeepsTheBits) {
    const machine_model_override_t reference {machine_model_t {}};
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (detected_isa() < level) continue;
        for (std::int64_t M : {1, 2})
            for (std::int64_t N : {100, 512, 1000}) {
                const std::int64_t K = 300;
                std::mt19937 gen(static_cast<unsigned>(M * 7919 + N));
                std::uniform_real_distribution<float> d(-1.f, 1.f);
                std::vector<float> A(M * K), B(K * N);
                for (float &x : A) x = d(gen);
                for (float &x : B) x = d(gen);
                std::vector<float> first;
                std::set<std::int64_t> widths;
                for (int nthr : {1, 2, 16}) {
                    std::unique_ptr<gemm_jit_t> g;
                    std::string why;
                    ASSERT_EQ(
                            gemm_jit_t::create(g, level, M, N, K, K, N, 0.f, why, {}, true, {}, nthr), status::success)
                            << why;
                    widths.insert(g->blocking().nb);
                    std::vector<float> Bp(g->packed_b().size()), C(M * N);
                    gemm_pack_b(g->packed_b(), B.data(), N, Bp.data());
                    g->execute(A.data(), Bp.data(), C.data(), 1);
                    if (first.empty()) first = C;
                    ASSERT_EQ(std::memcmp(C.data(), first.data(), C.size() * sizeof(float)), 0)
                            << to_string(level) << " M" << M << " N" << N << ": " << g->str();
                }
                EXPECT_GT(widths.size(), 1u) << to_string(level) << " M" << M << " N" << N;
            }
    }
}

// The naive loop's C for the driver: A (M x K), B (K x N), C0 (rows LDC apart) as C was; beta
// 0 ignores C0 (a NaN there stays out), then the bias per column and relu (NaN stays).
std::vector<float> naive_gemm(const std::vector<float> &A, const std::vector<float> &B, const std::vector<float> &C0,
        std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t LDC, float beta, const gemm_epilogue_t &epi = {},
        const std::vector<float> &bias = {}) {
    std::vector<float> want = C0;
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            float r = 0;
            for (std::int64_t k = 0; k < K; ++k) r += A[i * K + k] * B[k * N + j];
            if (beta != 0.f) r += beta * C0[i * LDC + j];
            if (epi.bias) r += bias[j];
            if (epi.relu) r = std::isnan(r) || r > 0 ? r : 0.f;
            want[i * LDC + j] = r;
        }
    return want;
}

class GemmJit : public bdtest::isa_test<isa> {};

// The driver against the naive loop under each model's panel width (64 to 16 floats on
// AVX-512, 16 and 8 on AVX2, wider for 1 to 3 rows, B in L2 or past it), with tails in M, N
// and K (K = 4200 comes in chunks on both ISAs), beta 0 and 1, on one thread and two.
TEST_P(GemmJit, MatchesNaiveAtEachPanelWidth) {
    struct shape_t {
        std::int64_t M, N, K;
        float beta;
    };
    // The first four plus few rows, whose panels widen past the widest (B within the models'
    // 1 MiB L2; a partial last panel; N 100 in one panel wider than N; K 2000 in two
    // chunks), then few rows whose B is past that L2 (their widths: FewRowsPastL2HoldTheLatency).
    const shape_t shapes[] = {{131, 100, 4200, 0.f}, {7, 48, 80, 1.f}, {300, 37, 512, 1.f}, {130, 200, 64, 0.f},
            {1, 1000, 200, 0.f}, {2, 517, 64, 1.f}, {3, 100, 2000, 0.f}, {1, 100, 64, 1.f}, {1, 300, 1000, 0.f},
            {2, 260, 1100, 1.f}, {3, 301, 1000, 0.f}};
    for (const machine_model_t &m : {machine_model_t {}, full_width_model(), many_pipes_model()}) {
        const machine_model_override_t pin {m};
        unsigned seed = 1;
        for (const shape_t &sh : shapes) {
            std::unique_ptr<gemm_jit_t> g;
            std::string why;
            // Planned for one thread, as wide as few rows get on any host.
            ASSERT_EQ(gemm_jit_t::create(g, level(), sh.M, sh.N, sh.K, sh.K, sh.N, sh.beta, why, {}, true, {}, 1),
                    status::success)
                    << why;
            SCOPED_TRACE(cat("avx512 pipes ", m.avx512.pipes, m.avx512.full_width ? " full" : " split", ", avx2 pipes ",
                    m.avx2.pipes, ": ", g->str()));
            std::mt19937 gen(seed++);
            std::vector<float> A(sh.M * sh.K), B(sh.K * sh.N), C0(sh.M * sh.N);
            fill_int(A, gen, -3, 3), fill_int(B, gen, -3, 3), fill_int(C0, gen, -5, 5);
            const std::vector<float> want = naive_gemm(A, B, C0, sh.M, sh.N, sh.K, sh.N, sh.beta);
            std::vector<float> Bp(g->packed_b().size());
            gemm_pack_b(g->packed_b(), B.data(), sh.N, Bp.data());
            for (int nthr : {1, 2}) {
                std::vector<float> C = C0;
                g->execute(A.data(), Bp.data(), C.data(), nthr);
                for (std::int64_t i = 0; i < sh.M * sh.N; ++i)
                    ASSERT_EQ(C[i], want[i]) << "at m=" << i / sh.N << " n=" << i % sh.N << " threads " << nthr;
            }
        }
    }
}

// The epilogue (bias per column, relu) against the naive loop: one K chunk and several (K 4201
// in chunks and a tail, 4200 in even chunks, on both ISAs), partial panels, beta 0, 1 and -1.5,
// 1 and 2 threads; one-row kernels whose accumulators take every register but the broadcast
// (15-vector panels, M 1, and a one-row tail of 8-row chunks). Row 0's sums are 0 and C starts
// with a NaN there: relu keeps it where beta reads it.
TEST_P(GemmJit, EpilogueOnTheLastChunk) {
    struct shape_t {
        std::int64_t M, N, K;
        float beta;
        gemm_epilogue_t epi;
        gemm_blocking_t blk;
    };
    const std::int64_t wide = 15 * (level() == isa::avx512_core ? 16 : 8);
    const shape_t shapes[] = {{37, 100, 300, 0.f, {true, true}, {}}, {61, 70, 4201, 1.f, {true, true}, {}},
            {13, 130, 4200, 0.f, {false, true}, {}}, {20, 48, 4201, 1.f, {true, false}, {}},
            {1, 2 * wide, 300, 0.f, {true, true}, {0, 0, wide}}, {17, wide, 200, -1.5f, {false, true}, {8, 0, wide}},
            {1, wide, 100, -1.5f, {true, true}, {0, 0, wide}}};
    unsigned seed = 7;
    for (const shape_t &sh : shapes) {
        std::unique_ptr<gemm_jit_t> g;
        std::string why;
        ASSERT_EQ(gemm_jit_t::create(g, level(), sh.M, sh.N, sh.K, sh.K, sh.N, sh.beta, why, sh.blk, true, sh.epi),
                status::success)
                << why;
        SCOPED_TRACE(g->str());
        std::mt19937 gen(seed++);
        std::vector<float> A(sh.M * sh.K), B(sh.K * sh.N), C0(sh.M * sh.N), bias(sh.N);
        fill_int(A, gen, -3, 3), fill_int(B, gen, -3, 3), fill_int(C0, gen, -5, 5), fill_int(bias, gen, -9, 9);
        // Row 0: A zero, so the sums are 0 and C0 + bias decides; a NaN in C0 where beta reads it.
        std::fill(A.begin(), A.begin() + sh.K, 0.f);
        C0[0] = std::nanf("");
        const std::vector<float> want = naive_gemm(A, B, C0, sh.M, sh.N, sh.K, sh.N, sh.beta, sh.epi, bias);
        std::vector<float> Bp(g->packed_b().size());
        gemm_pack_b(g->packed_b(), B.data(), sh.N, Bp.data());
        for (int nthr : {1, 2}) {
            std::vector<float> C = C0;
            g->execute(A.data(), Bp.data(), C.data(), nthr, bias.data());
            ASSERT_EQ(std::memcmp(C.data(), want.data(), C.size() * sizeof(float)), 0)
                    << "threads " << nthr << ", C[0] " << C[0];
        }
    }
}

// A C larger than the last-level cache the threads may count on (a model with 16 KiB of it
// pinned), written once, is stored non-temporally: beta 0, one K chunk, rows whole cache lines
// apart. Into a C on a cache line the streaming kernels run; into one a float or 8 floats past
// it (32 bytes: a ymm boundary, no zmm or line boundary), and wherever the caller reads C next,
// the regular ones. All give the naive loop's values, leave the columns past N as they were,
// on 1 and 2 threads. A partial last vector (N 100 of LDC 112), the epilogue, a tail row chunk.
// beta 1, K in chunks, rows 104 floats apart (whole ymm vectors, not whole lines) and a C that
// fits keep regular stores.
TEST_P(GemmJit, StreamsCPastTheLastLevelCache) {
    machine_model_t m;
    m.l3_share_bytes = 16 << 10;
    m.cores = 1;
    const machine_model_override_t pin {m};
    struct shape_t {
        std::int64_t M, N, LDC, K;
        float beta;
        gemm_epilogue_t epi;
        bool streams;
    };
    const shape_t shapes[] = {{131, 100, 112, 300, 0.f, {true, true}, true}, {70, 64, 64, 64, 0.f, {}, true},
            {700, 37, 48, 100, 0.f, {false, true}, true}, {70, 64, 64, 64, 1.f, {}, false},
            {70, 64, 64, 4200, 0.f, {}, false}, {131, 100, 104, 300, 0.f, {}, false}, {7, 48, 48, 80, 0.f, {}, false}};
    unsigned seed = 11;
    for (const shape_t &sh : shapes) {
        std::unique_ptr<gemm_jit_t> g;
        std::string why;
        ASSERT_EQ(gemm_jit_t::create(g, level(), sh.M, sh.N, sh.K, sh.K, sh.LDC, sh.beta, why, {}, true, sh.epi),
                status::success)
                << why;
        SCOPED_TRACE(g->str());
        EXPECT_EQ(g->streams_c(), sh.streams);
        int streaming_kernels = 0;
        for (const brgemm_kernel_t *k : g->kernels()) streaming_kernels += k->conf().stream_c;
        if (sh.streams) EXPECT_GT(streaming_kernels, 0);
        else EXPECT_EQ(streaming_kernels, 0);

        std::mt19937 gen(seed++);
        std::vector<float> A(sh.M * sh.K), B(sh.K * sh.N), C0(sh.M * sh.LDC), bias(sh.N);
        fill_int(A, gen, -3, 3), fill_int(B, gen, -3, 3), fill_int(C0, gen, -5, 5), fill_int(bias, gen, -9, 9);
        const std::vector<float> want = naive_gemm(A, B, C0, sh.M, sh.N, sh.K, sh.LDC, sh.beta, sh.epi, bias);
        std::vector<float> Bp(g->packed_b().size());
        gemm_pack_b(g->packed_b(), B.data(), sh.N, Bp.data());
        for (std::int64_t shift : {0, 1, 8})
            for (bool read_next : {false, true})
                for (int nthr : {1, 2}) {
                    // aligned_vector starts on a cache line.
                    aligned_vector<float> buf(C0.size() + 8);
                    float *C = buf.data() + shift;
                    EXPECT_EQ(g->streams_into(C), sh.streams && shift == 0);
                    std::copy(C0.begin(), C0.end(), C);
                    g->execute(A.data(), Bp.data(), C, nthr, bias.data(), read_next);
                    ASSERT_EQ(std::memcmp(C, want.data(), want.size() * sizeof(float)), 0)
                            << "C shifted by " << shift << " floats, read next " << read_next << ", threads " << nthr;
                }
    }
}

TEST(BrgemmKernel, StreamingNeedsRowsOnVectorBoundaries) {
    for (isa level : {isa::avx512_core, isa::avx2}) {
        brgemm_conf_t c;
        std::string why;
        ASSERT_EQ(init_conf_brgemm(c, level, 4, 20, 8, 8, 20, 20, 1.f, 0.f, why), status::success) << why;
        c.stream_c = true;
        std::unique_ptr<brgemm_kernel_t> ker;
        EXPECT_EQ(brgemm_kernel_t::create(ker, c, why), status::unimplemented);
        EXPECT_NE(why.find("LDC=20"), std::string::npos) << why;
    }
}

INSTANTIATE_TEST_SUITE_P(Isa, GemmJit, ::testing::Values(isa::avx512_core, isa::avx2), bdtest::case_name());

} // namespace
