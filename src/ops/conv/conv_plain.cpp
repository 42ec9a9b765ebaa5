// SPDX-License-Identifier: Apache-2.0
// Forward convolution on plain activations (nc[d]hw src or dst: a PyTorch tensor in its
// default memory format, an ONNX tensor) that no JIT kernel reads as they lie. src is
// reordered into the layout a JIT kernel picks for it, the kernel runs, and dst is reordered
// back, as a oneDNN user does around a blocked primitive (PyTorch's to_mkldnn() and
// to_dense()), a pass of images at a time so that the reordered activations are still in
// cache for the kernel and for the reorder back. The reorders read and write each activation
// once more, which costs most beside the fewest FMAs (a 1x1 on a large image); the reference
// they replace was one to two orders of magnitude slower. src and dst given in two other
// layouts (channels-last and blocked, blocks of 8 and 16) take the same path with one of them
// reordered: the kernel reads src as given and writes dst in the layout it pairs with that,
// or reads src reordered into the layout that pairs with dst's.
#include <algorithm>
#include <utility>
#include <vector>

#include "core/machine_model.hpp"
#include "core/thread_scratch.hpp"
#include "core/utils.hpp"
#include "core/verbose.hpp"
#include "ops/conv/conv_impl.hpp"
#include "ops/conv/conv_jit.hpp"
#include "sched/parallel.hpp"
#include "tensor/layout.hpp"
#include "tensor/op_check.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

namespace {

// The kernel's src and dst, in buffers kept by the calling thread between calls, so that their
// pages are not faulted in again on every call (docs/tuning.md, "Conv: plain activations
// reordered around the JIT kernels").
struct plain_scratch_tag;
using plain_scratch_t = thread_scratch_t<plain_scratch_tag, 2>;
enum scratch_buffer : int { src_buffer = 0, dst_buffer = 1 };

// True if a and b address the same elements at the same offsets (nchw and nhwc do when every
// spatial dim is 1), so either reads the other's memory as it lies. A dim of size 1 has no
// stride that matters. Layouts with blocks match only themselves here.
bool same_memory(const tensor_desc &a, const tensor_desc &b) {
    if (a.dims() != b.dims() || a.padded_dims() != b.padded_dims() || a.dt() != b.dt()) return false;
    if (layout_info(a.tag()).nblks || layout_info(b.tag()).nblks) return a.tag() == b.tag();
    for (int i = 0; i < a.ndims(); ++i)
        if (a.padded_dims()[i] > 1 && a.stride(i) != b.stride(i)) return false;
    return true;
}

format_tag nxc_act_tag(int ndims) {
    return ndims == 3 ? format_tag::nwc : ndims == 4 ? format_tag::nhwc : format_tag::ndhwc;
}

std::size_t floats_of(const tensor_desc &d) { return d.size_bytes() / sizeof(float); }

// Images per pass: the largest divisor of mb whose activations, in blocked layouts, fit the
// last-level cache share of nthr threads, or, where more, up to nthr images: one image per
// thread keeps the splits the kernels make over images (a strided 1x1 reduced to unit stride
// copies an image per thread). A pass reorders its images' src, runs the kernel on them and
// reorders their dst back, so each blocked activation is read back from cache rather than
// from memory, and the buffers hold a pass, not the batch. One kernel runs every pass, so the
// pass divides mb; where no divisor gives each thread an image (a prime mb on more threads)
// the batch is one pass, as passes of one image split each image over the threads, slower.
// Channels are counted in blocks of 16, the wider of the two ISAs'.
dim_t images_per_pass(const conv_desc &d, int nthr) {
    constexpr dim_t max_block = 16;
    const dim_t image_floats =
            rnd_up(d.ic, max_block) * d.id * d.ih * d.iw + rnd_up(d.oc, max_block) * d.od * d.oh * d.ow;
    const dim_t fit = std::max<dim_t>(nthr, llc_bytes_for(machine_model(), nthr) / (image_floats * 4));
    const dim_t pass = largest_divisor_at_most(d.mb, fit);
    return pass < std::min<dim_t>(nthr, d.mb) ? d.mb : pass;
}

class conv_fwd_plain_t final : public conv_impl_t {
public:
    // `jit` runs a pass of images (its problem's mb) of p's mb.
    conv_fwd_plain_t(const conv_prb_t &p, std::unique_ptr<conv_fwd_jit_t> jit)
        : p_(p), jit_(std::move(jit)), pass_mb_(jit_->prb().desc.mb), src_pass_(with_mb(p_.src, pass_mb_)),
          dst_pass_(with_mb(p_.dst, pass_mb_)), src_reorder_(!same_memory(src_pass_, jit_->prb().src)),
          dst_reorder_(!same_memory(dst_pass_, jit_->prb().dst)), has_sum_(jit_->conf().has_sum()) {}

