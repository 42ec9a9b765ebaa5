// SPDX-License-Identifier: Apache-2.0
// What the batch normalization kernels share: the call arguments, the conf and register table
// (bnorm_ker_common_t), tail masks, loads and stores for both ISAs, broadcast constants, the
// point loop and the horizontal reduction. The four kernels
// (jit_bnorm_{fwd,bwd}_{stats,norm}_kernel.cpp) derive from jit_bnorm_kernel_t<isa, Vmm>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/utils.hpp"
#include "ops/bnorm/bnorm_conf.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_generator.hpp"
#include "jit/jit_tail_mask.hpp"

namespace blockdnn::impl {

/// Arguments of one kernel call; the kernel reads them through one pointer. Keep POD.
struct bnorm_call_args_t {
    const float *src = nullptr;      ///< src at the first point
    float *dst = nullptr;            ///< fwd_norm: dst at the first point
    const float *diff_dst = nullptr; ///< bwd
    const float *dst_fwd = nullptr;  ///< bwd with relu: the forward dst (its sign is the mask)
    float *diff_src = nullptr;       ///< bwd_norm
    const float *prm = nullptr;      ///< per-channel parameters of the unit (see each kernel)
    float *out = nullptr;            ///< stats kernels: results of this call
    std::int64_t n_pts = 0;          ///< points (sp_vec: full vectors) of each block in this call
    std::int64_t tail = 0;           ///< sp_vec: 1 if the row's partial vector ends this call
    float inv_n = 0.f;               ///< fwd_stats: 1 / elements per lane (sp_vec: per call)
    float eps = 0.f;                 ///< fwd_norm: added to the variance
    const float *pf_src = nullptr;   ///< prefetch_next: the next unit's src at this call's first point
    const float *pf_ddst = nullptr;  ///< prefetch_next, bwd: the next unit's diff_dst there
    std::int64_t n_blk = 1;          ///< channel blocks in this call (1 to the conf's blocks)
};

/// The kernels' entry point type.
using bnorm_kernel_fn_t = void (*)(const bnorm_call_args_t *);

/// A new generator for `k` (kind, isa and simd_w pick the class), not yet created (the kernel
/// cache creates it).
std::unique_ptr<jit_generator_t> make_bnorm_kernel(const bnorm_ker_conf_t &k);

/// K<level, Vmm> for k: avx512_core with Zmm (16 lanes) or, for 8c layouts, Ymm (8 lanes, still
/// with opmasks and 32 registers); avx2 with Ymm. The one switch from k to a kernel class.
template <template <isa, typename> class K>
std::unique_ptr<jit_generator_t> make_bnorm_kernel_as(const bnorm_ker_conf_t &k) {
    if (k.level == isa::avx512_core && k.simd_w == 16) return std::make_unique<K<isa::avx512_core, Xbyak::Zmm>>(k);
    if (k.level == isa::avx512_core) return std::make_unique<K<isa::avx512_core, Xbyak::Ymm>>(k);
    return std::make_unique<K<isa::avx2, Xbyak::Ymm>>(k);
}

/// What the kernels name without `this->`: the conf and the register tables. A virtual base
/// of jit_bnorm_kernel_t and of each kernel, so that there is one copy and a kernel template
/// finds these names (a template does not look into its dependent bases); the kernel, the
/// most derived class, constructs it with its name and conf.
class bnorm_ker_common_t {
protected:
    bnorm_ker_common_t(const char *name, const bnorm_ker_conf_t &c) : ker_name_(name), c_(c) {}

    const char *const ker_name_; // the kernel's, for jit_generator_t
    const bnorm_ker_conf_t c_;
    int U() const { return c_.ur; }     // points per unrolled step
    int V() const { return c_.c_vecs; } // vectors per point

