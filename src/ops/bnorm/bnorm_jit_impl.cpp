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

std::unique_ptr<bnorm_jit_t> make_jit(const bnorm_jit_prb_t &p, isa level, const char *op) {
    std::unique_ptr<bnorm_jit_t> jit;
    std::string why;
    const status s = bnorm_jit_t::create(jit, p, level, bnorm_this_machine(), why);
    if (s != status::success) fail(s, op, ": jit:", to_string(level), ": ", why);
    return jit;
}

// Whether init_conf takes the problem on `level` on this machine; if not, why in `why`.
bool conf_ok(const bnorm_jit_prb_t &p, isa level, std::string &why) {
    bnorm_conf_t c;
    return bnorm_init_conf(c, p, level, bnorm_this_machine(), why) == status::success;
}

// The driver's memory of one execution.
bnorm_jit_mem_t jit_mem(const bnorm_fwd_mem_t &m) {
    return {.src = m.src, .dst = m.dst, .mean = m.mean, .variance = m.variance, .scale = m.scale, .shift = m.shift};
}

bnorm_jit_mem_t jit_mem(const bnorm_bwd_mem_t &m) {
    return {.src = m.src,
            .mean = const_cast<float *>(m.mean), // read only in backward
            .variance = const_cast<float *>(m.variance),
            .scale = m.scale,
            .diff_dst = m.diff_dst,
            .dst_fwd = m.dst,
            .diff_src = m.diff_src,
            .diff_scale = m.diff_scale,
            .diff_shift = m.diff_shift};
}

// A forward (impl_t = bnorm_fwd_impl_t) or backward implementation: hands the checked memory
// to the driver.
template <typename impl_t, typename mem_t>
class bnorm_jit_impl_t final : public impl_t {
public:
    explicit bnorm_jit_impl_t(std::unique_ptr<bnorm_jit_t> jit) : jit_(std::move(jit)) {}
    void execute(const mem_t &m) const override { jit_->execute(jit_mem(m)); }

private:
    std::unique_ptr<bnorm_jit_t> jit_;
};

using bnorm_fwd_jit_t = bnorm_jit_impl_t<bnorm_fwd_impl_t, bnorm_fwd_mem_t>;
using bnorm_bwd_jit_t = bnorm_jit_impl_t<bnorm_bwd_impl_t, bnorm_bwd_mem_t>;

} // namespace

template <isa level>
bool accept_bnorm_fwd_jit(const bnorm_prb_t &p, std::string &why) {
    if (p.desc.dst != p.desc.src) {
        why = cat("dst ", p.desc.dst.str(), " differs from src ", p.desc.src.str(), " (the kernels walk one layout)");
        return false;
    }
    return conf_ok(jit_prb(p), level, why);
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
    return conf_ok(jit_prb(p), level, why);
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
