// SPDX-License-Identifier: Apache-2.0
// The JIT binary kernel's code (see the loop nest and register table in the header).
#include <cstddef>

#include "core/utils.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_eltwise_injector.hpp"
#include "jit/jit_tail_mask.hpp"
#include "ops/binary/jit_binary_fwd_kernel.hpp"

namespace blockdnn::impl {

namespace {

using namespace Xbyak::util;

// Register table: one owner each.
const Xbyak::Reg64 reg_args = rdi;
const Xbyak::Reg64 reg_src0 = rsi;
const Xbyak::Reg64 reg_src1 = r8;
const Xbyak::Reg64 reg_dst = rdx;
const Xbyak::Reg64 reg_rows = r9;
const Xbyak::Reg64 reg_len = r10;
const Xbyak::Reg64 reg_src1_stride = r11;
const Xbyak::Reg64 reg_off = rax;
const Xbyak::Reg64 reg_left = rcx; // rcx, because shl takes its count in cl
const Xbyak::Opmask k_tail = k1;
const Xbyak::Opmask k_injector = k7;

} // namespace

template <isa level>
jit_binary_fwd_kernel_t<level>::jit_binary_fwd_kernel_t(const binary_conf_t &c)
    : jit_generator_t(kernel_name(c), level), c_(c) {}

template <isa level>
std::string jit_binary_fwd_kernel_t<level>::kernel_name(const binary_conf_t &c) {
    return cat("jit_binary_fwd_", to_string(c.alg), c.src1_scalar ? "_scalar" : "");
}

template <isa level>
std::string jit_binary_fwd_kernel_t<level>::conf_str() const {
    const char *v = level == isa::avx512_core ? "zmm" : "ymm";
    const int ur = c_.ur, nv = c_.n_vregs_used;
    std::string s = cat("conf: ", to_string(c_), "\n");
    s += cat("loop: per row, ", ur, " x ", c_.simd_w, " floats per main iteration, then 1 vector, then a masked tail",
            " of len % ", c_.simd_w, "\n");
    s += "registers: rdi=call_args_t* rsi=src0 row r8=src1 row rdx=dst row r9=rows left r10=len r11=src1 stride "
         "rax=offset in row rcx=floats left\n";
    s += cat("vector registers: ", v, "0-", v, ur - 1, " values, ", v, ur, "-", v, ur + ur * c_.n_vtemps - 1,
            " temporaries (", c_.n_vtemps, " per value), ", v, nv - 2, " src1 value");
    if (level == isa::avx512_core) s += ", k1 tail mask, k7 injector mask\n";
    else s += cat(", ", v, nv - 1, " tail mask\n");
    return s;
}

template <isa level>
void jit_binary_fwd_kernel_t<level>::block(int n_vecs, bool tail) {
    using Vmm = typename isa_traits_t<level>::Vmm;
    constexpr bool opmask = level == isa::avx512_core;
    constexpr int vlen = isa_traits_t<level>::vlen;
    const int ur = c_.ur, nt = c_.n_vtemps;
    const Vmm src1_value(c_.n_vregs_used - 2), mask(c_.n_vregs_used - 1);
    auto val = [](int i) { return Vmm(i); };
    auto tmp = [ur, nt](int i) { return Vmm(ur + i * nt); };
    auto op = [&](const Vmm &v, const Xbyak::Operand &b) {
        if (c_.alg == binary_alg::add) vaddps(v, v, b);
        else vmulps(v, v, b);
    };
    for (int i = 0; i < n_vecs; ++i)
        emit_load_tail<opmask>(*this, val(i), ptr[reg_src0 + reg_off + i * vlen], tail, k_tail, mask);
    for (int i = 0; i < n_vecs; ++i) {
        if (c_.src1_scalar) {
            op(val(i), src1_value);
        } else if (!tail) {
            op(val(i), ptr[reg_src1 + reg_off + i * vlen]);
        } else {
            emit_load_tail<opmask>(*this, tmp(i), ptr[reg_src1 + reg_off + i * vlen], tail, k_tail, mask);
            op(val(i), tmp(i));
        }
    }
    for (const post_op &e : c_.post_ops) {
        if (e.what == post_op::kind::eltwise) {
            jit_eltwise_injector_t<level> inj(*this, e.alg, e.alpha, e.beta, ur, ur * nt, k_injector);
            inj.compute(0, n_vecs);
            continue;
        }
        for (int i = 0; i < n_vecs; ++i) {
            emit_load_tail<opmask>(*this, tmp(i), ptr[reg_dst + reg_off + i * vlen], tail, k_tail, mask);
            if (e.scale != 1.f) vmulps(tmp(i), tmp(i), vconst(e.scale));
            vaddps(val(i), val(i), tmp(i));
        }
    }
    for (int i = 0; i < n_vecs; ++i)
        emit_store_tail<opmask>(*this, ptr[reg_dst + reg_off + i * vlen], val(i), tail, k_tail, mask);
}

template <isa level>
void jit_binary_fwd_kernel_t<level>::generate() {
    using Vmm = typename isa_traits_t<level>::Vmm;
    constexpr int simd_w = isa_traits_t<level>::simd_w, vlen = isa_traits_t<level>::vlen;
    const int ur = c_.ur;
    preamble({reg_args, reg_src0, reg_src1, reg_dst, reg_rows, reg_len, reg_src1_stride, reg_off, reg_left});
    mov(reg_src0, ptr[reg_args + offsetof(binary_call_args_t, src0)]);
    mov(reg_src1, ptr[reg_args + offsetof(binary_call_args_t, src1)]);
    mov(reg_dst, ptr[reg_args + offsetof(binary_call_args_t, dst)]);
    mov(reg_rows, ptr[reg_args + offsetof(binary_call_args_t, rows)]);
    mov(reg_len, ptr[reg_args + offsetof(binary_call_args_t, len)]);
    mov(reg_src1_stride, ptr[reg_args + offsetof(binary_call_args_t, src1_stride)]);
    shl(reg_src1_stride, 2);

    // The tail mask of len % simd_w lanes, the same for every row.
    mov(reg_left, reg_len);
    and_(reg_left, simd_w - 1);
    emit_tail_mask_of_rcx<simd_w>(*this, level == isa::avx512_core, k_tail, Vmm(c_.n_vregs_used - 1), reg_off);

    Xbyak::Label row_loop;
    L(row_loop);
    xor_(reg_off, reg_off);
    mov(reg_left, reg_len);
    if (c_.src1_scalar) vbroadcastss(Vmm(c_.n_vregs_used - 2), ptr[reg_src1]);
    emit_vector_loop(
            *this, reg_left, ur, simd_w, [&](int n_vecs, bool tail) { block(n_vecs, tail); },
            [&](int n_vecs) { add(reg_off, n_vecs * vlen); });
    lea(reg_src0, ptr[reg_src0 + reg_len * 4]);
    lea(reg_dst, ptr[reg_dst + reg_len * 4]);
    add(reg_src1, reg_src1_stride);
    dec(reg_rows);
    jnz(row_loop, T_NEAR);
    postamble();
}

template class jit_binary_fwd_kernel_t<isa::avx512_core>;
template class jit_binary_fwd_kernel_t<isa::avx2>;

} // namespace blockdnn::impl
