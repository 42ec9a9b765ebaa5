// SPDX-License-Identifier: Apache-2.0
// The JIT softmax driver: which problems the kernel takes, the kernel from the cache at
// creation, and the split of the tensor into calls over threads at execution.
//
// A tensor_desc is dense, so every dim laid out inside the axis (smaller strides, the inner
// blocks included) spans exactly stride(axis) floats, and every dim outside it steps by whole
// multiples of len * stride(axis). When the axis itself is not blocked, memory is therefore
// [outer][len][inner] with inner = stride(axis), each (outer, inner) index one line; the lines
// of padded channels are computed like the others and their dst zeroed afterwards.
#include <algorithm>

#include "core/machine_model.hpp"
#include "core/utils.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_isa_switch.hpp"
#include "jit/jit_kernel_cache.hpp"
#include "ops/softmax/jit_softmax_fwd_kernel.hpp"
#include "ops/softmax/softmax_conf.hpp"
#include "ops/softmax/softmax_impl.hpp"
#include "sched/parallel.hpp"
#include "tensor/padding.hpp"

namespace blockdnn::impl {

namespace {

// Floats a lines-mode call covers at least (whole lines): enough to amortize the call, few
// enough to balance the threads.
constexpr dim_t lines_chunk_floats = 16384;

struct softmax_geom_t {
    dim_t outer, len, inner;
};

bool jit_takes(const softmax_prb_t &p, std::string &why) {
    if (p.src != p.dst) {
        why = cat("src ", p.src.str(), " and dst ", p.dst.str(), " differ in layout");
        return false;
    }
    if (p.src.block_of(p.desc.axis) > 1) {
        why = cat("axis ", p.desc.axis, " (", p.src.dim_name(p.desc.axis), ") is blocked in ", to_string(p.src.tag()));
        return false;
    }
    return true;
}

softmax_geom_t geometry(const softmax_prb_t &p) {
    const dim_t len = p.src.dim(p.desc.axis), inner = p.src.stride(p.desc.axis);
    return {p.src.nelems_padded() / (len * inner), len, inner};
}

status get_kernel(softmax_mode mode, isa level, kernel_ptr &out, std::string &why) {
    softmax_conf_t c;
    if (status st = init_conf_softmax_fwd(c, level, mode, why); st != status::success) return st;
    const auto &[isa_level, conf_mode, simd_w, ur, n_vtemps, n_vregs_used] = c;
    std::string key = "softmax_fwd|";
    append_raw(key, isa_level, conf_mode, simd_w, ur, n_vtemps, n_vregs_used);
    return kernel_cache().get(
            key, [&] { return make_for_isa<jit_softmax_fwd_kernel_t, jit_generator_t>(level, c); }, out, why);
}

class softmax_jit_t : public softmax_impl_t {
public:
    softmax_jit_t(const softmax_prb_t &p, const softmax_geom_t &g, int simd_w, kernel_ptr kernel)
        : p_(p), g_(g), kernel_(std::move(kernel)), fn_(kernel_->entry<softmax_kernel_fn_t>()) {
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

    void execute(const softmax_args_t &a) const override {
        const dim_t line_floats = g_.len * g_.inner;
        if (g_.inner == 1) {
            parallel_for(div_up(g_.outer, lines_per_call_), 1, [&](dim_t b, dim_t e) {
                const dim_t first = b * lines_per_call_, last = std::min(g_.outer, e * lines_per_call_);
                const softmax_call_args_t args {
                        a.src + first * g_.len, a.dst + first * g_.len, g_.len, 1, last - first};
                fn_(&args);
            });
        } else {
            const dim_t groups = div_up(g_.inner, lanes_per_call_);
            parallel_for(g_.outer * groups, 1, [&](dim_t b, dim_t e) {
                for (dim_t t = b; t < e; ++t) {
                    const dim_t o = t / groups, lane = t % groups * lanes_per_call_;
                    const dim_t off = o * line_floats + lane;
                    const softmax_call_args_t args {
                            a.src + off, a.dst + off, g_.len, g_.inner, std::min(lanes_per_call_, g_.inner - lane)};
                    fn_(&args);
                }
            });
        }
        zero_padding(p_.dst, a.dst);
    }

    std::string info() const override {
        return cat("outer=", g_.outer, " len=", g_.len, " inner=", g_.inner,
                g_.inner == 1 ? cat(" lines_per_call=", lines_per_call_) : cat(" lanes_per_call=", lanes_per_call_));
    }

private:
    softmax_prb_t p_;
    softmax_geom_t g_;
    kernel_ptr kernel_;
    softmax_kernel_fn_t fn_;
    dim_t lines_per_call_ = 0, lanes_per_call_ = 0;
};

} // namespace

template <isa level>
status create_softmax_fwd_jit(const softmax_prb_t &prb, std::unique_ptr<softmax_impl_t> &out, std::string &why) {
    if (!jit_takes(prb, why)) return status::unimplemented;
    const softmax_geom_t g = geometry(prb);
    kernel_ptr k;
    const softmax_mode mode = g.inner == 1 ? softmax_mode::lines : softmax_mode::lanes;
    if (status st = get_kernel(mode, level, k, why); st != status::success) return st;
    out = std::make_unique<softmax_jit_t>(prb, g, simd_w_of(level), std::move(k));
    return status::success;
}

template status create_softmax_fwd_jit<isa::avx512_core>(
        const softmax_prb_t &, std::unique_ptr<softmax_impl_t> &, std::string &);
template status create_softmax_fwd_jit<isa::avx2>(
        const softmax_prb_t &, std::unique_ptr<softmax_impl_t> &, std::string &);

} // namespace blockdnn::impl