    const conv_prb_t &prb() const override { return p_; }
    std::string info() const override {
        const conv_prb_t &k = jit_->prb();
        if (!src_reorder_ && !dst_reorder_)
            return cat("read in place as ", to_string(k.src.tag()), " by ", jit_->info());
        return cat(src_reorder_ ? "src " : "", src_reorder_ && dst_reorder_ ? "and " : "", dst_reorder_ ? "dst " : "",
                "reordered to ", to_string((dst_reorder_ ? k.dst : k.src).tag()), " ", pass_mb_,
                pass_mb_ == 1 ? " image" : " images", " at a time around ", jit_->info());
    }
    format_tag preferred_wei_tag() const override { return jit_->preferred_wei_tag(); }
    void take_weights(const conv_args_t &weights) override {
        jit_->take_weights(weights);
        p_.wei = jit_->prb().wei;
    }

    void execute(const conv_args_t &a) const override {
        const conv_prb_t &k = jit_->prb();
        // The weights are reordered once for all passes.
        tensor wei;
        conv_args_t args = a;
        args.wei = jit_->kernel_weights(a.wei, wei);
        plain_scratch_t lease;
        float *src_buf = src_reorder_ ? lease.get(src_buffer, floats_of(k.src)) : nullptr;
        float *dst_buf = dst_reorder_ ? lease.get(dst_buffer, floats_of(k.dst)) : nullptr;
        // The user's layouts put the image outermost (stride(0) floats apart).
        for (dim_t n = 0; n < p_.desc.mb; n += pass_mb_) {
            const float *src = a.src + n * p_.src.stride(0);
            float *dst = a.dst + n * p_.dst.stride(0);
            args.src = src;
            args.dst = dst;
            if (src_reorder_) {
                reorder_now(tensor(src_pass_, const_cast<float *>(src)), tensor(k.src, src_buf));
                args.src = src_buf;
            }
            if (dst_reorder_) {
                args.dst = dst_buf;
                // The sum post-op reads dst's old values.
                if (has_sum_) reorder_now(tensor(dst_pass_, dst), tensor(k.dst, dst_buf));
            }
            jit_->execute_on_kernel_weights(args);
            if (dst_reorder_) reorder_now(tensor(k.dst, dst_buf), tensor(dst_pass_, dst));
        }
    }

private:
    conv_prb_t p_;
    std::unique_ptr<conv_fwd_jit_t> jit_;
    dim_t pass_mb_;                   // images per pass
    tensor_desc src_pass_, dst_pass_; // the user's layouts of one pass
    bool src_reorder_, dst_reorder_, has_sum_;
};

// The wrapper of the first JIT kernel (depthwise, first-layer, direct) that takes `inner`, the
// problem with the plain activations left as any or given in place; `p` is the user's, the
// plain layouts picked. unimplemented with each kernel's reason added to `reasons`.
template <isa level>
status create_inner(const conv_prb_t &inner, conv_prb_t p, std::unique_ptr<conv_impl_t> &out, std::string &reasons) {
    for (conv_kernel_kind kind : {conv_kernel_kind::depthwise, conv_kernel_kind::first, conv_kernel_kind::direct}) {
        // As create_conv_fwd_jit: the shortcut skips the kernels' own words for BLOCKDNN_VERBOSE.
        if (verbose_level() < 2 && conv_fwd_jit_refuses(inner, kind)) continue;
        std::unique_ptr<conv_fwd_jit_t> jit;
        std::string why;
        const status s = conv_fwd_jit_t::create(jit, inner, level, kind, why);
        if (s == status::success) {
            // Weights left as any take the kernel's layout.
            p.wei = jit->prb().wei;
            p.wei_any = false;
            out = std::make_unique<conv_fwd_plain_t>(p, std::move(jit));
            return status::success;
        }
        if (s != status::unimplemented) {
            reasons = why; // a failure, not a refusal: its reason alone
            return s;
        }
        reasons += cat(reasons.empty() ? "" : "; ", to_string(kind), ": ", why);
    }
    return status::unimplemented;
}

} // namespace

