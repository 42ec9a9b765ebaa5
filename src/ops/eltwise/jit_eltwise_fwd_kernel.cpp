// SPDX-License-Identifier: Apache-2.0
// The standalone eltwise kernel's code (see the loop nest and register table in the header).
#include <algorithm>
#include <cstddef>

#include "core/utils.hpp"
#include "ops/eltwise/jit_eltwise_fwd_kernel.hpp"
#include "jit/jit_eltwise_injector.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_tail_mask.hpp"

namespace blockdnn::impl {

namespace {

using namespace Xbyak::util;

// Register table: one owner each.
const Xbyak::Reg64 reg_args = rdi;
const Xbyak::Reg64 reg_src = rsi;
const Xbyak::Reg64 reg_dst = rdx;
const Xbyak::Reg64 reg_n = rcx; // rcx, because shl takes its count in cl
const Xbyak::Reg64 reg_tmp = rax;
const Xbyak::Opmask k_tail = k1;
const Xbyak::Opmask k_injector = k7;

} // namespace

template <isa level>
jit_eltwise_fwd_kernel_t<level>::jit_eltwise_fwd_kernel_t(const eltwise_conf_t &c)
    : jit_generator_t(kernel_name(c), level), c_(c) {}

template <isa level>
std::string jit_eltwise_fwd_kernel_t<level>::kernel_name(const eltwise_conf_t &c) {
    return cat("jit_eltwise_fwd_", to_string(c.alg), c.stream_stores ? "_nt" : "");
}

template <isa level>
std::string jit_eltwise_fwd_kernel_t<level>::conf_str() const {
    const char *v = level == isa::avx512_core ? "zmm" : "ymm";
    const int tmp_first = c_.ur, tmp_last = c_.ur + c_.ur * c_.n_vtemps - 1;
    std::string s = cat("conf: ", to_string(c_), "\n");
    s += cat("loop: ", c_.ur, " x ", c_.simd_w, " floats per main iteration, then 1 vector, then a masked tail of n % ",
            c_.simd_w, "\n");
    s += "registers: rdi=call_args_t* rsi=src rdx=dst rcx=n (floats left) rax=scratch\n";
    s += cat("vector registers: ", v, "0-", v, c_.ur - 1, " values, ", v, tmp_first, "-", v, tmp_last,
            " injector temporaries (", c_.n_vtemps, " per value)");
    if (level == isa::avx512_core) s += ", k1 tail mask, k7 injector mask\n";
    else s += cat(", ", v, c_.tail_mask_vreg, " tail mask (in the masked tail only)\n");
    return s;
}

template <isa level>
void jit_eltwise_fwd_kernel_t<level>::block(int n_vecs, bool tail) {
    using Vmm = typename isa_traits_t<level>::Vmm;
    constexpr int vlen = isa_traits_t<level>::vlen;
    const Vmm tail_mask(std::max(c_.tail_mask_vreg, 0));
    for (int i = 0; i < n_vecs; ++i) {
        const Xbyak::Address a = ptr[reg_src + i * vlen];
        if (!tail) vmovups(Vmm(i), a);
        else if constexpr (level == isa::avx512_core) vmovups(Vmm(i) | k_tail | T_z, a);
        else vmaskmovps(Vmm(i), tail_mask, a);
    }
    jit_eltwise_injector_t<level> inj(*this, c_.alg, c_.alpha, c_.beta, c_.ur, c_.ur * c_.n_vtemps, k_injector);
    inj.compute(0, n_vecs);
    for (int i = 0; i < n_vecs; ++i) {
        const Xbyak::Address a = ptr[reg_dst + i * vlen];
        if (tail) {
            if constexpr (level == isa::avx512_core) vmovups(a | k_tail, Vmm(i));
            else vmaskmovps(a, tail_mask, Vmm(i));
        } else if (c_.stream_stores) {
            vmovntps(a, Vmm(i));
        } else {
            vmovups(a, Vmm(i));
        }
    }
}

template <isa level>
void jit_eltwise_fwd_kernel_t<level>::generate() {
    using Vmm = typename isa_traits_t<level>::Vmm;
    constexpr int simd_w = isa_traits_t<level>::simd_w, vlen = isa_traits_t<level>::vlen;
    preamble({reg_args, reg_src, reg_dst, reg_n, reg_tmp});
    mov(reg_src, ptr[reg_args + offsetof(eltwise_call_args_t, src)]);
    mov(reg_dst, ptr[reg_args + offsetof(eltwise_call_args_t, dst)]);
    mov(reg_n, ptr[reg_args + offsetof(eltwise_call_args_t, n)]);

    emit_vector_loop(
            *this, reg_n, c_.ur, simd_w,
            [&](int n_vecs, bool tail) {
                // AVX2's mask register is free in the one-value tail only (eltwise_conf_t).
                if (tail)
                    emit_tail_mask_of_rcx<simd_w>(
                            *this, level == isa::avx512_core, k_tail, Vmm(std::max(c_.tail_mask_vreg, 0)), reg_tmp);
                block(n_vecs, tail);
            },
            [&](int n_vecs) {
                add(reg_src, n_vecs * vlen);
                add(reg_dst, n_vecs * vlen);
            });

    if (c_.stream_stores) sfence(); // order the non-temporal stores before the caller reads dst
    postamble();
}

template class jit_eltwise_fwd_kernel_t<isa::avx512_core>;
template class jit_eltwise_fwd_kernel_t<isa::avx2>;

} // namespace blockdnn::impl