    // General-purpose registers: one owner each, shared by all bnorm kernels.
    static constexpr Xbyak::Reg64 reg_args {Xbyak::Operand::RDI};    // bnorm_call_args_t* (the first argument)
    static constexpr Xbyak::Reg64 reg_src {Xbyak::Operand::RSI};     // src at the current point
    static constexpr Xbyak::Reg64 reg_dst {Xbyak::Operand::RDX};     // dst at the current point (fwd_norm)
    static constexpr Xbyak::Reg64 reg_ddst {Xbyak::Operand::RCX};    // diff_dst at the current point (bwd)
    static constexpr Xbyak::Reg64 reg_dfwd {Xbyak::Operand::R8};     // forward dst at the current point (bwd relu)
    static constexpr Xbyak::Reg64 reg_dsrc {Xbyak::Operand::R9};     // diff_src at the current point (bwd_norm)
    static constexpr Xbyak::Reg64 reg_prm {Xbyak::Operand::R10};     // per-channel parameters
    static constexpr Xbyak::Reg64 reg_out {Xbyak::Operand::R11};     // per-call results (stats kernels)
    static constexpr Xbyak::Reg64 reg_cnt {Xbyak::Operand::RAX};     // points left in the current loop
    static constexpr Xbyak::Reg64 reg_tmp {Xbyak::Operand::RBX};     // scratch
    static constexpr Xbyak::Reg64 reg_n {Xbyak::Operand::R12};       // points in this call
    static constexpr Xbyak::Reg64 reg_src0 {Xbyak::Operand::R13};    // src at the first point (second pass)
    static constexpr Xbyak::Reg64 reg_pf_src {Xbyak::Operand::R14};  // next unit's src there (prefetch_next)
    static constexpr Xbyak::Reg64 reg_pf_ddst {Xbyak::Operand::R15}; // next unit's diff_dst there
    static constexpr Xbyak::Reg64 reg_blk {Xbyak::Operand::RBP};     // channel blocks left (blocks > 1)
    // Opmasks (avx512): the tail lanes, and comparison results (relu mask, positive variance).
    static constexpr Xbyak::Opmask k_tail {1}, k_cmp {2};
};

template <isa level, typename Vmm>
class jit_bnorm_kernel_t : public jit_generator_t, protected virtual bnorm_ker_common_t {
public:
    // A virtual base is constructed first, so the kernel's name is set here.
    jit_bnorm_kernel_t() : jit_generator_t(ker_name_, level) {}

    /// The conf and the register tables, for kernelgen and dumps.
    std::string conf_str() const override {
        std::string s = "conf: " + to_string(c_) + "\n";
        s += "loop: " + std::to_string(c_.ur) + " points per step, then 1 point at a time"
                + (c_.sp_vec && c_.sp_tail ? ", then the row's masked tail when args.tail" : "")
                + (c_.blocks > 1 ? cat("; all that for each of args.n_blk blocks, ", c_.blk_stride, " floats apart\n")
                                 : std::string("\n"));
        s += "registers: rdi=bnorm_call_args_t* rsi=src rdx=dst rcx=diff_dst r8=dst_fwd r9=diff_src r10=prm r11=out"
             " rax=points left rbx=scratch r12=points r13=src at the first point (pass 2)"
             " r14/r15=next unit's src/diff_dst"
                + std::string(c_.blocks > 1 ? " rbp=channel blocks left\n" : "\n");
        s += "vector registers: " + vregs_str();
        s += avx512 ? ", k1 tail mask, k2 comparisons\n" : tail_lanes() > 0 ? ", ymm15 tail mask\n" : "\n";
        return s;
    }

protected:
    static_assert(level == isa::avx512_core || level == isa::avx2, "JIT bnorm needs avx2 or avx512_core");
    static_assert(level == isa::avx512_core || std::is_same_v<Vmm, Xbyak::Ymm>, "avx2 has no zmm");
    using traits = isa_traits_t<level>;
    static constexpr int simd_w = std::is_same_v<Vmm, Xbyak::Zmm> ? 16 : 8; // Vmm may be narrower than traits::Vmm
    static constexpr int n_vregs = traits::n_vregs;
    static constexpr bool avx512 = traits::has_opmask;

    // The prologue saves the callee-saved registers of the table (rbx, r12-r15, and rbp where
    // the kernel loops over blocks).
    void preamble() {
        if (c_.blocks > 1)
            jit_generator_t::preamble({reg_args, reg_src, reg_dst, reg_ddst, reg_dfwd, reg_dsrc, reg_prm, reg_out,
                    reg_cnt, reg_tmp, reg_n, reg_src0, reg_pf_src, reg_pf_ddst, reg_blk});
        else
            jit_generator_t::preamble({reg_args, reg_src, reg_dst, reg_ddst, reg_dfwd, reg_dsrc, reg_prm, reg_out,
                    reg_cnt, reg_tmp, reg_n, reg_src0, reg_pf_src, reg_pf_ddst});
    }
    // The vector register map, one line, from the kernel.
    virtual std::string vregs_str() const = 0;
    // avx2 keeps the tail mask in the last vector register (all-ones in valid lanes).
    Vmm vmm_mask() const { return Vmm(n_vregs - 1); }
    // The two normalization kernels' registers start alike: vector cv of per-channel parameter
    // `which` (four of them) at which * V + cv, then a zero vector. (bwd_stats has its own
    // vmm_zero, after its sums.)
    Vmm vmm_prm(int which, int cv) const { return Vmm(which * V() + cv); }
    Vmm vmm_zero() const { return Vmm(4 * V()); }

