// SPDX-License-Identifier: Apache-2.0
// Forward inner product on the JIT GEMM (src/jit/gemm): with src read as a row-major (mb x K)
// matrix and the weights as (oc x K), K = ic * spatial,
//   dst = post_ops(src * wei^T + bias)
// The weights are packed into the GEMM's B panels (K x oc) once when the op is created with
// them (take_weights; the op holds them in plain oi / oiw / oihw / oidhw), else on each execute
// (one pass over them); bias and the post-op chain follow on the (mb x oc) result.
// Every layout is taken. One that reads as such a matrix is read in place: its memory order is
// the logical one once dims of size 1 are left out (nc, nchw, oihw; nhwc of 1x1 spatial size),
// or, for src, one channel block with spatial dims all 1 (a global pool's nChw16c output), its
// rows padded to whole blocks. Any other is first reordered into the plain layout: one pass over
// the tensor, where the GEMM does 2 * oc FLOPs per src element and 2 * mb per weight.
#include <algorithm>
#include <vector>

#include "core/aligned_vector.hpp"
#include "core/thread_scratch.hpp"
#include "sched/parallel.hpp"
#include "core/post_ops_ref.hpp"
#include "core/utils.hpp"
#include "jit/gemm/gemm_jit.hpp"
#include "ops/ip/ip_impl.hpp"
#include "tensor/layout.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

namespace {

// The row stride, in elements, at which d reads as a (dims[0] x rest) matrix whose rows hold
// their `rest` elements in logical order one after another; 0 if it does not read so. A dim of
// size 1 takes no place in the order (nhwc with h = w = 1 is nchw's memory), and one block, of
// the channels, is the last order when the spatial dims are all 1: its rows are then padded to
// whole blocks.
dim_t matrix_row_stride(const tensor_desc &d) {
    const layout_info_t &l = layout_info(d.tag());
    int last = -1; // the logical dim of size above 1 met last, outermost first
    for (int i = 0; i < l.ndims; ++i) {
        const int dim = l.outer_order[i];
        if (d.dim(dim) == 1) continue;
        if (dim < last) return 0;
        last = dim;
    }
    if (l.nblks == 0) return d.nelems() / d.dim(0);
    if (l.nblks != 1 || l.blk_dim[0] != 1) return 0;
    for (int i = 2; i < l.ndims; ++i)
        if (d.dim(i) != 1) return 0;
    return d.padded_dims()[1];
}

struct ip_scratch_tag;
using ip_scratch_t = thread_scratch_t<ip_scratch_tag, 2>;
enum scratch_buffer : int { src_buffer = 0, wei_buffer = 1 };

// `data`, in layout `from`, reordered into buffer `i` of `lease` in the plain layout `to`.
const float *reordered(const tensor_desc &from, const float *data, format_tag to, ip_scratch_t &lease, int i) {
    const tensor_desc plain(from.dims(), to);
    float *buf = lease.get(i, static_cast<std::size_t>(plain.nelems()));
    reorder_now(tensor(from, const_cast<float *>(data)), tensor(plain, buf));
    return buf;
}

class ip_fwd_gemm_t final : public ip_impl_t {
public:
    // src_in_place / wei_in_place: the layout reads as the GEMM's matrix, else it is reordered
    // on each execute.
    ip_fwd_gemm_t(const ip_prb_t &p, std::unique_ptr<gemm_jit_t> gemm, bool src_in_place, bool wei_in_place)
        : p_(p), gemm_(std::move(gemm)), src_in_place_(src_in_place), wei_in_place_(wei_in_place) {}

    void take_weights(const ip_args_t &weights) override { wei_.take(*gemm_, weights.wei, K()); }
    std::string info() const override {
        std::string s = src_in_place_ ? "" : cat("src reordered to ", to_string(plain_act_tag(p_.desc.ndims)), "; ");
        if (!wei_in_place_) s += cat("wei reordered to ", to_string(plain_weights_tag(p_.desc.ndims)), "; ");
        return s + gemm_->str();
    }
    format_tag preferred_wei_tag() const override { return plain_weights_tag(p_.desc.ndims); }

    void execute(const ip_args_t &a) const override {
        const inner_product_desc &c = p_.desc;
        const dim_t N = c.oc;
        aligned_vector<float> packed_now;
        ip_scratch_t lease;
        const float *src = src_in_place_ ? a.src : reordered(p_.src, a.src, plain_act_tag(c.ndims), lease, src_buffer);
        const float *wei =
                wei_in_place_ ? a.wei : reordered(p_.wei, a.wei, plain_weights_tag(c.ndims), lease, wei_buffer);
        const float *packed = wei_.get(*gemm_, wei, K(), packed_now);
        // With a sum post-op dst holds old values the chain reads: compute into a scratch.
        const bool has_sum = std::any_of(p_.po.entries().begin(), p_.po.entries().end(),
                [](const post_op &e) { return e.what == post_op::kind::sum; });
        aligned_vector<float> scratch(has_sum ? static_cast<std::size_t>(c.mb * N) : 0);
        float *out = has_sum ? scratch.data() : a.dst;
        // A pass of its own over dst follows with a bias or post-ops: C stays in the cache for it.
        const bool post_process = a.bia || !p_.po.empty();
        gemm_->execute(src, packed, out, 0, nullptr, post_process);
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
    bool src_in_place_, wei_in_place_;
    gemm_packed_weights_t wei_; // B = wei^T (K x oc)
};

} // namespace

template <isa level>
status create_ip_fwd_jit(const ip_prb_t &p, std::unique_ptr<ip_impl_t> &out, std::string &why) {
    const inner_product_desc &c = p.desc;
    const dim_t K = c.ic * c.id * c.ih * c.iw;
    const dim_t src_stride = matrix_row_stride(p.src);
    // Held weights are copied into preferred_wei_tag(), which reads in place.
    const bool wei_in_place = p.wei_held || matrix_row_stride(p.wei) == K;
    std::unique_ptr<gemm_jit_t> g;
    if (status s = gemm_jit_t::create(g, level, c.mb, c.oc, K, src_stride ? src_stride : K, c.oc, 0.f, why);
            s != status::success)
        return s;
    out = std::make_unique<ip_fwd_gemm_t>(p, std::move(g), src_stride != 0, wei_in_place);
    return status::success;
}

template status create_ip_fwd_jit<isa::avx512_core>(const ip_prb_t &, std::unique_ptr<ip_impl_t> &, std::string &);
template status create_ip_fwd_jit<isa::avx2>(const ip_prb_t &, std::unique_ptr<ip_impl_t> &, std::string &);

} // namespace blockdnn::impl
