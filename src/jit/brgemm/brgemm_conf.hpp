// SPDX-License-Identifier: Apache-2.0
// Batch-reduce GEMM (brgemm), f32: the problem and the register blocking of one kernel.
//   C[M x N] = alpha * sum_{i < bs} A_i[M x K] * B_i[K x N] + beta * C
// optionally followed by a bias per column and a relu (the epilogue fields).
// A_i, B_i and C are row-major with leading dimensions LDA, LDB, LDC (elements); the names
// follow oneDNN's brgemm (brgemm_types.hpp): bs, M, N, K, LDA, LDB, LDC, bd_block (rows of C
// per register block), ld_block (vectors of C per register block), rd_block (K unroll).
#pragma once

#include <cstdint>
#include <string>

#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"

namespace blockdnn::impl {

/// One (A_i, B_i) pair of the batch the kernel reduces over, read by the kernel at run time.
struct brgemm_batch_element_t {
    const float *A;
    const float *B;
};

struct brgemm_conf_t {
    isa level = isa::avx512_core;
    // Problem. bs is a run-time argument; the rest is fixed when the kernel is generated.
    std::int64_t M = 0, N = 0, K = 0, LDA = 0, LDB = 0, LDC = 0;
    float alpha = 1.f, beta = 0.f;
    // Register blocking (decided by init_conf_brgemm).
    int simd_w = 0;
    int bd_block = 0, bdb = 0, bd_block_tail = 0; // rows per block; full blocks; rows of the last, partial one
    int ld_block = 0, ldb = 0, ld_block_tail = 0; // vectors per block; full blocks; vectors of the partial one
    int n_tail = 0;                               // floats in the last vector of a row when N % simd_w != 0
    int rd_block = 0, rdb = 0, rd_block_tail = 0; // K unroll; unrolled iterations; K left after them
    bool prefetch_c = false;                      // prefetch each C block while its K loop runs
    bool b_in_regs = true;                        // B vectors loaded into registers (M = 1: FMA memory operands)
    // Epilogue, set by the caller after init_conf_brgemm: after alpha and beta, add the call's
    // bias (one float per column of C), then relu (x > 0 ? x : 0; NaN stays).
    bool with_bias = false;
    bool relu = false;
    // Full vectors of C stored non-temporally (vmovntps, then an sfence before the kernel
    // returns), for a C that would mostly leave the cache before anything reads it. Every row
    // of C must start on a vector boundary: LDC a multiple of simd_w (brgemm_kernel_t::create
    // checks) and the call's C aligned to simd_w floats (the caller's duty). A partial last
    // vector is stored as without it.
    bool stream_c = false;
};

/// Optional wishes of a caller (a driver that knows its data better than the defaults).
struct brgemm_hints_t {
    int bd_block = 0;        // 0: the kernel picks
    int ld_block = 0;        // 0: the kernel picks
    bool prefetch_c = false; // C is cold (e.g. written long ago): prefetch it during the K loop
};

/// Fills `c` for the problem on `level` (avx512_core or avx2) from the machine model
/// (machine_model()); no JIT.
/// Returns unimplemented with the reason in `why` for a problem the kernel does not take
/// (a size < 1 (K may be 0: then C = beta * C), a leading dimension below the row length,
/// byte offsets beyond int32, an ISA without a JIT kernel).
status init_conf_brgemm(brgemm_conf_t &c, isa level, std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t LDA,
        std::int64_t LDB, std::int64_t LDC, float alpha, float beta, std::string &why,
        const brgemm_hints_t &hints = {});

/// Cycles the machine model gives one K step over all of `c`'s C: each register block's FMAs,
/// bound by the FMA latency, the FMA pipes or the load ports. For drivers that compare shapes
/// of the calls they make (wider or narrower panels); the kernel itself does not read it.
double brgemm_step_cycles(const brgemm_conf_t &c);

/// "avx512_core M64N64K512 LDA512LDB64LDC2048 alpha1 beta1 bd_block6x10+4 ld_block4x1+0 ..."
std::string to_string(const brgemm_conf_t &c);

} // namespace blockdnn::impl
