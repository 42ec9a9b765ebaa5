// SPDX-License-Identifier: Apache-2.0
// Backward diff_src, one pass:
//   training form:  diff_src = A dy' + B (src - mean) + C
//   inference form: diff_src = A dy'
// with dy' = dy masked by dst > 0 under fuse_relu, and prm = [mean, A, B, C] per lane
// (sp_vec: four scalars). The driver derives A, B, C from the sums of the statistics pass
// (see src/ops/bnorm/bnorm_jit_stats.hpp for the equations).
#include "core/utils.hpp"
#include "ops/bnorm/jit_bnorm_kernel.hpp"

namespace blockdnn::impl {

namespace {

template <isa level, typename Vmm>
class jit_bnorm_bwd_norm_kernel_t : public jit_bnorm_kernel_t<level, Vmm>, protected virtual bnorm_ker_common_t {
    // Vector registers (bnorm_ker_vregs: 4V + 4): vmm_prm(which, cv) = which V + cv for
    // mean, A, B, C; vmm_zero() = 4V; temporaries dy, dst, xm at 4V + 1..3.
    Vmm vmm_dy() const { return Vmm(4 * V() + 1); }
    Vmm vmm_fwd() const { return Vmm(4 * V() + 2); }
    Vmm vmm_xm() const { return Vmm(4 * V() + 3); }

public:
    explicit jit_bnorm_bwd_norm_kernel_t(const bnorm_ker_conf_t &c) : bnorm_ker_common_t("jit_bnorm_bwd_norm", c) {}

private:
    std::string vregs_str() const override {
        return cat("mean(cv) = cv, A(cv) = V+cv, B(cv) = 2V+cv, C(cv) = 3V+cv, zero = ", 4 * V(),
                ", dy/dst/xm = ", 4 * V() + 1, "..", 4 * V() + 3, " (V = ", V(), ")");
    }

    void generate() override {
        this->preamble();
        if (c_.bwd_full) this->mov(reg_src, this->arg(offsetof(bnorm_call_args_t, src)));
        this->mov(reg_ddst, this->arg(offsetof(bnorm_call_args_t, diff_dst)));
        if (c_.relu) this->mov(reg_dfwd, this->arg(offsetof(bnorm_call_args_t, dst_fwd)));
        this->mov(reg_dsrc, this->arg(offsetof(bnorm_call_args_t, diff_src)));
        this->mov(reg_prm, this->arg(offsetof(bnorm_call_args_t, prm)));
        this->mov(reg_n, this->arg(offsetof(bnorm_call_args_t, n_pts)));
        if (c_.prefetch_next) {
            this->mov(reg_pf_src, this->arg(offsetof(bnorm_call_args_t, pf_src)));
            this->mov(reg_pf_ddst, this->arg(offsetof(bnorm_call_args_t, pf_ddst)));
        }
        this->set_tail_mask();
        for (int cv = 0; cv < V(); ++cv)
            for (int which = 0; which < 4; ++which)
                if (c_.bwd_full || which == 1) this->load_prm(this->vmm_prm(which, cv), which, cv);
        if (c_.relu) this->vxorps(this->vmm_zero(), this->vmm_zero(), this->vmm_zero());

        auto step = [&](int u, bool sp_tail) {
            for (int uu = 0; uu < u; ++uu) {
                if (c_.prefetch_next && !sp_tail) this->prefetch({reg_pf_src, reg_pf_ddst}, uu);
                for (int cv = 0; cv < V(); ++cv) {
                    const bool tail = this->is_tail(cv, sp_tail);
                    this->load(vmm_dy(), this->pt_addr(reg_ddst, uu, cv), tail);
                    if (c_.relu)
                        this->relu_mask(vmm_dy(), vmm_fwd(), this->vmm_zero(), this->pt_addr(reg_dfwd, uu, cv), tail);
                    if (c_.bwd_full) {
                        this->load(vmm_xm(), this->pt_addr(reg_src, uu, cv), tail);
                        this->vsubps(vmm_xm(), vmm_xm(), this->vmm_prm(0, cv));
                        this->vfmadd213ps(vmm_xm(), this->vmm_prm(2, cv), this->vmm_prm(3, cv)); // B xm + C
                        this->vfmadd231ps(vmm_xm(), vmm_dy(), this->vmm_prm(1, cv));             // + A dy
                    } else {
                        this->vmulps(vmm_xm(), vmm_dy(), this->vmm_prm(1, cv));
                    }
                    this->store(this->pt_addr(reg_dsrc, uu, cv), vmm_xm(), tail, c_.nt_store);
                }
            }
        };
        std::vector<Xbyak::Reg64> ptrs = {reg_ddst, reg_dsrc};
        if (c_.bwd_full) ptrs.push_back(reg_src);
        if (c_.relu) ptrs.push_back(reg_dfwd);
        if (c_.prefetch_next) ptrs.insert(ptrs.end(), {reg_pf_src, reg_pf_ddst});
        this->point_loop(ptrs, step);
        this->postamble();
    }
};

} // namespace

std::unique_ptr<jit_generator_t> make_bnorm_bwd_norm_kernel(const bnorm_ker_conf_t &k) {
    return make_bnorm_kernel_as<jit_bnorm_bwd_norm_kernel_t>(k);
}

} // namespace blockdnn::impl
