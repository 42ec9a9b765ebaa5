// SPDX-License-Identifier: Apache-2.0
// Forward normalization, one read and one write per element:
//   dst = ((src - mean_hi) - mean_lo) * alpha + beta,   then max(0, dst) with fuse_relu
// prm = [mean_hi, mean_lo, var, gamma, beta] per lane (sp_vec: per channel); the kernel
// computes alpha = gamma / sqrt(var + eps) once per call and block, and 0 where
// var + eps is not positive (or NaN), so a constant channel with eps = 0 gives dst = beta.
// Training passes the batch mean as a float pair (mean_lo = mean - mean_hi) so that src - mean
// is as exact as in double; inference has no mean_lo. max(0, y) is vmaxps(0, y), which returns
// y when y is NaN: NaN stays NaN.
// With next_stats the point loop also gathers the f64_sums statistics of the next unit's src
// (pf_src) at the same points, as fwd_stats would (same emitters, same unroll), into out.
// With pf_next each point also prefetches the next unit's src pf_next bytes ahead.
#include "core/utils.hpp"
#include "ops/bnorm/jit_bnorm_kernel.hpp"

namespace blockdnn::impl {

namespace {

template <isa level, typename Vmm>
class jit_bnorm_fwd_norm_kernel_t : public jit_bnorm_kernel_t<level, Vmm>, protected virtual bnorm_ker_common_t {
    // Vector registers (bnorm_ker_vregs: 4V + 3): vmm_prm(which, cv) = which V + cv for
    // mean_hi, mean_lo, alpha, beta; vmm_zero() = 4V; temporaries 4V + 1, 4V + 2.
    Vmm vmm_t(int i) const { return Vmm(4 * V() + 1 + (i & 1)); }

public:
    explicit jit_bnorm_fwd_norm_kernel_t(const bnorm_ker_conf_t &c) : bnorm_ker_common_t("jit_bnorm_fwd_norm", c) {}

private:
    std::string vregs_str() const override {
        std::string s =
                cat("mean_hi(cv) = cv, mean_lo(cv) = V+cv, alpha(cv) = 2V+cv, beta(cv) = 3V+cv, zero = ", 4 * V(),
                        ", tmp = ", 4 * V() + 1, "..", 4 * V() + 2, " (V = ", V(), ")");
        if (c_.next_stats) s += cat("; next unit's statistics (U = ", c_.ur, "): ", this->f64_vregs_str(f64()));
        return s;
    }

    using base = jit_bnorm_kernel_t<level, Vmm>;
    // next_stats: the f64_sums registers, after the normalization's 4V + 3.
    typename base::f64_regs_t f64() const { return this->f64_regs(4 * V() + 3); }

    void generate() override {
        this->preamble();
        this->mov(reg_src, this->arg(offsetof(bnorm_call_args_t, src)));
        this->mov(reg_dst, this->arg(offsetof(bnorm_call_args_t, dst)));
        this->mov(reg_prm, this->arg(offsetof(bnorm_call_args_t, prm)));
        this->mov(reg_n, this->arg(offsetof(bnorm_call_args_t, n_pts)));
        if (c_.prefetch_next || c_.next_stats) this->mov(reg_pf_src, this->arg(offsetof(bnorm_call_args_t, pf_src)));
        this->set_tail_mask();
        if (c_.next_stats) {
            this->mov(reg_out, this->arg(offsetof(bnorm_call_args_t, out)));
            this->f64_setup(f64(), reg_pf_src);
        }
        this->vxorps(this->vmm_zero(), this->vmm_zero(), this->vmm_zero());
        std::vector<Xbyak::Reg64> ptrs = {reg_src, reg_dst};
        if (c_.prefetch_next || c_.next_stats) ptrs.push_back(reg_pf_src);
        this->block_loop(ptrs, {reg_prm}, [&] { normalize(ptrs); });
        if (c_.next_stats) this->f64_finish(f64(), reg_out);
        this->postamble();
    }

    // Loads one block's parameters from reg_prm and normalizes its reg_n points.
    void normalize(const std::vector<Xbyak::Reg64> &ptrs) {
        for (int cv = 0; cv < V(); ++cv) {
            this->load_prm(this->vmm_prm(0, cv), 0, cv);
            if (c_.mean_lo) this->load_prm(this->vmm_prm(1, cv), 1, cv);
            // alpha = gamma / sqrt(var + eps) where var + eps > 0, else 0.
            const Vmm t0 = vmm_t(0), t1 = vmm_t(1);
            this->load_prm(t0, 2, cv);
            this->vbroadcastss(t1, this->arg(offsetof(bnorm_call_args_t, eps)));
            this->vaddps(t0, t0, t1);
            this->load_prm(this->vmm_prm(2, cv), 3, cv);
            if constexpr (base::avx512) {
                this->vcmpps(k_cmp, t0, this->vmm_zero(), 0x1e); // _CMP_GT_OQ: false for NaN
                this->vsqrtps(t0, t0);
                this->vdivps(this->vmm_prm(2, cv) | k_cmp | Xbyak::util::T_z, this->vmm_prm(2, cv), t0);
            } else {
                this->vcmpps(t1, t0, this->vmm_zero(), 0x1e);
                this->vsqrtps(t0, t0);
                this->vdivps(this->vmm_prm(2, cv), this->vmm_prm(2, cv), t0);
                this->vandps(this->vmm_prm(2, cv), this->vmm_prm(2, cv), t1);
            }
            this->load_prm(this->vmm_prm(3, cv), 4, cv);
        }

        auto step = [&](int u, bool sp_tail) {
            for (int uu = 0; uu < u; ++uu) {
                if (c_.prefetch_next && !sp_tail) this->prefetch({reg_pf_src}, uu);
                if (c_.pf_next && !sp_tail) this->prefetch_ahead({reg_pf_src}, uu);
                for (int cv = 0; cv < V(); ++cv) {
                    const Vmm t = vmm_t(uu * V() + cv);
                    const bool tail = this->is_tail(cv, sp_tail);
                    this->load(t, this->pt_addr(reg_src, uu, cv), tail);
                    this->vsubps(t, t, this->vmm_prm(0, cv));
                    if (c_.mean_lo) this->vsubps(t, t, this->vmm_prm(1, cv));
                    this->vfmadd213ps(t, this->vmm_prm(2, cv), this->vmm_prm(3, cv));
                    if (c_.relu) this->vmaxps(t, this->vmm_zero(), t);
                    this->store(this->pt_addr(reg_dst, uu, cv), t, tail, c_.nt_store);
                    if (c_.next_stats) this->f64_vec(f64(), reg_pf_src, uu, cv);
                }
            }
        };
        this->point_loop(ptrs, step);
    }
};

} // namespace

std::unique_ptr<jit_generator_t> make_bnorm_fwd_norm_kernel(const bnorm_ker_conf_t &k) {
    return make_bnorm_kernel_as<jit_bnorm_fwd_norm_kernel_t>(k);
}

} // namespace blockdnn::impl