template <isa level>
status create_conv_fwd_plain(const conv_prb_t &prb, std::unique_ptr<conv_impl_t> &out, std::string &why) {
    const int nd = prb.desc.ndims;
    const format_tag plain = conv_plain_act_tag(nd);
    const bool src_plain = !prb.src_any && prb.src.tag() == plain;
    const bool dst_plain = !prb.dst_any && prb.dst.tag() == plain;
    // Two other layouts that differ (nhwc and nChw16c, nChw8c and nChw16c), which no kernel
    // reads and writes as a pair.
    const bool differ = !src_plain && !dst_plain && !prb.src_any && !prb.dst_any && prb.src.tag() != prb.dst.tag();
    if (!src_plain && !dst_plain && !differ) {
        why = cat("neither src nor dst is given as ", to_string(plain), ", nor the two in layouts that differ (src ",
                prb.src_any ? "any" : to_string(prb.src.tag()), ", dst ",
                prb.dst_any ? "any" : to_string(prb.dst.tag()), ")");
        return status::unimplemented;
    }
    // One left as any takes the other's plain layout, as conv_fwd documents for any.
    conv_prb_t p = prb;
    if (prb.src_any) p.src = tensor_desc(prb.desc.src_dims(), plain);
    if (prb.dst_any) p.dst = tensor_desc(prb.desc.dst_dims(), plain);
    p.src_any = p.dst_any = false;
    // The sides the kernel gets as any, so that it picks its own layout there: the plain ones.
    // Of two layouts that differ, one side is reordered and the other read or written as
    // given: first the side that moves fewer bytes (dst twice with a sum, which reads it before
    // the kernel), then the other way round, for where this ISA's kernels refuse the side kept
    // as given (an nChw8c src on AVX-512).
    std::vector<std::pair<bool, bool>> sides {{p.src.tag() == plain, p.dst.tag() == plain}};
    if (differ) {
        const std::size_t src_bytes = p.src.size_bytes(), dst_bytes = p.dst.size_bytes() * (prb.po.has_sum() ? 2 : 1);
        sides = {{false, true}, {true, false}};
        if (src_bytes < dst_bytes) std::swap(sides[0], sides[1]);
    }
    const conv_desc &d = prb.desc;
    std::string reasons;
    for (const auto &[src_any, dst_any] : sides) {
        conv_prb_t inner = prb;
        inner.src_any = src_any;
        inner.dst_any = dst_any;
        inner.src = src_any ? tensor_desc() : p.src;
        inner.dst = dst_any ? tensor_desc() : p.dst;
        // One pixel per image (every spatial dim 1, a classifier head or a squeeze-and-excitation
        // block): the plain tensors are channels-last ones, which the kernels read as they lie.
        // Tried first; a kernel that takes no channels-last pair (depthwise with g not a multiple
        // of its vector) then gets its own layouts as for any other plain problem.
        if (!differ && src_any && dst_any && d.id * d.ih * d.iw == 1 && d.od * d.oh * d.ow == 1) {
            conv_prb_t in_place = inner;
            in_place.src = tensor_desc(d.src_dims(), nxc_act_tag(nd));
            in_place.dst = tensor_desc(d.dst_dims(), nxc_act_tag(nd));
            in_place.src_any = in_place.dst_any = false;
            const status s = create_inner<level>(in_place, p, out, reasons);
            if (s == status::success) return s;
            if (s != status::unimplemented) {
                why = reasons;
                return s;
            }
        }
        // The kernel runs a pass of images at a time.
        inner.desc.mb = images_per_pass(d, parallel_max_threads());
        if (!src_any) inner.src = with_mb(inner.src, inner.desc.mb);
        if (!dst_any) inner.dst = with_mb(inner.dst, inner.desc.mb);
        const status s = create_inner<level>(inner, p, out, reasons);
        if (s == status::success) return s;
        if (s != status::unimplemented) {
            why = reasons;
            return s;
        }
    }
    why = "no JIT kernel takes the problem with activation layouts of its own (" + reasons + ")";
    return status::unimplemented;
}

template status create_conv_fwd_plain<isa::avx512_core>(
        const conv_prb_t &, std::unique_ptr<conv_impl_t> &, std::string &);
template status create_conv_fwd_plain<isa::avx2>(const conv_prb_t &, std::unique_ptr<conv_impl_t> &, std::string &);

} // namespace blockdnn::impl