    // Field `off` of bnorm_call_args_t (offsetof).
    Xbyak::Address arg(std::size_t off) { return ptr[reg_args + static_cast<int>(off)]; }

    // Lanes of the tail vector (0: the kernel has no tail).
    int tail_lanes() const {
        if (c_.sp_vec) return c_.sp_tail;
        return c_.c_tail < simd_w ? c_.c_tail : 0;
    }
    // True if vector cv of a point is partial (channel tail) or, with sp_vec, if this is the
    // row's tail step.
    bool is_tail(int cv, bool sp_tail_step) const {
        if (c_.sp_vec) return sp_tail_step;
        return cv == c_.c_vecs - 1 && c_.c_tail < simd_w;
    }
    // Element (u, cv) of a step: point u, vector cv, relative to a pointer register.
    Xbyak::Address pt_addr(const Xbyak::Reg64 &base, int u, int cv) {
        return ptr[base + static_cast<int>((u * c_.pt_stride + cv * simd_w) * 4)];
    }
    // Lanes (floats) of one block in a row of prm and out: c_vecs vectors, or with sp_vec one
    // scalar, the block's channel.
    int block_lanes() const { return c_.sp_vec ? 1 : c_.c_vecs * simd_w; }
    // Lanes in a row of prm and out: those of `blocks` blocks.
    int prm_lanes() const { return block_lanes() * c_.blocks; }
    // Per-channel parameter vector `which` of vector cv: prm holds [n_params][prm_lanes()]
    // floats; with sp_vec the block's scalar, broadcast.
    void load_prm(const Vmm &v, int which, int cv) {
        if (c_.sp_vec) vbroadcastss(v, ptr[reg_prm + which * prm_lanes() * 4]);
        else vmovups(v, ptr[reg_prm + (which * prm_lanes() + cv * simd_w) * 4]);
    }
    // Stores vector cv of per-call result `which` to out, laid out like prm: with sp_vec, v
    // holds the block's value in every lane (reduced across them) and its first lane goes.
    void store_out(const Vmm &v, int which, int cv) {
        if (c_.sp_vec) vmovss(ptr[reg_out + which * prm_lanes() * 4], Xbyak::Xmm(v.getIdx()));
        else vmovups(ptr[reg_out + (which * prm_lanes() + cv * simd_w) * 4], v);
    }

    // Emits body (one block's whole call, which walks reg_n points from `ptrs`) once, or with
    // blocks > 1 as a loop over args.n_blk blocks: after each, `ptrs` move back by the points
    // the body walked and on by blk_stride, and `lanes` (prm, out) on by one block's lanes, so
    // each block runs exactly as a call of its own.
    template <typename F>
    void block_loop(const std::vector<Xbyak::Reg64> &ptrs, std::initializer_list<Xbyak::Reg64> lanes, F &&body) {
        if (c_.blocks == 1) {
            body();
            return;
        }
        Xbyak::Label l_blk;
        mov(reg_blk, arg(offsetof(bnorm_call_args_t, n_blk)));
        L(l_blk);
        body();
        imul(reg_tmp, reg_n, static_cast<int>(c_.pt_stride * 4));
        for (const Xbyak::Reg64 &r : ptrs) {
            sub(r, reg_tmp);
            add(r, static_cast<int>(c_.blk_stride * 4));
        }
        for (const Xbyak::Reg64 &r : lanes) add(r, block_lanes() * 4);
        dec(reg_blk);
        jnz(l_blk, T_NEAR);
    }

    void set_tail_mask() {
        if (const int lanes = tail_lanes(); lanes > 0)
            emit_tail_mask(*this, avx512, lanes, k_tail, vmm_mask(), reg_tmp.cvt32());
    }

    void load(const Vmm &v, const Xbyak::Address &a, bool tail) {
        emit_load_tail<avx512>(*this, v, a, tail, k_tail, vmm_mask());
    }
    void store(const Xbyak::Address &a, const Vmm &v, bool tail, bool nt) {
        if (nt && !tail) vmovntps(a, v);
        else emit_store_tail<avx512>(*this, a, v, tail, k_tail, vmm_mask());
    }
    // Zeroes the lanes of v outside the tail mask.
    void zero_outside_tail(const Vmm &v) {
        if constexpr (avx512) vmovaps(v | k_tail | Xbyak::util::T_z, v);
        else vandps(v, v, vmm_mask());
    }

