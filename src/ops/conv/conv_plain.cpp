// SPDX-License-Identifier: Apache-2.0
// Forward convolution on plain activations (nc[d]hw src or dst: a PyTorch tensor in its
// default memory format, an ONNX tensor) that no JIT kernel reads as they lie. src is
// reordered into the layout a JIT kernel picks for it, the kernel runs, and dst is reordered
// back, as a oneDNN user does around a blocked primitive (PyTorch's to_mkldnn() and
// to_dense()). The reorders move each activation once at memory speed while the kernel does
// the convolution's FMAs, so this runs near the kernel's speed where the reference is one to
// two orders of magnitude slower.
#include <stdexcept>

#include "core/aligned_vector.hpp"
#include "core/utils.hpp"
#include "ops/conv/conv_impl.hpp"
#include "ops/conv/conv_jit.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

namespace {

// A calling thread's buffers for the kernel's src and dst, kept between calls so that their
// pages are not faulted in again on every call (as a buffer made per execute() would be).
// Grown when a larger problem comes, never shrunk: they hold the thread's largest activations
// in the kernel's layouts. Leased by one execute() at a time.
class act_buffers_lease_t {
public:
    act_buffers_lease_t() {
        if (in_use()) throw std::logic_error("conv_fwd: a thread's plain-layout buffers are leased twice");
        in_use() = true;
    }
    ~act_buffers_lease_t() { in_use() = false; }
    act_buffers_lease_t(const act_buffers_lease_t &) = delete;
    act_buffers_lease_t &operator=(const act_buffers_lease_t &) = delete;

    // Buffer `which` (0: src, 1: dst) of at least `bytes` bytes; earlier contents lost.
    float *get(int which, std::size_t bytes) {
        aligned_vector<float> &b = buffers()[which];
        const std::size_t floats = (bytes + sizeof(float) - 1) / sizeof(float);
        if (b.size() < floats) {
            b = {};
            b.resize(floats);
        }
        return b.data();
    }

private:
    static aligned_vector<float> *buffers() {
        static thread_local aligned_vector<float> b[2];
        return b;
    }
    static bool &in_use() {
        static thread_local bool leased = false;
        return leased;
    }
};

bool is_plain_act(const tensor_desc &d, int ndims) { return d.tag() == conv_plain_act_tag(ndims); }

class conv_fwd_plain_t final : public conv_impl_t {
public:
    conv_fwd_plain_t(const conv_prb_t &p, std::unique_ptr<conv_fwd_jit_t> jit)
        : p_(p), jit_(std::move(jit)), src_reorder_(p_.src.tag() != jit_->prb().src.tag()),
          dst_reorder_(p_.dst.tag() != jit_->prb().dst.tag()), has_sum_(jit_->conf().has_sum()) {}

    const conv_prb_t &prb() const override { return p_; }
    std::string info() const override {
        return cat(src_reorder_ ? "src " : "", src_reorder_ && dst_reorder_ ? "and " : "", dst_reorder_ ? "dst " : "",
                "reordered to ", to_string((dst_reorder_ ? jit_->prb().dst : jit_->prb().src).tag()), " around ",
                jit_->info());
    }
    format_tag preferred_wei_tag() const override { return jit_->preferred_wei_tag(); }
    void take_weights(const conv_args_t &weights) override { jit_->take_weights(weights); }

    void execute(const conv_args_t &a) const override {
        const conv_prb_t &k = jit_->prb();
        act_buffers_lease_t lease;
        conv_args_t args = a;
        if (src_reorder_) {
            float *src = lease.get(0, k.src.size_bytes());
            reorder_now(tensor(p_.src, const_cast<float *>(a.src)), tensor(k.src, src));
            args.src = src;
        }
        if (dst_reorder_) {
            args.dst = lease.get(1, k.dst.size_bytes());
            // The sum post-op reads dst's old values.
            if (has_sum_) reorder_now(tensor(p_.dst, a.dst), tensor(k.dst, args.dst));
        }
        jit_->execute(args);
        if (dst_reorder_) reorder_now(tensor(k.dst, args.dst), tensor(p_.dst, a.dst));
    }

private:
    conv_prb_t p_;
    std::unique_ptr<conv_fwd_jit_t> jit_;
    bool src_reorder_, dst_reorder_, has_sum_;
};

} // namespace

template <isa level>
status create_conv_fwd_plain(const conv_prb_t &prb, std::unique_ptr<conv_impl_t> &out, std::string &why) {
    const int nd = prb.desc.ndims;
    const bool src_plain = !prb.src_any && is_plain_act(prb.src, nd);
    const bool dst_plain = !prb.dst_any && is_plain_act(prb.dst, nd);
    if (!src_plain && !dst_plain) {
        why = cat("neither src nor dst is given as ", to_string(conv_plain_act_tag(nd)));
        return status::unimplemented;
    }
    // One left as any takes the other's plain layout, as conv_fwd documents for any. The
    // kernel gets the plain ones as any, so that it picks its own.
    const format_tag plain = conv_plain_act_tag(nd);
    conv_prb_t p = prb, inner = prb;
    p.src = tensor_desc(prb.desc.src_dims(), plain);
    p.dst = tensor_desc(prb.desc.dst_dims(), plain);
    p.src_any = p.dst_any = false;
    if (!src_plain && !prb.src_any) p.src = prb.src;
    if (!dst_plain && !prb.dst_any) p.dst = prb.dst;
    inner.src_any = p.src.tag() == plain;
    inner.dst_any = p.dst.tag() == plain;
    inner.src = inner.src_any ? tensor_desc() : p.src;
    inner.dst = inner.dst_any ? tensor_desc() : p.dst;
    std::string reasons;
    for (conv_kernel_kind kind : {conv_kernel_kind::depthwise, conv_kernel_kind::first, conv_kernel_kind::direct}) {
        if (conv_fwd_jit_refuses(inner, kind)) continue;
        std::unique_ptr<conv_fwd_jit_t> jit;
        std::string kind_why;
        const status s = conv_fwd_jit_t::create(jit, inner, level, kind, kind_why);
        if (s == status::success) {
            // Weights left as any take the kernel's layout.
            p.wei = jit->prb().wei;
            p.wei_any = false;
            out = std::make_unique<conv_fwd_plain_t>(p, std::move(jit));
            return status::success;
        }
        if (s != status::unimplemented) {
            why = kind_why;
            return s;
        }
        reasons += cat(reasons.empty() ? "" : "; ", to_string(kind), ": ", kind_why);
    }
    why = "no JIT kernel takes the problem with activation layouts of its own (" + reasons + ")";
    return status::unimplemented;
}

template status create_conv_fwd_plain<isa::avx512_core>(
        const conv_prb_t &, std::unique_ptr<conv_impl_t> &, std::string &);
template status create_conv_fwd_plain<isa::avx2>(const conv_prb_t &, std::unique_ptr<conv_impl_t> &, std::string &);

} // namespace blockdnn::impl
