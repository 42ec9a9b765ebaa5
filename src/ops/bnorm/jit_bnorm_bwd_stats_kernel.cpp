// SPDX-License-Identifier: Apache-2.0
// Backward, per-call sums for diff_scale, diff_shift and the training-form diff_src:
//   dy' = dy masked by dst > 0 (fuse_relu), xm = src - mean
//   out = [sum(dy'), sum(dy' xm), sum(xm)] per lane (sum(xm) only in the training form)
// prm = [mean] per lane (sp_vec: per channel). With sp_vec the sums are reduced across lanes.
// The driver adds the calls' sums in double in a fixed order.
#include "core/utils.hpp"
#include "ops/bnorm/jit_bnorm_kernel.hpp"

namespace blockdnn::impl {

namespace {

template <isa level, typename Vmm>
class jit_bnorm_bwd_stats_kernel_t : public jit_bnorm_kernel_t<level, Vmm>, protected virtual bnorm_ker_common_t {
    // Vector registers, U = ur, V = c_vecs (bnorm_ker_vregs: 3UV + V + 4):
    //   acc(which, u, cv) = which UV + u V + cv for which = 0 (dy), 1 (dy xm), 2 (xm);
    //   mean(cv) = 3UV + cv; zero = 3UV + V; temporaries dy, dst, xm at 3UV + V + 1..3.
    Vmm acc(int which, int u, int cv) const { return Vmm(which * U() * V() + u * V() + cv); }
    Vmm vmm_mean(int cv) const { return Vmm(3 * U() * V() + cv); }
    Vmm vmm_zero() const { return Vmm(3 * U() * V() + V()); }
    Vmm vmm_dy() const { return Vmm(3 * U() * V() + V() + 1); }
    Vmm vmm_fwd() const { return Vmm(3 * U() * V() + V() + 2); }
    Vmm vmm_xm() const { return Vmm(3 * U() * V() + V() + 3); }
    int n_sums() const { return c_.bwd_full ? 3 : 2; }

public:
    explicit jit_bnorm_bwd_stats_kernel_t(const bnorm_ker_conf_t &c) : bnorm_ker_common_t("jit_bnorm_bwd_stats", c) {}

private:
    std::string vregs_str() const override {
        return cat("sum dy(u,cv) = u*V+cv, sum dy xm = UV+u*V+cv, sum xm = 2UV+u*V+cv, mean(cv) = ", 3 * U() * V(),
                "+cv, zero = ", 3 * U() * V() + V(), ", dy/dst/xm = ", 3 * U() * V() + V() + 1, "..",
                3 * U() * V() + V() + 3, " (U = ", U(), ", V = ", V(), ")");
    }

    void generate() override {
        this->preamble();
        this->mov(reg_src, this->arg(offsetof(bnorm_call_args_t, src)));
        this->mov(reg_ddst, this->arg(offsetof(bnorm_call_args_t, diff_dst)));
        if (c_.relu) this->mov(reg_dfwd, this->arg(offsetof(bnorm_call_args_t, dst_fwd)));
        this->mov(reg_prm, this->arg(offsetof(bnorm_call_args_t, prm)));
        this->mov(reg_out, this->arg(offsetof(bnorm_call_args_t, out)));
        this->mov(reg_n, this->arg(offsetof(bnorm_call_args_t, n_pts)));
        this->set_tail_mask();
        std::vector<Xbyak::Reg64> ptrs = {reg_src, reg_ddst};
        if (c_.relu) ptrs.push_back(reg_dfwd);
        this->block_loop(ptrs, {reg_prm, reg_out}, [&] { sums(ptrs); });
        this->postamble();
    }

    // One block's sums over reg_n points, its mean from reg_prm, results to reg_out.
    void sums(const std::vector<Xbyak::Reg64> &ptrs) {
        for (int cv = 0; cv < V(); ++cv) this->load_prm(vmm_mean(cv), 0, cv);
        if (c_.relu) this->vxorps(vmm_zero(), vmm_zero(), vmm_zero());
        for (int w = 0; w < n_sums(); ++w)
            for (int u = 0; u < U(); ++u)
                for (int cv = 0; cv < V(); ++cv) this->vxorps(acc(w, u, cv), acc(w, u, cv), acc(w, u, cv));

        auto step = [&](int u, bool sp_tail) {
            for (int uu = 0; uu < u; ++uu)
                for (int cv = 0; cv < V(); ++cv) {
                    const bool tail = this->is_tail(cv, sp_tail);
                    this->load(vmm_dy(), this->pt_addr(reg_ddst, uu, cv), tail);
                    if (c_.relu)
                        this->relu_mask(vmm_dy(), vmm_fwd(), vmm_zero(), this->pt_addr(reg_dfwd, uu, cv), tail);
                    this->load(vmm_xm(), this->pt_addr(reg_src, uu, cv), tail);
                    this->vsubps(vmm_xm(), vmm_xm(), vmm_mean(cv));
                    if (sp_tail) this->zero_outside_tail(vmm_xm()); // masked lanes: 0, not -mean
                    this->vaddps(acc(0, uu, cv), acc(0, uu, cv), vmm_dy());
                    this->vfmadd231ps(acc(1, uu, cv), vmm_dy(), vmm_xm());
                    if (c_.bwd_full) this->vaddps(acc(2, uu, cv), acc(2, uu, cv), vmm_xm());
                }
        };
        this->point_loop(ptrs, step);

        for (int w = 0; w < n_sums(); ++w)
            for (int cv = 0; cv < V(); ++cv) {
                for (int u = 1; u < U(); ++u) this->vaddps(acc(w, 0, cv), acc(w, 0, cv), acc(w, u, cv));
                if (c_.sp_vec) this->hsum(acc(w, 0, cv), vmm_dy());
                this->store_out(acc(w, 0, cv), w, cv);
            }
    }
};

} // namespace

std::unique_ptr<jit_generator_t> make_bnorm_bwd_stats_kernel(const bnorm_ker_conf_t &k) {
    return make_bnorm_kernel_as<jit_bnorm_bwd_stats_kernel_t>(k);
}

} // namespace blockdnn::impl
