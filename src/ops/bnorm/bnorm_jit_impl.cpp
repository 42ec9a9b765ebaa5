// SPDX-License-Identifier: Apache-2.0
// The JIT batch normalization entries of the forward and backward dispatch tables: whether the
// JIT path takes a problem (init_conf's answer, and one layout for every tensor), and the
// implementation objects that hand the checked memory to the driver.
#include "ops/bnorm/bnorm_impl.hpp"
#include "ops/bnorm/bnorm_jit.hpp"
#include "sched/parallel.hpp"

namespace blockdnn::impl {

bnorm_machine_t bnorm_this_machine() {
    bnorm_machine_t m;
    const cpu_features &f = cpu();
    if (f.l1d_bytes > 0) m.l1d_bytes = f.l1d_bytes;
    if (f.l2_bytes > 0) m.l2_bytes = f.l2_bytes;
    if (f.l3_bytes > 0) m.l3_bytes = f.l3_bytes;
    m.nthr = parallel_max_threads();
    return m;
}

namespace {

bnorm_jit_prb_t jit_prb(const bnorm_prb_t &p) {
    bnorm_jit_prb_t j;
    j.dir = p.training ? bnorm_dir_t::fwd_training : bnorm_dir_t::fwd_inference;
    j.src = p.desc.src;
    j.eps = p.desc.epsilon;
    j.use_scale = p.use_scale;
    j.use_shift = p.use_shift;
    j.fuse_relu = p.fuse_relu;
    return j;
}

bnorm_jit_prb_t jit_prb(const bnorm_bwd_prb_t &p) {
    bnorm_jit_prb_t j;
    j.dir = bnorm_dir_t::bwd;
    j.src = p.desc.src;
    j.eps = p.desc.epsilon;
    j.use_scale = p.use_scale;
    j.use_shift = p.use_shift;
    j.fuse_relu = p.fuse_relu;
    j.global_stats = p.desc.global_stats;
    return j;
}

std::unique_ptr<bnorm_jit_t> make_jit(const bnorm_jit_prb_t &p, isa level, const char *op) {
    std::unique_ptr<bnorm_jit_t> jit;
    std::string why;
    const status s = bnorm_jit_t::create(jit, p, level, bnorm_this_machine(), why);
    if (s != status::success) fail(s, op, ": jit:", to_string(level), ": ", why);
    return jit;
}

class bnorm_fwd_jit_t final : public bnorm_fwd_impl_t {
public:
    explicit bnorm_fwd_jit_t(std::unique_ptr<bnorm_jit_t> jit) : jit_(std::move(jit)) {}
    void execute(const bnorm_fwd_mem_t &m) const override {
        bnorm_jit_mem_t j;
        j.src = m.src;
        j.dst = m.dst;
        j.mean = m.mean;
        j.variance = m.variance;
        j.scale = m.scale;
        j.shift = m.shift;
        jit_->execute(j);
    }

private:
    std::unique_ptr<bnorm_jit_t> jit_;
};

class bnorm_bwd_jit_t final : public bnorm_bwd_impl_t {
public:
    explicit bnorm_bwd_jit_t(std::unique_ptr<bnorm_jit_t> jit) : jit_(std::move(jit)) {}
    void execute(const bnorm_bwd_mem_t &m) const override {
        bnorm_jit_mem_t j;
        j.src = m.src;
        j.mean = const_cast<float *>(m.mean); // read only in backward
        j.variance = const_cast<float *>(m.variance);
        j.scale = m.scale;
        j.diff_dst = m.diff_dst;
        j.dst_fwd = m.dst;
        j.diff_src = m.diff_src;
        j.diff_scale = m.diff_scale;
        j.diff_shift = m.diff_shift;
        jit_->execute(j);
    }

private:
    std::unique_ptr<bnorm_jit_t> jit_;
};

} // namespace

template <isa level>
bool accept_bnorm_fwd_jit(const bnorm_prb_t &p, std::string &why) {
    if (p.desc.dst != p.desc.src) {
        why = cat("dst ", p.desc.dst.str(), " differs from src ", p.desc.src.str(), " (the kernels walk one layout)");
        return false;
    }
    bnorm_conf_t c;
    return bnorm_init_conf(c, jit_prb(p), level, bnorm_this_machine(), why) == status::success;
}

template <isa level>
std::unique_ptr<bnorm_fwd_impl_t> create_bnorm_fwd_jit(const bnorm_prb_t &p) {
    return std::make_unique<bnorm_fwd_jit_t>(make_jit(jit_prb(p), level, "bnorm_fwd"));
}

template <isa level>
bool accept_bnorm_bwd_jit(const bnorm_bwd_prb_t &p, std::string &why) {
    const bnorm_bwd_desc &d = p.desc;
    if (d.diff_dst != d.src || d.diff_src != d.src) {
        why = cat("diff_dst ", d.diff_dst.str(), " or diff_src ", d.diff_src.str(), " differs from src ", d.src.str(),
                " (the kernels walk one layout)");
        return false;
    }
    bnorm_conf_t c;
    return bnorm_init_conf(c, jit_prb(p), level, bnorm_this_machine(), why) == status::success;
}

template <isa level>
std::unique_ptr<bnorm_bwd_impl_t> create_bnorm_bwd_jit(const bnorm_bwd_prb_t &p) {
    return std::make_unique<bnorm_bwd_jit_t>(make_jit(jit_prb(p), level, "bnorm_bwd"));
}

template bool accept_bnorm_fwd_jit<isa::avx512_core>(const bnorm_prb_t &, std::string &);
template bool accept_bnorm_fwd_jit<isa::avx2>(const bnorm_prb_t &, std::string &);
template std::unique_ptr<bnorm_fwd_impl_t> create_bnorm_fwd_jit<isa::avx512_core>(const bnorm_prb_t &);
template std::unique_ptr<bnorm_fwd_impl_t> create_bnorm_fwd_jit<isa::avx2>(const bnorm_prb_t &);
template bool accept_bnorm_bwd_jit<isa::avx512_core>(const bnorm_bwd_prb_t &, std::string &);
template bool accept_bnorm_bwd_jit<isa::avx2>(const bnorm_bwd_prb_t &, std::string &);
template std::unique_ptr<bnorm_bwd_impl_t> create_bnorm_bwd_jit<isa::avx512_core>(const bnorm_bwd_prb_t &);
template std::unique_ptr<bnorm_bwd_impl_t> create_bnorm_bwd_jit<isa::avx2>(const bnorm_bwd_prb_t &);

} // namespace blockdnn::impl
