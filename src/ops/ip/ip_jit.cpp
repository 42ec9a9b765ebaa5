// SPDX-License-Identifier: Apache-2.0
// Forward inner product on the JIT GEMM (src/jit/gemm): with src read as a row-major (mb x K)
// matrix and the weights as (oc x K), K = ic * spatial,
//   dst = post_ops(src * wei^T + bias)
// The weights are packed into the GEMM's B panels (K x oc) once when the op is created with
// them (take_weights), else on each execute (one pass over them); bias and the post-op chain
// follow on the (mb x oc) result. Takes the layouts in which logical order is memory order: plain
// nc / ncw / nchw / ncdhw and oi / oiw / oihw / oidhw, and channel-blocked src whose spatial
// dims are all 1 and whose channels fill whole blocks (a global pool's nChw16c output).
#include <algorithm>
#include <vector>

#include "core/aligned_vector.hpp"
#include "sched/parallel.hpp"
#include "core/post_ops_ref.hpp"
#include "core/utils.hpp"
#include "jit/gemm/gemm_jit.hpp"
#include "ops/ip/ip_impl.hpp"
#include "tensor/layout.hpp"

namespace blockdnn::impl {

namespace {

// True if element idx of d sits at the row-major offset of idx, so d reads as a
// (dims[0] x rest) matrix with rows of `rest` floats.
bool logical_row_major(const tensor_desc &d) {
    const layout_info_t &l = layout_info(d.tag());
    if (d.padded_dims() != d.dims()) return false;
    for (int i = 0; i < l.ndims; ++i)
        if (l.outer_order[i] != i) return false;
    if (l.nblks == 0) return true;
    // One channel block and nothing after the channels: blocks hold consecutive channels.
    if (l.nblks != 1 || l.blk_dim[0] != 1) return false;
    for (int i = 2; i < l.ndims; ++i)
        if (d.dim(i) != 1) return false;
    return true;
}

class ip_fwd_gemm_t final : public ip_impl_t {
public:
    ip_fwd_gemm_t(const ip_prb_t &p, std::unique_ptr<gemm_jit_t> gemm) : p_(p), gemm_(std::move(gemm)) {}

    void take_weights(const ip_args_t &weights) override { wei_.take(*gemm_, weights.wei, K()); }
    std::string info() const override { return gemm_->str(); }

    void execute(const ip_args_t &a) const override {
        const inner_product_desc &c = p_.desc;
        const dim_t N = c.oc;
        aligned_vector<float> packed_now;
        const float *packed = wei_.get(*gemm_, a.wei, K(), packed_now);
        // With a sum post-op dst holds old values the chain reads: compute into a scratch.
        const bool has_sum = std::any_of(p_.po.entries().begin(), p_.po.entries().end(),
                [](const post_op &e) { return e.what == post_op::kind::sum; });
        aligned_vector<float> scratch(has_sum ? static_cast<std::size_t>(c.mb * N) : 0);
        float *out = has_sum ? scratch.data() : a.dst;
        // A pass of its own over dst follows with a bias or post-ops: C stays in the cache for it.
        const bool post_process = a.bia || !p_.po.empty();
        gemm_->execute(a.src, packed, out, 0, nullptr, post_process);
        if (!post_process) return;
        parallel_for(c.mb, 1, [&](dim_t n0, dim_t n1) {
            for (dim_t n = n0; n < n1; ++n)
                for (dim_t o = 0; o < N; ++o) {
                    float r = out[n * N + o];
                    if (a.bia) r += a.bia[o];
                    a.dst[n * N + o] = apply_post_ops_ref(p_.po, r, a.dst[n * N + o]);
                }
        });
    }

private:
    // The reduction length: ic times the spatial size, the weights' row length.
    dim_t K() const {
        const inner_product_desc &c = p_.desc;
        return c.ic * c.id * c.ih * c.iw;
    }

    ip_prb_t p_;
    std::unique_ptr<gemm_jit_t> gemm_;
    gemm_packed_weights_t wei_; // B = wei^T (K x oc)
};

} // namespace

template <isa level>
status create_ip_fwd_jit(const ip_prb_t &p, std::unique_ptr<ip_impl_t> &out, std::string &why) {
    if (!logical_row_major(p.src)) {
        why = cat("src layout ", to_string(p.src.tag()), " is not row-major over (mb, ic, spatial)");
        return status::unimplemented;
    }
    if (!logical_row_major(p.wei)) {
        why = cat("wei layout ", to_string(p.wei.tag()), " is not row-major over (oc, ic, spatial)");
        return status::unimplemented;
    }
    const inner_product_desc &c = p.desc;
    const dim_t K = c.ic * c.id * c.ih * c.iw;
    std::unique_ptr<gemm_jit_t> g;
    if (status s = gemm_jit_t::create(g, level, c.mb, c.oc, K, K, c.oc, 0.f, why); s != status::success) return s;
    out = std::make_unique<ip_fwd_gemm_t>(p, std::move(g));
    return status::success;
}

template status create_ip_fwd_jit<isa::avx512_core>(const ip_prb_t &, std::unique_ptr<ip_impl_t> &, std::string &);
template status create_ip_fwd_jit<isa::avx2>(const ip_prb_t &, std::unique_ptr<ip_impl_t> &, std::string &);

} // namespace blockdnn::impl
