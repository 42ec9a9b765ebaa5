// SPDX-License-Identifier: Apache-2.0
// Code generation of the brgemm microkernel (loop nest in jit_brgemm_kernel.hpp).

#include "core/utils.hpp"
#include "jit/brgemm/jit_brgemm_kernel.hpp"

namespace blockdnn::impl {

using namespace Xbyak;

template <isa level>
void jit_brgemm_kernel_t<level>::k_steps(int bd, int ld, bool masked, int nk) {
    if (!c_.b_in_regs) {
        // One row: each B vector feeds one FMA, as its memory operand (the partial one through
        // merge masking on AVX-512, a masked load into the temp on AVX2).
        for (int k = 0; k < nk; ++k) {
            const std::int64_t b_row = static_cast<std::int64_t>(k) * c_.LDB * 4;
            vbroadcastss(vmm_a(), ptr[reg_A + k * 4]);
            for (int v = 0; v < ld; ++v) {
                const Address b = ptr[reg_B + b_row + v * simd_w * 4];
                const Vmm acc = vmm_acc(ld, 0, v);
                if (!(masked && v == ld - 1)) {
                    vfmadd231ps(acc, vmm_a(), b);
                } else if constexpr (is_avx512) {
                    vfmadd231ps(acc | k_tail, vmm_a(), b);
                } else {
                    vmaskmovps(vmm_b(0), vmm_mask(), b);
                    vfmadd231ps(acc, vmm_a(), vmm_b(0));
                }
            }
        }
        return;
    }
    for (int k = 0; k < nk; ++k) {
        const std::int64_t b_row = static_cast<std::int64_t>(k) * c_.LDB * 4;
        for (int v = 0; v < ld; ++v) load_b(vmm_b(v), ptr[reg_B + b_row + v * simd_w * 4], masked && v == ld - 1);
        for (int m = 0; m < bd; ++m) {
            // A broadcast from memory into a register, then used ld times: bd + ld loads per
            // bd * ld FMAs (an embedded {1to16} broadcast would reload it for every FMA).
            vbroadcastss(vmm_a(), ptr[reg_A + static_cast<std::int64_t>(m) * c_.LDA * 4 + k * 4]);
            for (int v = 0; v < ld; ++v) vfmadd231ps(vmm_acc(ld, m, v), vmm_b(v), vmm_a());
        }
    }
}

template <isa level>
void jit_brgemm_kernel_t<level>::store_block(int bd, int ld, bool masked) {
    if (c_.alpha != 1.f) {
        vmovups(vmm_a(), vconst(c_.alpha));
        for (int m = 0; m < bd; ++m)
            for (int v = 0; v < ld; ++v) vmulps(vmm_acc(ld, m, v), vmm_acc(ld, m, v), vmm_a());
    }
    const bool scale_c = c_.beta != 0.f && c_.beta != 1.f;
    if (scale_c) vmovups(vmm_a(), vconst(c_.beta));
    if (c_.with_bias) {
        mov(reg_bias, ptr[reg_param + offsetof(brgemm_call_args_t, bias)]);
        add(reg_bias, reg_ld_off);
    }
    for (int m = 0; m < bd; ++m)
        for (int v = 0; v < ld; ++v) {
            const Vmm acc = vmm_acc(ld, m, v);
            const bool tail = masked && v == ld - 1;
            if (c_.beta != 0.f) {
                if (tail && !is_avx512) {
                    vmaskmovps(vmm_b(0), vmm_mask(), c_addr(m, v));
                    if (scale_c) vfmadd231ps(acc, vmm_b(0), vmm_a());
                    else vaddps(acc, acc, vmm_b(0));
                } else if constexpr (is_avx512) {
                    // Merge masking: lanes past N keep acc and their memory is not touched.
                    const Xbyak::Zmm dst = tail ? (acc | k_tail) : acc;
                    if (scale_c) vfmadd231ps(dst, vmm_a(), c_addr(m, v));
                    else vaddps(dst, acc, c_addr(m, v));
                } else {
                    if (scale_c) vfmadd231ps(acc, vmm_a(), c_addr(m, v));
                    else vaddps(acc, acc, c_addr(m, v));
                }
            }
            epilogue(acc, v, tail);
            // No streaming store takes a mask: the partial vector is stored as without stream_c.
            if (c_.stream_c && !tail) vmovntps(c_addr(m, v), acc);
            else emit_store_tail<is_avx512>(*this, c_addr(m, v), acc, tail, k_tail, vmm_mask());
        }
}

// vcmpps predicate NLE_UQ (Intel SDM, CMPPS imm8): not x <= y, true when either is NaN; quiet.
constexpr std::uint8_t cmp_nle_uq = 0x16;

template <isa level>
void jit_brgemm_kernel_t<level>::epilogue(const Vmm &acc, int v, bool tail) {
    // The AVX2 temporary: the first B register, free once the K loop is done (the beta path
    // above is through with it) and kept free as the tail's temp in a one-row kernel. A one-row
    // kernel without a tail holds accumulators in every register but the broadcast, so the
    // relu borrows the broadcast there, and puts back beta after it.
    const bool borrow_a = !c_.b_in_regs && !c_.n_tail;
    const Vmm tmp = borrow_a ? vmm_a() : vmm_b(0);
    if (c_.with_bias) {
        const Xbyak::Address b = ptr[reg_bias + v * simd_w * 4];
        if (tail && !is_avx512) {
            vmaskmovps(tmp, vmm_mask(), b);
            vaddps(acc, acc, tmp);
        } else if constexpr (is_avx512) {
            // Masked: lanes past N are not stored, and their bias is never read.
            vaddps(tail ? (acc | k_tail) : acc, acc, b);
        } else {
            vaddps(acc, acc, b);
        }
    }
    if (c_.relu) {
        // Keep the lanes not <= 0 (positive or NaN), zero the others: +0, as the reference gives.
        if constexpr (is_avx512) {
            vcmpps(k_relu, acc, vconst(0.f), cmp_nle_uq);
            vmovaps(acc | k_relu | T_z, acc);
        } else {
            vcmpps(tmp, acc, vconst(0.f), cmp_nle_uq);
            vandps(acc, acc, tmp);
            if (borrow_a && c_.beta != 0.f && c_.beta != 1.f) vmovups(vmm_a(), vconst(c_.beta));
        }
    }
}

template <isa level>
void jit_brgemm_kernel_t<level>::compute_block(int bd, int ld, bool masked) {
    for (int m = 0; m < bd; ++m)
        for (int v = 0; v < ld; ++v) {
            const int i = vmm_acc(ld, m, v).getIdx();
            if constexpr (is_avx512) vpxord(Zmm(i), Zmm(i), Zmm(i));
            else vxorps(Ymm(i), Ymm(i), Ymm(i));
        }
    if (c_.prefetch_c) {
        // C is read (beta != 0) or overwritten after the K loop: fetch its lines meanwhile.
        for (int m = 0; m < bd; ++m)
            for (int off = 0; off < ld * simd_w * 4; off += 64)
                prefetcht0(ptr[reg_C + static_cast<std::int64_t>(m) * c_.LDC * 4 + off]);
    }
    if (c_.K > 0) {
        Label l_bs, l_done;
        mov(reg_batch, reg_batch_base);
        mov(reg_bs_cnt, reg_bs);
        test(reg_bs_cnt, reg_bs_cnt);
        jle(l_done, T_NEAR);
        L(l_bs);
        mov(reg_A, ptr[reg_batch + offsetof(brgemm_batch_element_t, A)]);
        add(reg_A, reg_bd_off);
        mov(reg_B, ptr[reg_batch + offsetof(brgemm_batch_element_t, B)]);
        add(reg_B, reg_ld_off);
        const bool advance = c_.rdb > 1 || c_.rd_block_tail > 0;
        if (c_.rdb > 0) {
            Label l_k;
            if (c_.rdb > 1) {
                mov(reg_k, c_.rdb);
                L(l_k);
            }
            k_steps(bd, ld, masked, c_.rd_block);
            if (advance) {
                add(reg_A, c_.rd_block * 4);
                add(reg_B, static_cast<std::int64_t>(c_.rd_block) * c_.LDB * 4);
            }
            if (c_.rdb > 1) {
                dec(reg_k);
                jnz(l_k, T_NEAR);
            }
        }
        if (c_.rd_block_tail) k_steps(bd, ld, masked, c_.rd_block_tail);
        add(reg_batch, sizeof(brgemm_batch_element_t));
        dec(reg_bs_cnt);
        jnz(l_bs, T_NEAR);
        L(l_done);
    }
    store_block(bd, ld, masked);
}

template <isa level>
void jit_brgemm_kernel_t<level>::bd_loop(int ld, bool masked) {
    mov(reg_C, reg_C_base);
    xor_(reg_bd_off, reg_bd_off);
    if (c_.bdb > 0) {
        Label l_bd;
        if (c_.bdb > 1) {
            mov(reg_bd_cnt, c_.bdb);
            L(l_bd);
        }
        compute_block(c_.bd_block, ld, masked);
        if (c_.bdb > 1 || c_.bd_block_tail) {
            add(reg_bd_off, static_cast<std::int64_t>(c_.bd_block) * c_.LDA * 4);
            add(reg_C, static_cast<std::int64_t>(c_.bd_block) * c_.LDC * 4);
        }
        if (c_.bdb > 1) {
            dec(reg_bd_cnt);
            jnz(l_bd, T_NEAR);
        }
    }
    if (c_.bd_block_tail) compute_block(c_.bd_block_tail, ld, masked);
}

template <isa level>
void jit_brgemm_kernel_t<level>::ld_loop_body(int ld, bool masked, int count) {
    if (count <= 0) return;
    Label l_ld;
    if (count > 1) {
        mov(reg_ld_cnt, count);
        L(l_ld);
    }
    bd_loop(ld, masked);
    add(reg_C_base, ld * simd_w * 4);
    add(reg_ld_off, ld * simd_w * 4);
    if (count > 1) {
        dec(reg_ld_cnt);
        jnz(l_ld, T_NEAR);
    }
}

template <isa level>
void jit_brgemm_kernel_t<level>::generate() {
    preamble({reg_batch_base, reg_C_base, reg_bs, reg_C, reg_ld_off, reg_bd_off, reg_A, reg_B, reg_batch, reg_bs_cnt,
            reg_k, reg_bd_cnt, reg_ld_cnt});
    mov(reg_batch_base, ptr[reg_param + offsetof(brgemm_call_args_t, batch)]);
    mov(reg_C_base, ptr[reg_param + offsetof(brgemm_call_args_t, C)]);
    mov(reg_bs, ptr[reg_param + offsetof(brgemm_call_args_t, bs)]);
    if (c_.n_tail) emit_tail_mask(*this, is_avx512, c_.n_tail, k_tail, vmm_mask(), reg_tmp32);
    xor_(reg_ld_off, reg_ld_off);
    // N: full ld blocks clear of the partial vector, then the block holding it (a full block
    // when the vectors divide evenly into blocks, else the shorter tail block).
    const bool tail_in_full = c_.n_tail && c_.ld_block_tail == 0;
    ld_loop_body(c_.ld_block, false, c_.ldb - (tail_in_full ? 1 : 0));
    if (tail_in_full) ld_loop_body(c_.ld_block, true, 1);
    if (c_.ld_block_tail) ld_loop_body(c_.ld_block_tail, c_.n_tail != 0, 1);
    // Streaming stores are weakly ordered: the fence makes them visible before anything the
    // caller does next (another thread reads C after the join).
    if (c_.stream_c) sfence();
    postamble();
}

template <isa level>
std::string jit_brgemm_kernel_t<level>::conf_str() const {
    const char *v = is_avx512 ? "zmm" : "ymm";
    std::string s = cat("conf: ", to_string(c_), "\n");
    s += "loop: ld blocks (N) > bd blocks (M) > batch > K (unrolled by rd_block)\n";
    s += "registers: rdi=call_args_t* rsi=batch rdx=C (ld block) rcx=bs r8=C (bd block) r9=ld offset "
         "r10=bd offset r11=A r12=B r13=batch element r14=batch left r15=K left rbx=bd blocks left "
         "rbp=ld blocks left rax=scratch (opmask setup), then the epilogue's bias\n";
    s += cat("vector registers: ", v, "0.. accumulators (bd x ld), ", v, n_vregs - 1, " A broadcast");
    if (!c_.b_in_regs) s += ", B from FMA memory operands";
    else s += cat(", ", v, n_vregs - n_reserved() - c_.ld_block, "-", v, n_vregs - n_reserved() - 1, " B vectors");
    if (is_avx512) s += cat(c_.n_tail ? ", k1 tail mask" : "", c_.relu ? ", k2 relu mask" : "", "\n");
    else s += c_.n_tail ? cat(", ", v, n_vregs - 2, " tail mask\n") : "\n";
    return s;
}

status brgemm_kernel_t::create(std::unique_ptr<brgemm_kernel_t> &out, const brgemm_conf_t &c, std::string &why) {
    if (c.stream_c && (c.simd_w <= 0 || c.LDC % c.simd_w != 0)) {
        why = cat("brgemm stream_c: LDC=", c.LDC, " is not a multiple of the vector width (", c.simd_w,
                " floats), so rows of C past the first would not start on a vector boundary");
        return status::unimplemented;
    }
    const auto &[level, M, N, K, LDA, LDB, LDC, alpha, beta, simd_w, bd_block, bdb, bd_block_tail, ld_block, ldb,
            ld_block_tail, n_tail, rd_block, rdb, rd_block_tail, prefetch_c, b_in_regs, with_bias, relu, stream_c] = c;
    std::string key = "brgemm|";
    append_raw(key, level, M, N, K, LDA, LDB, LDC, alpha, beta, simd_w, bd_block, bdb, bd_block_tail, ld_block, ldb,
            ld_block_tail, n_tail, rd_block, rdb, rd_block_tail, prefetch_c, b_in_regs, with_bias, relu, stream_c);
    return create_cached<jit_brgemm_kernel_t>(out, c, key, why);
}

template class jit_brgemm_kernel_t<isa::avx512_core>;
template class jit_brgemm_kernel_t<isa::avx2>;

} // namespace blockdnn::impl
