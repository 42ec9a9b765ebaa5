// SPDX-License-Identifier: Apache-2.0
// Register blocking of the brgemm kernel: how many rows (bd_block) and vectors (ld_block) of C
// one register block holds, chosen with a small cost model of one K step.
#include <algorithm>
#include <limits>

#include "core/machine_model.hpp"
#include "core/utils.hpp"
#include "jit/brgemm/brgemm_conf.hpp"
#include "jit/isa_traits.hpp"

namespace blockdnn::impl {

namespace {

// One K step of a block takes at least the FMA latency, however few accumulators it has. The
// model counts 2 cycles more: with exactly latency x pipes accumulators any load delay stalls
// the chain, so blocks with more accumulators run faster (docs/tuning.md, "brgemm
// accumulators").
constexpr double fma_latency_margin = 2.0;
// K steps unrolled per loop iteration: enough to hide the loop's adds and branch.
constexpr int rd_unroll = 8;
// Up to this K the loop is unrolled completely (small RNN cells: no loop at all).
constexpr int rd_full_unroll_max = 16;

// Loads add a small cost beyond the bound, so that among equally fast blockings the one that
// reuses each B vector over more rows (fewer loads, less L1 traffic) wins.
constexpr double load_tiebreak = 1e-3;

// Cycles of one K step of a bd x ld block: FMA latency, FMA throughput (one FMA per pipe and
// cycle) or loads (ld B vectors and bd A broadcasts, one load port each).
double block_step_cycles(const fma_unit_t &f, int load_ports, int bd, int ld) {
    const double latency = f.latency + fma_latency_margin;
    return std::max({latency, static_cast<double>(bd * ld) / f.pipes, static_cast<double>(bd + ld) / load_ports})
            + load_tiebreak * (bd + ld);
}

// Cycles of one K step over all of C for ld vectors per block, with bd rows per block.
double cost(const machine_model_t &m, isa level, std::int64_t M, int nv, int bd, int ld) {
    const fma_unit_t &f = m.fma(level);
    auto step = [&](int b, int l) { return block_step_cycles(f, m.load_ports, b, l); };
    const int ldb = nv / ld, ld_tail = nv % ld;
    const std::int64_t bdb = M / bd;
    const int bd_tail = static_cast<int>(M % bd);
    double per_ld_block = static_cast<double>(bdb) * step(bd, ld);
    if (bd_tail) per_ld_block += step(bd_tail, ld);
    double total = ldb * per_ld_block;
    if (ld_tail) {
        total += static_cast<double>(bdb) * step(bd, ld_tail);
        if (bd_tail) total += step(bd_tail, ld_tail);
    }
    return total;
}

// The most rows whose accumulators, plus ld B vectors, fit beside `reserved` registers.
int bd_max_for(int avail, int ld) { return (avail - ld) / ld; }

// Spreads rows evenly over the fewest blocks: M = 10 with at most 6 rows per block gives 5 + 5
// rather than 6 + 4 (the same two blocks, and one kernel body instead of two).
int balanced_bd(std::int64_t M, int bd_max) {
    const std::int64_t n_blocks = div_up(M, bd_max);
    return static_cast<int>(div_up(M, n_blocks));
}

} // namespace

status init_conf_brgemm(brgemm_conf_t &c, isa level, std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t LDA,
        std::int64_t LDB, std::int64_t LDC, float alpha, float beta, std::string &why, const brgemm_hints_t &hints) {
    if (level != isa::avx512_core && level != isa::avx2) {
        why = cat("brgemm: no JIT kernel for isa ", to_string(level));
        return status::unimplemented;
    }
    if (M < 1 || N < 1 || K < 0) {
        why = cat("brgemm: M=", M, " N=", N, " K=", K, " must be positive (K >= 0)");
        return status::unimplemented;
    }
    if (LDA < K || LDB < N || LDC < N) {
        why = cat("brgemm: LDA=", LDA, " LDB=", LDB, " LDC=", LDC, " must be at least K=", K, ", N=", N, ", N");
        return status::unimplemented;
    }
    // Every displacement the kernel emits is an int32 byte offset.
    constexpr std::int64_t max_bytes = std::numeric_limits<std::int32_t>::max();
    if (M * LDA * 4 > max_bytes || (K + 1) * LDB * 4 > max_bytes || M * LDC * 4 > max_bytes) {
        why = cat("brgemm: byte offsets of M=", M, " K=", K, " LDA=", LDA, " LDB=", LDB, " LDC=", LDC, " exceed int32");
        return status::unimplemented;
    }

    c = brgemm_conf_t {};
    c.level = level;
    c.M = M, c.N = N, c.K = K, c.LDA = LDA, c.LDB = LDB, c.LDC = LDC;
    c.alpha = alpha, c.beta = beta;
    c.simd_w = simd_w_of(level);
    c.prefetch_c = hints.prefetch_c;

    const int nv = static_cast<int>(div_up(N, c.simd_w));
    c.n_tail = static_cast<int>(N % c.simd_w);
    // Registers left for accumulators and B vectors: one holds the A broadcast; AVX2 keeps its
    // tail mask in a vector register too (AVX-512 uses an opmask).
    const int avail = n_vregs_of(level) - 1 - (level == isa::avx2 && c.n_tail ? 1 : 0);

    const machine_model_t &m = machine_model();
    int best_ld = 1, best_bd = 1;
    double best = std::numeric_limits<double>::max();
    if (M == 1) {
        // One row: B is read once per FMA whatever the blocking, so the FMAs take it straight
        // from memory (b_in_regs = false) and every register but the broadcast (and AVX2's
        // tail temp) holds an accumulator. A wide block reads B rows contiguously.
        c.b_in_regs = false;
        const int acc_max = avail - (level == isa::avx2 && c.n_tail ? 1 : 0);
        best_ld = hints.ld_block ? std::min(hints.ld_block, acc_max) : std::min(nv, acc_max);
        best_ld = static_cast<int>(div_up(nv, div_up(nv, best_ld))); // even blocks
    } else {
        const int ld_hi = std::min(nv, avail - 1);
        for (int ld = 1; ld <= ld_hi; ++ld) {
            if (hints.ld_block && ld != std::min(hints.ld_block, ld_hi)) continue;
            const int bd_max = bd_max_for(avail, ld);
            if (bd_max < 1) break;
            int bd = balanced_bd(M, bd_max);
            if (hints.bd_block)
                bd = std::min<int>({hints.bd_block, bd_max, static_cast<int>(std::min<std::int64_t>(M, bd_max))});
            const double t = cost(m, level, M, nv, bd, ld);
            if (t < best) best = t, best_ld = ld, best_bd = bd;
        }
    }
    c.ld_block = best_ld;
    c.ldb = nv / best_ld;
    c.ld_block_tail = nv % best_ld;
    c.bd_block = best_bd;
    c.bdb = static_cast<int>(M / best_bd);
    c.bd_block_tail = static_cast<int>(M % best_bd);

    c.rd_block = K <= rd_full_unroll_max ? static_cast<int>(K) : rd_unroll;
    c.rdb = c.rd_block ? static_cast<int>(K / c.rd_block) : 0;
    c.rd_block_tail = c.rd_block ? static_cast<int>(K % c.rd_block) : 0;
    return status::success;
}

double brgemm_step_cycles(const brgemm_conf_t &c) {
    const int nv = static_cast<int>(div_up(c.N, c.simd_w));
    return cost(machine_model(), c.level, c.M, nv, c.bd_block, c.ld_block);
}

std::string to_string(const brgemm_conf_t &c) {
    return cat(to_string(c.level), " M", c.M, "N", c.N, "K", c.K, " LDA", c.LDA, "LDB", c.LDB, "LDC", c.LDC, " alpha",
            c.alpha, " beta", c.beta, " bd_block", c.bd_block, "x", c.bdb, "+", c.bd_block_tail, " ld_block",
            c.ld_block, "x", c.ldb, "+", c.ld_block_tail, " n_tail", c.n_tail, " rd_block", c.rd_block, "x", c.rdb, "+",
            c.rd_block_tail, c.prefetch_c ? " prefetch_c" : "", c.b_in_regs ? "" : " b_from_memory",
            c.with_bias ? " bias" : "", c.relu ? " relu" : "", c.stream_c ? " stream_c" : "");
}

} // namespace blockdnn::impl