    // Prefetches (into L2) the line of point u from each pointer: the next unit's data.
    void prefetch(std::initializer_list<Xbyak::Reg64> ptrs, int u) {
        for (const Xbyak::Reg64 &r : ptrs) prefetcht1(ptr[r + static_cast<int>(u * c_.pt_stride * 4)]);
    }

    // next_stats: prefetches (into L1) pf_next bytes past point u of each pointer, the next
    // unit's streams that the fused sums read from memory.
    void prefetch_ahead(std::initializer_list<Xbyak::Reg64> ptrs, int u) {
        for (const Xbyak::Reg64 &r : ptrs) prefetcht0(ptr[r + static_cast<int>(u * c_.pt_stride * 4 + c_.pf_next)]);
    }

    // Adds u points to each pointer.
    void advance(const std::vector<Xbyak::Reg64> &ptrs, int u) {
        for (const Xbyak::Reg64 &r : ptrs) add(r, static_cast<int>(u * c_.pt_stride * 4));
    }

    // The point loop over reg_n points: step(ur, false) while ur points remain, then
    // step(1, false) one point at a time, then with sp_vec and a row tail step(1, true) if the
    // call's tail argument is set. step emits the work at offsets 0..u-1 from the pointers.
    template <typename F>
    void point_loop(const std::vector<Xbyak::Reg64> &ptrs, F &&step) {
        Xbyak::Label l_main, l_rem, l_end;
        mov(reg_cnt, reg_n);
        if (c_.ur > 1) {
            L(l_main);
            cmp(reg_cnt, c_.ur);
            jl(l_rem, T_NEAR);
            step(c_.ur, false);
            advance(ptrs, c_.ur);
            sub(reg_cnt, c_.ur);
            jmp(l_main, T_NEAR);
        }
        L(l_rem);
        test(reg_cnt, reg_cnt);
        jz(l_end, T_NEAR);
        step(1, false);
        advance(ptrs, 1);
        dec(reg_cnt);
        jmp(l_rem, T_NEAR);
        L(l_end);
        if (c_.sp_vec && c_.sp_tail) {
            Xbyak::Label l_no_tail;
            cmp(qword[reg_args + static_cast<int>(offsetof(bnorm_call_args_t, tail))], 0);
            je(l_no_tail, T_NEAR);
            step(1, true);
            L(l_no_tail);
        }
    }

