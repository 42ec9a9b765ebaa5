// SPDX-License-Identifier: Apache-2.0
// The JIT softmax driver: which problems the kernel takes, the kernel from the cache at
// creation, and the split of the tensor into calls over threads at execution.
//
// A tensor_desc is dense, so every dim laid out inside the axis (smaller strides, the inner
// blocks included) spans exactly stride(axis) floats, and every dim outside it steps by whole
// multiples of len * stride(axis). When the axis itself is not blocked, memory is therefore
// [outer][len][inner] with inner = stride(axis), each (outer, inner) index one line; the lines
// of padded channels are computed like the others and their dst zeroed afterwards. The kernel
// runs in such a layout (the work layout): dst's, src's, or the plain one when the axis is
// blocked in both (softmax over the channels of nChw16c); src and dst are reordered into it and
// out of it where they are not in it.
#include <algorithm>

#include "core/machine_model.hpp"
#include "core/thread_scratch.hpp"
#include "core/utils.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_isa_switch.hpp"
#include "jit/jit_kernel_cache.hpp"
#include "ops/softmax/jit_softmax_fwd_kernel.hpp"
#include "ops/softmax/softmax_conf.hpp"
#include "ops/softmax/softmax_impl.hpp"
#include "sched/parallel.hpp"
#include "tensor/layout.hpp"
#include "tensor/padding.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

namespace {

// Floats a lines-mode call covers (whole lines, so one line where a line is longer): enough to
// amortize the call, few enough to balance the threads.
constexpr dim_t lines_chunk_floats = 16384;

struct softmax_geom_t {
    dim_t outer, len, inner;
};

// The layout the kernel runs in: dst's or src's where the axis is not blocked in it (dst's
// first, so that the kernel writes dst itself), else the plain one of their rank; undef if
// there is none (src and dst of two families, which no reorder joins, or a blocked axis in
// another family than activations).
format_tag work_tag(const softmax_prb_t &p) {
    const int ax = p.desc.axis, nd = p.src.ndims();
    if (p.src.tag() != p.dst.tag() && !same_family(p.src.tag(), p.dst.tag())) return format_tag::undef;
    if (p.dst.block_of(ax) == 1) return p.dst.tag();
    if (p.src.block_of(ax) == 1) return p.src.tag();
    const bool act = layout_info(p.src.tag()).family == layout_family::activation
            && layout_info(p.dst.tag()).family == layout_family::activation;
    return act && nd >= 2 && nd <= 5 ? plain_act_tag(nd) : format_tag::undef;
}

softmax_geom_t geometry(const tensor_desc &work, int axis) {
    const dim_t len = work.dim(axis), inner = work.stride(axis);
    return {work.nelems_padded() / (len * inner), len, inner};
}

status get_kernel(softmax_mode mode, isa level, kernel_ptr &out, std::string &why) {
    softmax_conf_t c;
    if (status st = init_conf_softmax_fwd(c, level, mode, why); st != status::success) return st;
    const auto &[isa_level, conf_mode, simd_w, ur, n_vtemps, ur_resident, n_vregs_used] = c;
    std::string key = "softmax_fwd|";
    append_raw(key, isa_level, conf_mode, simd_w, ur, n_vtemps, ur_resident, n_vregs_used);
    return kernel_cache().get(
            key, [&] { return make_for_isa<jit_softmax_fwd_kernel_t, jit_generator_t>(level, c); }, out, why);
}

struct softmax_scratch_tag;
using softmax_scratch_t = thread_scratch_t<softmax_scratch_tag, 1>;

class softmax_jit_t : public softmax_impl_t {
public:
    softmax_jit_t(const softmax_prb_t &p, const tensor_desc &work, int simd_w, kernel_ptr kernel)
        : p_(p), work_(work), g_(geometry(work, p.desc.axis)), kernel_(std::move(kernel)),
          fn_(kernel_->entry<softmax_kernel_fn_t>()) {
        if (g_.inner == 1) {
            lines_per_call_ = std::max<dim_t>(1, lines_chunk_floats / g_.len);
        } else {
            // A call's src and dst lanes stay in half the L2 over its three passes, and the calls
            // number a few per thread where the tensor allows.
            const dim_t fit = machine_model().l2_bytes / (4 * dim_t(sizeof(float)) * g_.len);
            dim_t w = std::max<dim_t>(simd_w, fit / simd_w * simd_w);
            const dim_t want_groups = div_up(4 * dim_t(parallel_max_threads()), g_.outer);
            if (want_groups > 1)
                w = std::min(w, std::max<dim_t>(simd_w, rnd_up(div_up(g_.inner, want_groups), simd_w)));
            lanes_per_call_ = std::min(w, g_.inner);
        }
    }

