// SPDX-License-Identifier: Apache-2.0
// Forward training, statistics of one chunk, in two passes over data that stays in cache (L2):
//   pass 1:  m = sum(x / n) per lane, and amax = max |x|          (reads memory)
//   then:    k = 2^-floor(log2 amax), a power of two that brings the chunk near 1
//   pass 2:  d = x k - m k;  S1 = sum(d),  S2 = sum(d^2)            (re-reads the chunk from cache)
// out = [m, 1/k, S1, S2] per lane. The driver recovers, in double, the chunk mean
// m + S1 / (k n) and M2 = (S2 - S1^2 / n) / k^2 and combines chunks with Chan et al.'s
// parallel formula. The shift m is the chunk's own mean, so S1 is a small correction and
// nothing cancels (unlike E[x^2] - E[x]^2); the power-of-two scale is exact and keeps d^2
// from overflowing or underflowing at the ends of the float range.
// With sp_vec (ncsp) the lanes hold one channel: m and amax are reduced across lanes before
// pass 2, and S1, S2 after it; out holds one float per channel.
// With blocks > 1, all this for each of args.n_blk blocks (jit_bnorm_kernel_t::block_loop).
// With f64_sums (blocked layouts, bnorm_conf_t::fuse_next_stats) it is instead one pass with
// the sums in double, shifted by the first point's value K: out = [K, S1, S2] in double per
// lane (jit_bnorm_kernel_t::f64_setup). Double sums need neither the scale k (no overflow or
// underflow for float data) nor a shift near the mean (cancellation in S2 - S1^2 / n costs
// about log2(1 + (mean - K)^2 / var) of double's 53 bits), so one read of the data suffices.
#include "core/utils.hpp"
#include "ops/bnorm/jit_bnorm_kernel.hpp"

namespace blockdnn::impl {

namespace {

template <isa level, typename Vmm>
class jit_bnorm_fwd_stats_kernel_t : public jit_bnorm_kernel_t<level, Vmm>, protected virtual bnorm_ker_common_t {
    // Vector registers, U = ur, V = c_vecs (bnorm_ker_vregs: 2UV + 4 + 2V):
    //   [0, UV)        pass 1: sum(u, cv)   pass 2: S1(u, cv)
    //   [UV, 2UV)      pass 1: amax(u, cv)  pass 2: S2(u, cv)
    //   2UV, 2UV+1     1/n, abs mask        2UV+2, 2UV+3  temporaries
    //   2UV+4+cv       k(cv)                2UV+4+V+cv    m k (cv)
    Vmm acc_a(int u, int cv) const { return Vmm(u * V() + cv); }
    Vmm acc_b(int u, int cv) const { return Vmm(U() * V() + u * V() + cv); }
    Vmm vmm_inv_n() const { return Vmm(2 * U() * V()); }
    Vmm vmm_abs() const { return Vmm(2 * U() * V() + 1); }
    Vmm vmm_t(int i) const { return Vmm(2 * U() * V() + 2 + (i & 1)); }
    Vmm vmm_k(int cv) const { return Vmm(2 * U() * V() + 4 + cv); }
    Vmm vmm_mk(int cv) const { return Vmm(2 * U() * V() + 4 + V() + cv); }

public:
    explicit jit_bnorm_fwd_stats_kernel_t(const bnorm_ker_conf_t &c) : bnorm_ker_common_t("jit_bnorm_fwd_stats", c) {}

private:
    void zero_accs() {
        for (int u = 0; u < U(); ++u)
            for (int cv = 0; cv < V(); ++cv) {
                this->vxorps(acc_a(u, cv), acc_a(u, cv), acc_a(u, cv));
                this->vxorps(acc_b(u, cv), acc_b(u, cv), acc_b(u, cv));
            }
    }

    // Folds steps 1..U-1 of both accumulators into step 0 in step order (acc_b by max with
    // `b_max`, else by sum), then, with sp_vec, across the lanes.
    void fold_accs(bool b_max) {
        for (int cv = 0; cv < V(); ++cv)
            for (int u = 1; u < U(); ++u) {
                this->vaddps(acc_a(0, cv), acc_a(0, cv), acc_a(u, cv));
                if (b_max) this->vmaxps(acc_b(0, cv), acc_b(0, cv), acc_b(u, cv));
                else this->vaddps(acc_b(0, cv), acc_b(0, cv), acc_b(u, cv));
            }
        if (!c_.sp_vec) return;
        this->hsum(acc_a(0, 0), vmm_t(0));
        if (b_max) this->hmax(acc_b(0, 0), vmm_t(0));
        else this->hsum(acc_b(0, 0), vmm_t(0));
    }

    // One pass with sums in double (see jit_bnorm_kernel_t::f64_setup), registers from 0.
    void generate_f64() {
        const auto r = this->f64_regs(0);
        this->f64_setup(r, reg_src);
        this->point_loop({reg_src}, [&](int u, bool) {
            for (int uu = 0; uu < u; ++uu)
                for (int cv = 0; cv < V(); ++cv) this->f64_vec(r, reg_src, uu, cv);
        });
        this->f64_finish(r, reg_out);
        this->postamble();
    }

