// SPDX-License-Identifier: Apache-2.0
// The JIT softmax kernel's code (see the passes and register tables in the header).
#include <cmath>
#include <cstddef>
#include <limits>

#include "core/utils.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_eltwise_injector.hpp"
#include "jit/jit_tail_mask.hpp"
#include "ops/softmax/jit_softmax_fwd_kernel.hpp"

namespace blockdnn::impl {

namespace {

using namespace Xbyak::util;

// Register table: one owner each (the header says what each holds in either mode).
const Xbyak::Reg64 reg_args = rdi;
const Xbyak::Reg64 reg_src = rsi;
const Xbyak::Reg64 reg_dst = rdx;
const Xbyak::Reg64 reg_len = r8;
const Xbyak::Reg64 reg_lines = r9;  // lines mode: lines left
const Xbyak::Reg64 reg_stride = r9; // lanes mode: floats, then bytes, between a line's elements
const Xbyak::Reg64 reg_p = r10;
const Xbyak::Reg64 reg_q = r11;
const Xbyak::Reg64 reg_cnt = rcx; // rcx, because shl takes its count in cl
const Xbyak::Reg64 reg_tmp = rax;
const Xbyak::Opmask k_tail = k1;
const Xbyak::Opmask k_injector = k7;

constexpr float neg_inf = -std::numeric_limits<float>::infinity();

} // namespace

template <isa level>
jit_softmax_fwd_kernel_t<level>::jit_softmax_fwd_kernel_t(const softmax_conf_t &c)
    : jit_generator_t(kernel_name(c), level), c_(c) {}

template <isa level>
std::string jit_softmax_fwd_kernel_t<level>::kernel_name(const softmax_conf_t &c) {
    return cat("jit_softmax_fwd_", to_string(c.mode));
}

template <isa level>
std::string jit_softmax_fwd_kernel_t<level>::conf_str() const {
    const char *v = level == isa::avx512_core ? "zmm" : "ymm";
    const int ur = c_.ur, nv = c_.n_vregs_used;
    const int tmp_first = (c_.mode == softmax_mode::lines ? 2 : 3) * ur;
    std::string s = cat("conf: ", to_string(c_), "\n");
    if (c_.mode == softmax_mode::lines) {
        s += cat("loop: per line, three passes of ", ur, " x ", c_.simd_w,
                " floats, then 1 vector, then a masked tail of len % ", c_.simd_w, "; a line of up to ", c_.ur_resident,
                " vectors held in registers instead, several side by side\n");
        s += "registers: rdi=call_args_t* rsi=src line rdx=dst line r8=len r9=lines left r10,r11=pass pointers "
             "rcx=floats left rax=scratch\n";
        s += cat("vector registers: ", v, "0-", v, ur - 1, " accumulators, ", v, ur, "-", v, 2 * ur - 1, " values, ");
    } else {
        s += cat("loop: groups of ", ur, " x ", c_.simd_w, " lanes, then 1 vector, then a masked tail of n % ",
                c_.simd_w, "; per group three passes over len elements stride apart\n");
        s += "registers: rdi=call_args_t* rsi=src lanes rdx=dst lanes r8=len r9=stride bytes r10,r11=pass pointers "
             "rcx=lanes left rax=elements left\n";
        s += cat("vector registers: ", v, "0-", v, ur - 1, " maxima, ", v, ur, "-", v, 2 * ur - 1, " sums, ", v, 2 * ur,
                "-", v, 3 * ur - 1, " values, ");
    }
    const int comp_first = tmp_first + ur * c_.n_vtemps;
    s += cat(v, tmp_first, "-", v, comp_first - 1, " injector temporaries, ", v, comp_first, "-", v,
            comp_first + ur - 1, " compensations, ", v, nv - 2, " constant (-inf, max, 1/sum)");
    if (level == isa::avx512_core) s += ", k1 tail mask, k7 injector mask\n";
    else s += cat(", ", v, nv - 1, " tail mask\n");
    return s;
}

template <isa level>
void jit_softmax_fwd_kernel_t<level>::tail_mask_of(const Xbyak::Reg64 &count, bool full_if_even) {
    using Vmm = typename isa_traits_t<level>::Vmm;
    constexpr int simd_w = isa_traits_t<level>::simd_w;
    mov(reg_tmp, count);
    if (full_if_even) dec(reg_tmp);
    and_(reg_tmp, simd_w - 1);
    if (full_if_even) inc(reg_tmp);
    // rcx holds the lane count only here.
    push(reg_cnt);
    mov(reg_cnt, reg_tmp);
    emit_tail_mask_of_rcx<simd_w>(*this, level == isa::avx512_core, k_tail, Vmm(c_.n_vregs_used - 1), reg_tmp);
    pop(reg_cnt);
}

template <isa level>
void jit_softmax_fwd_kernel_t<level>::reduce_lanes(int v, int t, bool max) {
    using Vmm = typename isa_traits_t<level>::Vmm;
    const Vmm V(v), T(t);
    auto op = [&] { max ? vmaxps(V, V, T) : vaddps(V, V, T); };
    if constexpr (level == isa::avx512_core) {
        vshuff32x4(T, V, V, 0x4e); // swap the 256-bit halves
        op();
        vshuff32x4(T, V, V, 0xb1); // swap 128-bit neighbours
        op();
    } else {
        vperm2f128(T, V, V, 0x01);
        op();
    }
    vpermilps(T, V, 0x4e); // swap 64-bit neighbours
    op();
    vpermilps(T, V, 0xb1); // swap 32-bit neighbours
    op();
}

template <isa level>
void jit_softmax_fwd_kernel_t<level>::kahan_add(int sum, int comp, int v, int y, int t) {
    using Vmm = typename isa_traits_t<level>::Vmm;
    const Vmm S(sum), Cm(comp), V(v), Y(y), T(t);
    vsubps(Y, V, Cm); // what to add, less what the last add lost
    vaddps(T, S, Y);
    vsubps(Cm, T, S);  // what this add kept of Y ...
    vsubps(Cm, Cm, Y); // ... less Y: minus what it lost
    vmovaps(S, T);
}

template <isa level>
void jit_softmax_fwd_kernel_t<level>::generate_lines() {
    using Vmm = typename isa_traits_t<level>::Vmm;
    constexpr bool opmask = level == isa::avx512_core;
    constexpr int simd_w = isa_traits_t<level>::simd_w, vlen = isa_traits_t<level>::vlen;
    const int ur = c_.ur;
    const Vmm C(c_.n_vregs_used - 2), mask(c_.n_vregs_used - 1);
    const int nt = c_.n_vtemps;
    auto acc = [](int i) { return Vmm(i); };
    auto val = [ur](int i) { return Vmm(ur + i); };
    auto tmp = [ur, nt](int i, int j) { return Vmm(2 * ur + i * nt + j); };
    auto comp = [ur, nt](int i) { return Vmm(2 * ur + ur * nt + i); };

    // One pass along the line (emit_vector_loop): reg_p and reg_q start at the line and
    // advance together.
    auto pass = [&](auto body) {
        mov(reg_cnt, reg_len);
        emit_vector_loop(*this, reg_cnt, ur, simd_w, body, [&](int n_vecs) {
            add(reg_p, n_vecs * vlen);
            add(reg_q, n_vecs * vlen);
        });
    };
    auto combine = [&](bool max) {
        // A sum's accumulators first take back what their compensations hold.
        if (!max)
            for (int i = 0; i < ur; ++i) vsubps(acc(i), acc(i), comp(i));
        for (int i = 1; i < ur; ++i) max ? vmaxps(acc(0), acc(0), acc(i)) : vaddps(acc(0), acc(0), acc(i));
        reduce_lanes(acc(0).getIdx(), val(0).getIdx(), max);
    };

    // Lines of at most ur_resident vectors stay in registers (lines_in_registers); longer
    // ones take the three passes below.
    Xbyak::Label line_loop, done, in_registers[softmax_max_ur_resident + 1];
    for (int k = 1; k <= c_.ur_resident; ++k) {
        cmp(reg_len, k * simd_w);
        jle(in_registers[k], T_NEAR);
    }
    tail_mask_of(reg_len, false);
    L(line_loop);
    test(reg_lines, reg_lines);
    jz(done, T_NEAR);

    // m = max(x). The AVX2 tail puts -inf in the lanes past the line.
    vmovups(C, vconst(neg_inf));
    for (int i = 0; i < ur; ++i) vmovaps(acc(i), C);
    mov(reg_p, reg_src);
    mov(reg_q, reg_dst);
    pass([&](int n_vecs, bool tail) {
        for (int i = 0; i < n_vecs; ++i) {
            const Xbyak::Address a = ptr[reg_p + i * vlen];
            if (!tail) {
                vmaxps(acc(i), acc(i), a);
            } else if constexpr (opmask) {
                vmaxps(acc(0) | k_tail, acc(0), a);
            } else {
                vmaskmovps(val(0), mask, a);
                vblendvps(val(0), C, val(0), mask);
                vmaxps(acc(0), acc(0), val(0));
            }
        }
    });
    combine(true);
    vmovaps(C, acc(0));

    // e = exp(x - m) into dst, sum += e (compensated). The tail's lanes past the line add 0.
    for (int i = 0; i < ur; ++i) {
        vxorps(acc(i), acc(i), acc(i));
        vxorps(comp(i), comp(i), comp(i));
    }
    mov(reg_p, reg_src);
    mov(reg_q, reg_dst);
    pass([&](int n_vecs, bool tail) {
        for (int i = 0; i < n_vecs; ++i) {
            emit_load_tail<opmask>(*this, val(i), ptr[reg_p + i * vlen], tail, k_tail, mask);
            vsubps(val(i), val(i), C);
        }
        jit_eltwise_injector_t<level> inj(*this, eltwise_alg::exp, 0.f, 0.f, 2 * ur, ur * c_.n_vtemps, k_injector);
        inj.compute(ur, n_vecs);
        for (int i = 0; i < n_vecs; ++i) {
            emit_store_tail<opmask>(*this, ptr[reg_q + i * vlen], val(i), tail, k_tail, mask);
            if (tail) {
                if constexpr (opmask) vmovaps(val(0) | k_tail | T_z, val(0));
                else vandps(val(0), val(0), mask);
            }
            kahan_add(acc(i).getIdx(), comp(i).getIdx(), val(i).getIdx(), tmp(i, 0).getIdx(), tmp(i, 1).getIdx());
        }
    });
    combine(false);
    vmovups(C, vconst(1.f));
    vdivps(C, C, acc(0));

    // dst *= 1 / sum.
    mov(reg_p, reg_dst);
    mov(reg_q, reg_dst);
    pass([&](int n_vecs, bool tail) {
        for (int i = 0; i < n_vecs; ++i) {
            emit_load_tail<opmask>(*this, val(i), ptr[reg_q + i * vlen], tail, k_tail, mask);
            vmulps(val(i), val(i), C);
            emit_store_tail<opmask>(*this, ptr[reg_q + i * vlen], val(i), tail, k_tail, mask);
        }
    });

    lea(reg_src, ptr[reg_src + reg_len * 4]);
    lea(reg_dst, ptr[reg_dst + reg_len * 4]);
    dec(reg_lines);
    jmp(line_loop, T_NEAR);
    for (int k = 1; k <= c_.ur_resident; ++k) {
        L(in_registers[k]);
        lines_in_registers(k);
        jmp(done, T_NEAR);
    }
    L(done);
}

template <isa level>
void jit_softmax_fwd_kernel_t<level>::lines_in_registers(int n_vecs) {
    // As many lines a step as ur_resident vectors hold: their chains are independent, so a
    // short line's latency (two lane reductions, exp, a divide) overlaps the next line's.
    const int per_step = c_.ur_resident / n_vecs;
    // The last vector of a line holds 1 to simd_w elements, under the mask.
    tail_mask_of(reg_len, true);
    Xbyak::Label multi, single, done;
    if (per_step > 1) {
        L(multi);
        cmp(reg_lines, per_step);
        jl(single, T_NEAR);
        lines_in_registers_step(n_vecs, per_step);
        sub(reg_lines, per_step);
        jmp(multi, T_NEAR);
    }
    L(single);
    test(reg_lines, reg_lines);
    jz(done, T_NEAR);
    lines_in_registers_step(n_vecs, 1);
    dec(reg_lines);
    jmp(single, T_NEAR);
    L(done);
}

template <isa level>
void jit_softmax_fwd_kernel_t<level>::lines_in_registers_step(int n_vecs, int n_lines) {
    using Vmm = typename isa_traits_t<level>::Vmm;
    constexpr bool opmask = level == isa::avx512_core;
    constexpr int vlen = isa_traits_t<level>::vlen;
    // Registers: [0, r) the lines' max, then sum, then 1 / sum (line l in l); [r, 2 r) the
    // values, line by line; then the injector's temporaries, the first also the reductions'.
    const int r = c_.ur_resident, last = n_vecs - 1;
    const Vmm C(c_.n_vregs_used - 2), mask(c_.n_vregs_used - 1), tmp(2 * r);
    auto m = [](int l) { return Vmm(l); };
    auto val = [r, n_vecs](int l, int i) { return Vmm(r + l * n_vecs + i); };
    auto each = [&](auto f) {
        for (int l = 0; l < n_lines; ++l)
            for (int i = 0; i < n_vecs; ++i) f(l, i);
    };

    mov(reg_p, reg_src);
    for (int l = 0; l < n_lines; ++l) {
        for (int i = 0; i < n_vecs; ++i)
            emit_load_tail<opmask>(*this, val(l, i), ptr[reg_p + i * vlen], i == last, k_tail, mask);
        lea(reg_p, ptr[reg_p + reg_len * 4]);
    }
    vmovups(C, vconst(neg_inf));
    for (int l = 0; l < n_lines; ++l) vmovaps(m(l), C);
    each([&](int l, int i) {
        if (i < last) {
            vmaxps(m(l), m(l), val(l, i));
        } else if constexpr (opmask) {
            vmaxps(m(l) | k_tail, m(l), val(l, i));
        } else {
            vblendvps(tmp, C, val(l, i), mask);
            vmaxps(m(l), m(l), tmp);
        }
    });
    for (int l = 0; l < n_lines; ++l) reduce_lanes(m(l).getIdx(), tmp.getIdx(), true);
    each([&](int l, int i) { vsubps(val(l, i), val(l, i), m(l)); });
    jit_eltwise_injector_t<level> inj(*this, eltwise_alg::exp, 0.f, 0.f, 2 * r, r * c_.n_vtemps, k_injector);
    inj.compute(r, n_lines * n_vecs);
    // Lanes past the line are masked out of the sum; the adds run in the passes' order.
    for (int l = 0; l < n_lines; ++l) vxorps(m(l), m(l), m(l));
    each([&](int l, int i) {
        if (i < last) {
            vaddps(m(l), m(l), val(l, i));
        } else if constexpr (opmask) {
            vaddps(m(l) | k_tail, m(l), val(l, i));
        } else {
            vandps(tmp, val(l, i), mask);
            vaddps(m(l), m(l), tmp);
        }
    });
    for (int l = 0; l < n_lines; ++l) reduce_lanes(m(l).getIdx(), tmp.getIdx(), false);
    vmovups(C, vconst(1.f));
    for (int l = 0; l < n_lines; ++l) vdivps(m(l), C, m(l));
    mov(reg_q, reg_dst);
    for (int l = 0; l < n_lines; ++l) {
        for (int i = 0; i < n_vecs; ++i) {
            vmulps(val(l, i), val(l, i), m(l));
            emit_store_tail<opmask>(*this, ptr[reg_q + i * vlen], val(l, i), i == last, k_tail, mask);
        }
        lea(reg_q, ptr[reg_q + reg_len * 4]);
    }
    mov(reg_src, reg_p);
    mov(reg_dst, reg_q);
}

template <isa level>
void jit_softmax_fwd_kernel_t<level>::lanes_group(int n_vecs, bool tail) {
    using Vmm = typename isa_traits_t<level>::Vmm;
    constexpr bool opmask = level == isa::avx512_core;
    constexpr int vlen = isa_traits_t<level>::vlen;
    const int ur = c_.ur;
    const Vmm C(c_.n_vregs_used - 2), mask(c_.n_vregs_used - 1);
    const int nt = c_.n_vtemps;
    auto mx = [](int i) { return Vmm(i); };
    auto sum = [ur](int i) { return Vmm(ur + i); };
    auto val = [ur](int i) { return Vmm(2 * ur + i); };
    auto tmp = [ur, nt](int i, int j) { return Vmm(3 * ur + i * nt + j); };
    auto comp = [ur, nt](int i) { return Vmm(3 * ur + ur * nt + i); };
    // A pass over the len elements: reg_p and reg_q step by the stride; rax counts.
    auto pass = [&](auto body) {
        Xbyak::Label loop;
        mov(reg_tmp, reg_len);
        L(loop);
        body();
        add(reg_p, reg_stride);
        add(reg_q, reg_stride);
        dec(reg_tmp);
        jnz(loop, T_NEAR);
    };

    // Lanes past n (tail) are other memory: never loaded or stored, and no lane mixes with
    // another, so what they compute does not matter.
    vmovups(C, vconst(neg_inf));
    for (int i = 0; i < n_vecs; ++i) vmovaps(mx(i), C);
    mov(reg_p, reg_src);
    mov(reg_q, reg_dst);
    pass([&] {
        for (int i = 0; i < n_vecs; ++i) {
            emit_load_tail<opmask>(*this, val(i), ptr[reg_p + i * vlen], tail, k_tail, mask);
            vmaxps(mx(i), mx(i), val(i));
        }
    });

    for (int i = 0; i < n_vecs; ++i) {
        vxorps(sum(i), sum(i), sum(i));
        vxorps(comp(i), comp(i), comp(i));
    }
    mov(reg_p, reg_src);
    mov(reg_q, reg_dst);
    pass([&] {
        for (int i = 0; i < n_vecs; ++i) {
            emit_load_tail<opmask>(*this, val(i), ptr[reg_p + i * vlen], tail, k_tail, mask);
            vsubps(val(i), val(i), mx(i));
        }
        jit_eltwise_injector_t<level> inj(*this, eltwise_alg::exp, 0.f, 0.f, 3 * ur, ur * c_.n_vtemps, k_injector);
        inj.compute(2 * ur, n_vecs);
        for (int i = 0; i < n_vecs; ++i) {
            emit_store_tail<opmask>(*this, ptr[reg_q + i * vlen], val(i), tail, k_tail, mask);
            kahan_add(sum(i).getIdx(), comp(i).getIdx(), val(i).getIdx(), tmp(i, 0).getIdx(), tmp(i, 1).getIdx());
        }
    });

    vmovups(C, vconst(1.f));
    for (int i = 0; i < n_vecs; ++i) {
        vsubps(sum(i), sum(i), comp(i));
        vdivps(sum(i), C, sum(i));
    }
    mov(reg_p, reg_dst);
    mov(reg_q, reg_dst);
    pass([&] {
        for (int i = 0; i < n_vecs; ++i) {
            emit_load_tail<opmask>(*this, val(i), ptr[reg_q + i * vlen], tail, k_tail, mask);
            vmulps(val(i), val(i), sum(i));
            emit_store_tail<opmask>(*this, ptr[reg_q + i * vlen], val(i), tail, k_tail, mask);
        }
    });
}

template <isa level>
void jit_softmax_fwd_kernel_t<level>::generate_lanes() {
    constexpr int simd_w = isa_traits_t<level>::simd_w, vlen = isa_traits_t<level>::vlen;
    shl(reg_stride, 2); // stride in floats -> bytes
    tail_mask_of(reg_cnt, false);
    emit_vector_loop(
            *this, reg_cnt, c_.ur, simd_w, [&](int n_vecs, bool tail) { lanes_group(n_vecs, tail); },
            [&](int n_vecs) {
                add(reg_src, n_vecs * vlen);
                add(reg_dst, n_vecs * vlen);
            });
}

template <isa level>
void jit_softmax_fwd_kernel_t<level>::generate() {
    preamble({reg_args, reg_src, reg_dst, reg_len, reg_lines, reg_p, reg_q, reg_cnt, reg_tmp});
    mov(reg_src, ptr[reg_args + offsetof(softmax_call_args_t, src)]);
    mov(reg_dst, ptr[reg_args + offsetof(softmax_call_args_t, dst)]);
    mov(reg_len, ptr[reg_args + offsetof(softmax_call_args_t, len)]);
    if (c_.mode == softmax_mode::lines) {
        mov(reg_lines, ptr[reg_args + offsetof(softmax_call_args_t, n)]);
        generate_lines();
    } else {
        mov(reg_stride, ptr[reg_args + offsetof(softmax_call_args_t, stride)]);
        mov(reg_cnt, ptr[reg_args + offsetof(softmax_call_args_t, n)]);
        generate_lanes();
    }
    postamble();
}

template class jit_softmax_fwd_kernel_t<isa::avx512_core>;
template class jit_softmax_fwd_kernel_t<isa::avx2>;

} // namespace blockdnn::impl