    // ---- f64_sums statistics: one pass, sums in double (fwd_stats and next_stats fwd_norm) ----
    // Each float vector x is taken as two double vectors (its low and high half); K is x at
    // the call's first point (0 where that is inf or NaN); d = x - K in double (no overflow;
    // exact unless the exponents of x and K differ by more than 29); S1 += d, S2 += d^2.
    // out = [K, S1, S2], each c_vecs * simd_w doubles. The registers start at r0 (f64_regs_t;
    // fwd_stats and fwd_norm count them in bnorm_ker_vregs). Only for kernels without tails
    // (init_conf: whole channel blocks), so every vector is loaded whole.
    struct f64_regs_t {
        int r0, U, V;
        Vmm k(int half, int cv) const { return Vmm(r0 + 2 * cv + half); }
        // which: 0 S1, 1 S2
        Vmm acc(int which, int half, int u, int cv) const {
            return Vmm(r0 + 2 * V + ((which * 2 + half) * U + u) * V + cv);
        }
        Vmm t(int i) const { return Vmm(r0 + 2 * V + 4 * U * V + i); }
    };
    f64_regs_t f64_regs(int r0) const { return {r0, c_.ur, c_.c_vecs}; }
    std::string f64_vregs_str(const f64_regs_t &r) const {
        return cat("K(half,cv) = ", r.r0, "+2cv+half, S1(half,u,cv) = ", r.acc(0, 0, 0, 0).getIdx(),
                "+(half*U+u)*V+cv, S2(half,u,cv) = ", r.acc(1, 0, 0, 0).getIdx(),
                "+(half*U+u)*V+cv, tmp = ", r.t(0).getIdx(), "..", r.t(1).getIdx());
    }
    // Half `half` of vector cv of point u (from base) as doubles into d.
    void f64_load_half(const Vmm &d, const Xbyak::Reg64 &base, int u, int cv, int half) {
        vcvtps2pd(d, ptr[base + static_cast<int>((u * c_.pt_stride + cv * simd_w + half * simd_w / 2) * 4)]);
    }
    // Zeroes the sums and loads K from the first point at src. A lane whose first value is
    // inf or NaN takes K = 0 instead, so that its sums carry the inf (the mean is then that
    // inf, as the naive sum gives) rather than inf - inf = NaN from every point.
    void f64_setup(const f64_regs_t &r, const Xbyak::Reg64 &src) {
        for (int cv = 0; cv < r.V; ++cv) {
            for (int h = 0; h < 2; ++h) {
                const Vmm k = r.k(h, cv);
                f64_load_half(k, src, 0, cv, h);
                if constexpr (avx512) {
                    vfpclasspd(k_cmp, k, 0x99); // QNaN, +inf, -inf, SNaN
                    vxorpd(k | k_cmp, k, k);
                } else {
                    const Vmm t = r.t(0);
                    vsubpd(t, k, k);       // 0, or NaN where k is not finite
                    vcmppd(t, t, t, 0x00); // _CMP_EQ_OQ: all ones where finite
                    vandpd(k, k, t);
                }
                for (int u = 0; u < r.U; ++u)
                    for (int w = 0; w < 2; ++w) vxorpd(r.acc(w, h, u, cv), r.acc(w, h, u, cv), r.acc(w, h, u, cv));
            }
        }
    }
    // Vector cv of point uu (from src) into step uu's sums.
    void f64_vec(const f64_regs_t &r, const Xbyak::Reg64 &src, int uu, int cv) {
        for (int h = 0; h < 2; ++h) {
            const Vmm d = r.t(h);
            f64_load_half(d, src, uu, cv, h);
            vsubpd(d, d, r.k(h, cv));
            vaddpd(r.acc(0, h, uu, cv), r.acc(0, h, uu, cv), d);
            vfmadd231pd(r.acc(1, h, uu, cv), d, d);
        }
    }
    // After the point loop: folds steps 1..U-1 into step 0 in step order and stores out.
    void f64_finish(const f64_regs_t &r, const Xbyak::Reg64 &out) {
        const int S = r.V * simd_w; // doubles per row of out
        for (int cv = 0; cv < r.V; ++cv)
            for (int h = 0; h < 2; ++h) {
                for (int u = 1; u < r.U; ++u)
                    for (int w = 0; w < 2; ++w) vaddpd(r.acc(w, h, 0, cv), r.acc(w, h, 0, cv), r.acc(w, h, u, cv));
                const int l = cv * simd_w + h * simd_w / 2; // first lane of this half
                vmovupd(ptr[out + l * 8], r.k(h, cv));
                vmovupd(ptr[out + (S + l) * 8], r.acc(0, h, 0, cv));
                vmovupd(ptr[out + (2 * S + l) * 8], r.acc(1, h, 0, cv));
            }
    }

    // dy = 0 where the forward dst (at a) is not > 0: the relu was inactive, or dst is NaN.
    void relu_mask(const Vmm &dy, const Vmm &fwd, const Vmm &zero, const Xbyak::Address &a, bool tail) {
        load(fwd, a, tail);
        if constexpr (avx512) {
            vcmpps(k_cmp, fwd, zero, 0x1e); // _CMP_GT_OQ
            vmovaps(dy | k_cmp | Xbyak::util::T_z, dy);
        } else {
            vcmpps(fwd, fwd, zero, 0x1e);
            vandps(dy, dy, fwd);
        }
    }

    // Horizontal reduction of v with op (vaddps or vmaxps) in a fixed order; the result is
    // broadcast to every lane. t is a temporary.
    template <typename Op>
    void hreduce(const Vmm &v, const Vmm &t, Op op) {
        const Xbyak::Ymm yv(v.getIdx()), yt(t.getIdx());
        const Xbyak::Xmm xv(v.getIdx()), xt(t.getIdx());
        if constexpr (simd_w == 16) {
            vextractf64x4(yt, v, 1);
            op(yv, yv, yt);
        }
        if constexpr (avx512) vextractf32x4(xt, yv, 1);
        else vextractf128(xt, yv, 1);
        op(xv, xv, xt);
        vshufps(xt, xv, xv, 0x4e); // swap the 64-bit halves
        op(xv, xv, xt);
        vshufps(xt, xv, xv, 0xb1); // swap neighbours
        op(xv, xv, xt);
        vbroadcastss(v, xv);
    }
    void hsum(const Vmm &v, const Vmm &t) {
        hreduce(v, t, [this](const Xbyak::Xmm &a, const Xbyak::Xmm &b, const Xbyak::Operand &c) { vaddps(a, b, c); });
    }
    void hmax(const Vmm &v, const Vmm &t) {
        hreduce(v, t, [this](const Xbyak::Xmm &a, const Xbyak::Xmm &b, const Xbyak::Operand &c) { vmaxps(a, b, c); });
    }
};

} // namespace blockdnn::impl