    std::string vregs_str() const override {
        if (c_.f64_sums) return this->f64_vregs_str(this->f64_regs(0)) + cat(" (U = ", U(), ", V = ", V(), ")");
        return cat("sum/S1(u,cv) = u*V+cv, amax/S2(u,cv) = UV+u*V+cv, 1/n = ", 2 * U() * V(),
                ", abs mask = ", 2 * U() * V() + 1, ", tmp = ", 2 * U() * V() + 2, "..", 2 * U() * V() + 3,
                ", k(cv) = ", 2 * U() * V() + 4, "+cv, m k(cv) = ", 2 * U() * V() + 4 + V(), "+cv (U = ", U(),
                ", V = ", V(), ")");
    }

    void generate() override {
        this->preamble();
        this->mov(reg_src, this->arg(offsetof(bnorm_call_args_t, src)));
        this->mov(reg_out, this->arg(offsetof(bnorm_call_args_t, out)));
        this->mov(reg_n, this->arg(offsetof(bnorm_call_args_t, n_pts)));
        this->set_tail_mask();
        if (c_.f64_sums) {
            generate_f64();
            return;
        }
        this->block_loop({reg_src}, {reg_out}, [&] { generate_two_pass(); });
        this->postamble();
    }

    // The two passes over one block's points from reg_src, results to reg_out.
    void generate_two_pass() {
        // Pass 1: mean (as a sum of x / n) and max |x|.
        this->mov(reg_src0, reg_src);
        zero_accs();
        this->vbroadcastss(vmm_inv_n(), this->arg(offsetof(bnorm_call_args_t, inv_n)));
        this->vmovups(vmm_abs(), this->vconst_u32(0x7fffffffu));
        this->point_loop({reg_src}, [&](int u, bool sp_tail) {
            for (int uu = 0; uu < u; ++uu)
                for (int cv = 0; cv < V(); ++cv) {
                    const Vmm t = vmm_t(uu * V() + cv);
                    this->load(t, this->pt_addr(reg_src, uu, cv), this->is_tail(cv, sp_tail));
                    this->vfmadd231ps(acc_a(uu, cv), t, vmm_inv_n());
                    this->vandps(t, t, vmm_abs());
                    this->vmaxps(acc_b(uu, cv), acc_b(uu, cv), t);
                }
        });
        fold_accs(true);
        // k = 2^-e with e = floor(log2 amax) clamped to [-126, 126], so k and 1/k = 2^e are
        // normal floats: the exponent field E of amax, clamped, is 1/k's bit pattern, and
        // k's is 0x7f000000 - E. Integer ops on the exponent field, the same on both ISAs.
        for (int cv = 0; cv < V(); ++cv) {
            const Vmm t = vmm_t(0);
            this->vandps(t, acc_b(0, cv), this->vconst_u32(0x7f800000u));
            this->vpmaxsd(t, t, this->vconst_u32(0x00800000u));
            this->vpminsd(t, t, this->vconst_u32(0x7e800000u));
            this->store_out(acc_a(0, cv), 0, cv);
            this->store_out(t, 1, cv); // 1/k
            this->vmovups(vmm_k(cv), this->vconst_u32(0x7f000000u));
            this->vpsubd(vmm_k(cv), vmm_k(cv), t);
            this->vmulps(vmm_mk(cv), acc_a(0, cv), vmm_k(cv));
        }

        // Pass 2: shifted, scaled sums over the same (cache-resident) points.
        this->mov(reg_src, reg_src0);
        zero_accs();
        this->point_loop({reg_src}, [&](int u, bool sp_tail) {
            for (int uu = 0; uu < u; ++uu)
                for (int cv = 0; cv < V(); ++cv) {
                    const Vmm t = vmm_t(uu * V() + cv);
                    this->load(t, this->pt_addr(reg_src, uu, cv), this->is_tail(cv, sp_tail));
                    this->vfmsub213ps(t, vmm_k(cv), vmm_mk(cv)); // x k - m k
                    if (sp_tail) this->zero_outside_tail(t);     // masked lanes read 0, not m
                    this->vaddps(acc_a(uu, cv), acc_a(uu, cv), t);
                    this->vfmadd231ps(acc_b(uu, cv), t, t);
                }
        });
        fold_accs(false);
        for (int cv = 0; cv < V(); ++cv) {
            this->store_out(acc_a(0, cv), 2, cv);
            this->store_out(acc_b(0, cv), 3, cv);
        }
    }
};

} // namespace

std::unique_ptr<jit_generator_t> make_bnorm_fwd_stats_kernel(const bnorm_ker_conf_t &k) {
    return make_bnorm_kernel_as<jit_bnorm_fwd_stats_kernel_t>(k);
}

} // namespace blockdnn::impl
