// SPDX-License-Identifier: Apache-2.0
// The brgemm microkernel, f32, AVX-512 and AVX2 from one generator (see brgemm_conf.hpp for
// the operation). One call computes all of C for a batch of (A_i, B_i) pairs:
//   for each ld block of C (ld_block vectors, the last one masked when N % simd_w != 0):
//     for each bd block (bd_block rows, then bd_block_tail):
//       acc = 0
//       for i < bs:  for k < K (unrolled by rd_block):
//         b[v] = B_i[k][n0 + v * simd_w ...]                      (ld_block vector loads)
//         acc[m][v] += broadcast(A_i[m0 + m][k]) * b[v]           (bd_block broadcasts)
//       C[m0.., n0..] = alpha * acc + beta * C   (then bias[n0..] and relu, if the conf says;
//                                                 non-temporal stores with stream_c)
// The accumulators stay in registers for the whole batch, so C is read and written once.
// With one row (M = 1) the B vectors are the FMAs' memory operands instead of registers, so up
// to n_vregs - 1 vectors of C accumulate at once and B streams row after row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "jit/brgemm/brgemm_conf.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_generator.hpp"
#include "jit/jit_kernel_handle.hpp"
#include "jit/jit_tail_mask.hpp"

namespace blockdnn::impl {

/// Arguments of one call, read by the kernel through offsetof; keep it POD.
struct brgemm_call_args_t {
    const brgemm_batch_element_t *batch; // bs pairs (A_i, B_i)
    float *C;
    std::int64_t bs;
    const float *bias; // N floats, read with conf with_bias only
};

template <isa level>
class jit_brgemm_kernel_t : public jit_generator_t {
public:
    explicit jit_brgemm_kernel_t(const brgemm_conf_t &c) : jit_generator_t("jit_brgemm_kernel", level), c_(c) {}
    std::string conf_str() const override;

private:
    BLOCKDNN_JIT_ISA_NAMES(level);

    // General-purpose registers, one owner each.
    const Xbyak::Reg64 reg_param = abi_param1; // brgemm_call_args_t*
    const Xbyak::Reg64 reg_batch_base = rsi;   // batch array
    const Xbyak::Reg64 reg_C_base = rdx;       // C at row 0 of the current ld block
    const Xbyak::Reg64 reg_bs = rcx;           // batch size
    const Xbyak::Reg64 reg_C = r8;             // C at the current bd block
    const Xbyak::Reg64 reg_ld_off = r9;        // byte offset of the ld block's first column in B_i
    const Xbyak::Reg64 reg_bd_off = r10;       // byte offset of the bd block's first row in A_i
    const Xbyak::Reg64 reg_A = r11;            // A_i at (row m0, column k)
    const Xbyak::Reg64 reg_B = r12;            // B_i at (row k, column n0)
    const Xbyak::Reg64 reg_batch = r13;        // current batch element
    const Xbyak::Reg64 reg_bs_cnt = r14;       // batch elements left
    const Xbyak::Reg64 reg_k = r15;            // unrolled K iterations left
    const Xbyak::Reg64 reg_bd_cnt = rbx;       // full bd blocks left
    const Xbyak::Reg64 reg_ld_cnt = rbp;       // full ld blocks left
    const Xbyak::Reg32 reg_tmp32 = eax;        // opmask setup, in the prologue only
    const Xbyak::Reg64 reg_bias = rax;         // after it: the epilogue's bias at the ld block
    const Xbyak::Opmask k_tail = k1;           // AVX-512: lanes of the last, partial vector
    const Xbyak::Opmask k_relu = k2;           // AVX-512 epilogue: lanes relu keeps

    // Vector registers: accumulators from 0 up; from the top: the A broadcast, the AVX2 tail
    // mask, then the B vectors. init_conf_brgemm checks bd_block * ld_block + ld_block fits.
    Vmm vmm_a() const { return Vmm(n_vregs - 1); }
    Vmm vmm_mask() const { return Vmm(n_vregs - 2); }
    int n_reserved() const { return 1 + (!is_avx512 && c_.n_tail ? 1 : 0); }
    Vmm vmm_b(int v) const { return Vmm(n_vregs - n_reserved() - 1 - v); }
    Vmm vmm_acc(int ld, int m, int v) const { return Vmm(m * ld + v); }

    void generate() override;
    void ld_loop_body(int ld, bool masked, int count); // `count` ld blocks of ld vectors
    void bd_loop(int ld, bool masked);                 // every bd block of one ld block
    void compute_block(int bd, int ld, bool masked);   // zero, reduce over batch and K, store
    void k_steps(int bd, int ld, bool masked, int nk); // nk unrolled K steps
    void store_block(int bd, int ld, bool masked);     // alpha, beta, epilogue, (masked) store
    void epilogue(const Vmm &acc, int v, bool tail);   // bias of vector v, relu

    void load_b(const Vmm &v, const Xbyak::Address &a, bool masked) {
        emit_load_tail<is_avx512>(*this, v, a, masked, k_tail, vmm_mask());
    }
    Xbyak::Address c_addr(int m, int v) const {
        return ptr[reg_C + static_cast<std::int64_t>(m) * c_.LDC * 4 + v * simd_w * 4];
    }

    const brgemm_conf_t c_;
};

/// A generated brgemm kernel behind a plain call.
class brgemm_kernel_t : public jit_kernel_handle_t<brgemm_kernel_t, brgemm_conf_t, brgemm_call_args_t> {
public:
    /// The kernel for `c` (from init_conf_brgemm), from the process-wide kernel cache or
    /// generated; runtime_error / out_of_memory with the reason in `why` if generation fails.
    static status create(std::unique_ptr<brgemm_kernel_t> &out, const brgemm_conf_t &c, std::string &why);

    /// C = alpha * sum_{i < bs} batch[i].A * batch[i].B + beta * C, then the conf's epilogue
    /// (bias: N floats).
    void operator()(const brgemm_batch_element_t *batch, std::int64_t bs, float *C, const float *bias = nullptr) const {
        call({batch, C, bs, bias});
    }
    /// One pair: C = alpha * A * B + beta * C, then the epilogue.
    void operator()(const float *A, const float *B, float *C, const float *bias = nullptr) const {
        const brgemm_batch_element_t e {A, B};
        (*this)(&e, 1, C, bias);
    }

private:
    using base = jit_kernel_handle_t<brgemm_kernel_t, brgemm_conf_t, brgemm_call_args_t>;
    friend base;
    using base::base;
};

} // namespace blockdnn::impl