    // src and dst in the work layout, reordered into it and out of it where they are not: src
    // into dst itself when dst is in it, else into a scratch buffer the kernel then works on in
    // place.
    void execute(const softmax_args_t &a) const override {
        const bool src_work = p_.src == work_, dst_work = p_.dst == work_;
        softmax_scratch_t lease;
        // A buffer where neither src nor dst holds the kernel's output: dst not in the work layout.
        float *buf = dst_work ? nullptr : lease.get(0, static_cast<std::size_t>(work_.nelems_padded()));
        const float *src = a.src;
        if (!src_work) {
            float *to = dst_work ? a.dst : buf;
            reorder_now(tensor(p_.src, const_cast<float *>(a.src)), tensor(work_, to));
            src = to;
        }
        float *dst = dst_work ? a.dst : src_work ? buf : const_cast<float *>(src);
        run(src, dst);
        if (dst_work) zero_padding(p_.dst, a.dst);
        else reorder_now(tensor(work_, dst), tensor(p_.dst, a.dst));
    }

    std::string info() const override {
        std::string s;
        if (p_.src != work_) s += cat("src reordered to ", to_string(work_.tag()), "; ");
        if (p_.dst != work_) s += cat("dst reordered from ", to_string(work_.tag()), "; ");
        return s
                + cat("outer=", g_.outer, " len=", g_.len, " inner=", g_.inner,
                        g_.inner == 1 ? cat(" lines_per_call=", lines_per_call_)
                                      : cat(" lanes_per_call=", lanes_per_call_));
    }

private:
    // The kernel over the tensor in the work layout, src to dst (the same memory in place).
    void run(const float *src, float *dst) const {
        const dim_t line_floats = g_.len * g_.inner;
        if (g_.inner == 1) {
            parallel_for(div_up(g_.outer, lines_per_call_), 1, [&](dim_t b, dim_t e) {
                const dim_t first = b * lines_per_call_, last = std::min(g_.outer, e * lines_per_call_);
                const softmax_call_args_t args {src + first * g_.len, dst + first * g_.len, g_.len, 1, last - first};
                fn_(&args);
            });
        } else {
            const dim_t groups = div_up(g_.inner, lanes_per_call_);
            parallel_for(g_.outer * groups, 1, [&](dim_t b, dim_t e) {
                for (dim_t t = b; t < e; ++t) {
                    const dim_t o = t / groups, lane = t % groups * lanes_per_call_;
                    const dim_t off = o * line_floats + lane;
                    const softmax_call_args_t args {
                            src + off, dst + off, g_.len, g_.inner, std::min(lanes_per_call_, g_.inner - lane)};
                    fn_(&args);
                }
            });
        }
    }

    softmax_prb_t p_;
    tensor_desc work_; // the layout the kernel runs in
    softmax_geom_t g_;
    kernel_ptr kernel_;
    softmax_kernel_fn_t fn_;
    dim_t lines_per_call_ = 0, lanes_per_call_ = 0;
};

} // namespace

template <isa level>
status create_softmax_fwd_jit(const softmax_prb_t &prb, std::unique_ptr<softmax_impl_t> &out, std::string &why) {
    const format_tag work = work_tag(prb);
    if (work == format_tag::undef) {
        why = cat("no layout to run in for src ", prb.src.str(), " and dst ", prb.dst.str(), " along axis ",
                prb.desc.axis, ": two families, or the axis blocked in both and not activations");
        return status::unimplemented;
    }
    const tensor_desc work_desc(prb.src.dims(), work);
    kernel_ptr k;
    const softmax_mode mode = work_desc.stride(prb.desc.axis) == 1 ? softmax_mode::lines : softmax_mode::lanes;
    if (status st = get_kernel(mode, level, k, why); st != status::success) return st;
    out = std::make_unique<softmax_jit_t>(prb, work_desc, simd_w_of(level), std::move(k));
    return status::success;
}

template status create_softmax_fwd_jit<isa::avx512_core>(
        const softmax_prb_t &, std::unique_ptr<softmax_impl_t> &, std::string &);
template status create_softmax_fwd_jit<isa::avx2>(
        const softmax_prb_t &, std::unique_ptr<softmax_impl_t> &, std::string &);

} // namespace blockdnn::impl
