// SPDX-License-Identifier: Apache-2.0
// The jit rows of the forward and backward tables: one pass that checks that every tensor has
// one layout, then creates the driver (init_conf once, then the kernels), which is the
// implementation.
#include "ops/bnorm/bnorm_impl.hpp"
#include "ops/bnorm/bnorm_jit.hpp"
#include "sched/parallel.hpp"

namespace blockdnn::impl {

bnorm_machine_t bnorm_this_machine() {
    bnorm_machine_t m;
    static_cast<machine_model_t &>(m) = machine_model();
    m.nthr = parallel_max_threads();
    return m;
}

namespace {

// The driver's problem in direction `dir`, from what the forward and backward problems share.
template <typename prb_t>
bnorm_jit_prb_t jit_prb(const prb_t &p, bnorm_dir_t dir) {
    bnorm_jit_prb_t j;
    j.dir = dir;
    j.src = p.desc.src;
    j.eps = p.desc.epsilon;
    j.use_scale = p.use_scale;
    j.use_shift = p.use_shift;
    j.fuse_relu = p.fuse_relu;
    return j;
}

bnorm_jit_prb_t jit_prb(const bnorm_prb_t &p) {
    return jit_prb(p, p.training ? bnorm_dir_t::fwd_training : bnorm_dir_t::fwd_inference);
}

bnorm_jit_prb_t jit_prb(const bnorm_bwd_prb_t &p) {
    bnorm_jit_prb_t j = jit_prb(p, bnorm_dir_t::bwd);
    j.global_stats = p.desc.global_stats;
    return j;
}

// The JIT row's one pass: init_conf (once) and the kernels, or unimplemented with why.
template <typename impl_base_t>
status create_jit(const bnorm_jit_prb_t &p, isa level, std::unique_ptr<impl_base_t> &out, std::string &why) {
    std::unique_ptr<bnorm_jit_t> jit;
    if (status s = bnorm_jit_t::create(jit, p, level, bnorm_this_machine(), why); s != status::success) return s;
    out = std::move(jit);
    return status::success;
}

} // namespace

template <isa level>
status create_bnorm_fwd_jit(const bnorm_prb_t &p, std::unique_ptr<bnorm_impl_t> &out, std::string &why) {
    if (p.desc.dst != p.desc.src) {
        why = cat("dst ", p.desc.dst.str(), " differs from src ", p.desc.src.str(), " (the kernels walk one layout)");
        return status::unimplemented;
    }
    return create_jit(jit_prb(p), level, out, why);
}

template <isa level>
status create_bnorm_bwd_jit(const bnorm_bwd_prb_t &p, std::unique_ptr<bnorm_bwd_impl_t> &out, std::string &why) {
    const bnorm_bwd_desc &d = p.desc;
    if (d.diff_dst != d.src || d.diff_src != d.src) {
        why = cat("diff_dst ", d.diff_dst.str(), " or diff_src ", d.diff_src.str(), " differs from src ", d.src.str(),
                " (the kernels walk one layout)");
        return status::unimplemented;
    }
    return create_jit(jit_prb(p), level, out, why);
}

template status create_bnorm_fwd_jit<isa::avx512_core>(
        const bnorm_prb_t &, std::unique_ptr<bnorm_impl_t> &, std::string &);
template status create_bnorm_fwd_jit<isa::avx2>(const bnorm_prb_t &, std::unique_ptr<bnorm_impl_t> &, std::string &);
template status create_bnorm_bwd_jit<isa::avx512_core>(
        const bnorm_bwd_prb_t &, std::unique_ptr<bnorm_bwd_impl_t> &, std::string &);
template status create_bnorm_bwd_jit<isa::avx2>(
        const bnorm_bwd_prb_t &, std::unique_ptr<bnorm_bwd_impl_t> &, std::string &);

} // namespace blockdnn::impl
