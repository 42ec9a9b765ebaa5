// SPDX-License-Identifier: Apache-2.0
// Backward diff_src, one pass:
//   training form:  diff_src = A dy' + B (src - mean) + C
//   inference form: diff_src = A dy'
// with dy' = dy masked by dst > 0 under fuse_relu, and prm = [mean, A, B, C] per lane
// (sp_vec: per channel). The driver derives A, B, C from the sums of the statistics pass
// (see src/ops/bnorm/bnorm_jit_stats.hpp for the equations).
// With next_stats the point loop also gathers the next unit's bwd_stats sums (its src at
// pf_src, diff_dst at pf_ddst, its mean at prm[4]) into out, with bwd_stats' unroll and
// arithmetic, so the sums are the same bits; with pf_next it prefetches both of those
// streams pf_next bytes ahead of each point.
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
    // next_stats, after those (3UV + V + 2 more): acc(which, u, cv) = r0 + which UV + u V + cv
    // as bwd_stats' sums, the next unit's mean(cv) = r0 + 3UV + cv, temporaries dy, xm after.
    int r0() const { return 4 * V() + 4; }
    Vmm nx_acc(int which, int u, int cv) const { return Vmm(r0() + which * U() * V() + u * V() + cv); }
    Vmm nx_mean(int cv) const { return Vmm(r0() + 3 * U() * V() + cv); }
    Vmm nx_dy() const { return Vmm(r0() + 3 * U() * V() + V()); }
    Vmm nx_xm() const { return Vmm(r0() + 3 * U() * V() + V() + 1); }
    int n_sums() const { return c_.bwd_full ? 3 : 2; }

public:
    explicit jit_bnorm_bwd_norm_kernel_t(const bnorm_ker_conf_t &c) : bnorm_ker_common_t("jit_bnorm_bwd_norm", c) {}

private:
    std::string vregs_str() const override {
        std::string s = cat("mean(cv) = cv, A(cv) = V+cv, B(cv) = 2V+cv, C(cv) = 3V+cv, zero = ", 4 * V(),
                ", dy/dst/xm = ", 4 * V() + 1, "..", 4 * V() + 3, " (V = ", V(), ")");
        if (c_.next_stats)
            s += cat("; next unit's sums (U = ", U(), "): dy(u,cv) = ", r0(), "+u*V+cv, dy xm = ", r0() + U() * V(),
                    "+u*V+cv, xm = ", r0() + 2 * U() * V(), "+u*V+cv, mean(cv) = ", nx_mean(0).getIdx(),
                    "+cv, dy/xm = ", nx_dy().getIdx(), "..", nx_xm().getIdx());
        return s;
    }

    void generate() override {
        this->preamble();
        if (c_.bwd_full) this->mov(reg_src, this->arg(offsetof(bnorm_call_args_t, src)));
        this->mov(reg_ddst, this->arg(offsetof(bnorm_call_args_t, diff_dst)));
        if (c_.relu) this->mov(reg_dfwd, this->arg(offsetof(bnorm_call_args_t, dst_fwd)));
        this->mov(reg_dsrc, this->arg(offsetof(bnorm_call_args_t, diff_src)));
        this->mov(reg_prm, this->arg(offsetof(bnorm_call_args_t, prm)));
        this->mov(reg_n, this->arg(offsetof(bnorm_call_args_t, n_pts)));
        if (c_.next_stats) this->mov(reg_out, this->arg(offsetof(bnorm_call_args_t, out)));
        if (c_.prefetch_next || c_.next_stats) {
            this->mov(reg_pf_src, this->arg(offsetof(bnorm_call_args_t, pf_src)));
            this->mov(reg_pf_ddst, this->arg(offsetof(bnorm_call_args_t, pf_ddst)));
        }
        this->set_tail_mask();
        std::vector<Xbyak::Reg64> ptrs = {reg_ddst, reg_dsrc};
        if (c_.bwd_full) ptrs.push_back(reg_src);
        if (c_.relu) ptrs.push_back(reg_dfwd);
        if (c_.prefetch_next || c_.next_stats) ptrs.insert(ptrs.end(), {reg_pf_src, reg_pf_ddst});
        this->block_loop(ptrs, {reg_prm}, [&] { normalize(ptrs); });
        if (c_.next_stats) // as bwd_stats: steps 1..U-1 into step 0 in step order
            for (int w = 0; w < n_sums(); ++w)
                for (int cv = 0; cv < V(); ++cv) {
                    for (int u = 1; u < U(); ++u) this->vaddps(nx_acc(w, 0, cv), nx_acc(w, 0, cv), nx_acc(w, u, cv));
                    this->store_out(nx_acc(w, 0, cv), w, cv);
                }
        this->postamble();
    }

    // Loads one block's parameters from reg_prm and computes diff_src at its reg_n points.
    // (next_stats, with blocks 1: the next unit's mean and sums too.)
    void normalize(const std::vector<Xbyak::Reg64> &ptrs) {
        for (int cv = 0; cv < V(); ++cv)
            for (int which = 0; which < 4; ++which)
                if (c_.bwd_full || which == 1) this->load_prm(this->vmm_prm(which, cv), which, cv);
        if (c_.relu) this->vxorps(this->vmm_zero(), this->vmm_zero(), this->vmm_zero());
        if (c_.next_stats) {
            for (int cv = 0; cv < V(); ++cv) this->load_prm(nx_mean(cv), 4, cv);
            for (int w = 0; w < n_sums(); ++w)
                for (int u = 0; u < U(); ++u)
                    for (int cv = 0; cv < V(); ++cv) this->vxorps(nx_acc(w, u, cv), nx_acc(w, u, cv), nx_acc(w, u, cv));
        }

        auto step = [&](int u, bool sp_tail) {
            for (int uu = 0; uu < u; ++uu) {
                if (c_.prefetch_next && !sp_tail) this->prefetch({reg_pf_src, reg_pf_ddst}, uu);
                if (c_.pf_next && !sp_tail) this->prefetch_ahead({reg_pf_src, reg_pf_ddst}, uu);
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
                    if (c_.next_stats) next_sums(uu, cv); // no tails (init_conf)
                }
            }
        };
        this->point_loop(ptrs, step);
    }

    // The next unit's vector cv of point uu into step uu's sums, as bwd_stats adds them.
    void next_sums(int uu, int cv) {
        this->load(nx_dy(), this->pt_addr(reg_pf_ddst, uu, cv), false);
        this->load(nx_xm(), this->pt_addr(reg_pf_src, uu, cv), false);
        this->vsubps(nx_xm(), nx_xm(), nx_mean(cv));
        this->vaddps(nx_acc(0, uu, cv), nx_acc(0, uu, cv), nx_dy());
        this->vfmadd231ps(nx_acc(1, uu, cv), nx_dy(), nx_xm());
        if (c_.bwd_full) this->vaddps(nx_acc(2, uu, cv), nx_acc(2, uu, cv), nx_xm());
    }
};

} // namespace

std::unique_ptr<jit_generator_t> make_bnorm_bwd_norm_kernel(const bnorm_ker_conf_t &k) {
    return make_bnorm_kernel_as<jit_bnorm_bwd_norm_kernel_t>(k);
}

} // namespace blockdnn::impl
