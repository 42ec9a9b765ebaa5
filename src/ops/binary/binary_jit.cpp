// SPDX-License-Identifier: Apache-2.0
// The JIT binary driver: maps the problem onto the kernel's rows, gets the kernel from the cache
// at creation, and splits the rows into calls over threads at execution.
//
// dst is dense, so its memory is a nest of physical axes (each logical dim's blocks, then the
// inner block), each axis's stride the product of the sizes inside it. src1 is read through its
// own stride along each of those axes, 0 where it is broadcast. From the innermost axis out:
// the axes along which src1 is constant (a scalar a row) or contiguous with dst (a row of src1)
// form the kernel's row; the next axes, while src1 steps evenly along them, its rows; the rest
// the driver walks. src1 is read in place when its layout is dst's, or plain where dst pads
// none of the dims src1 does not broadcast; else it is reordered into dst's layout first (into
// a scratch buffer of the calling thread). src0 in another layout than dst is reordered into
// dst first, where no sum post-op needs dst's old values. Reorders stay within a family.
#include <algorithm>
#include <cassert>
#include <iterator>
#include <numeric>
#include <vector>

#include "core/thread_scratch.hpp"
#include "core/utils.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_isa_switch.hpp"
#include "jit/jit_kernel_cache.hpp"
#include "ops/binary/binary_conf.hpp"
#include "ops/binary/binary_impl.hpp"
#include "ops/binary/jit_binary_fwd_kernel.hpp"
#include "sched/parallel.hpp"
#include "tensor/layout.hpp"
#include "tensor/padding.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

namespace {

// Floats a call covers at most (whole rows, or a piece of one long row, a multiple of every
// simd_w): enough to amortize the call, few enough to balance the threads.
constexpr dim_t chunk_floats = 16384;

struct axis_t {
    dim_t size, dst_stride, src1_stride;
};

// The rows of the kernel and the axes the driver walks around them.
struct binary_geom_t {
    std::vector<axis_t> outer; // outermost first
    dim_t rows = 1, len = 1, src1_row_stride = 0;
    bool src1_scalar = false;
};

// True if src1 in layout s1 is read in place against dst (see the file comment).
bool src1_in_place(const tensor_desc &s1, const tensor_desc &dst) {
    if (s1.tag() == dst.tag()) return true;
    if (s1.is_blocked()) return false;
    for (int k = 0; k < dst.ndims(); ++k)
        if (s1.dim(k) != 1 && dst.padded_dim(k) != dst.dim(k)) return false;
    return true;
}

// dst's physical axes, outermost first, with src1's stride (in layout s1) along each; size-1
// axes left out.
std::vector<axis_t> physical_axes(const tensor_desc &dst, const tensor_desc &s1) {
    dim_t zero[max_ndims] = {};
    const dim_t base = s1.offset(zero);
    auto src1_step = [&](int k, dim_t step) {
        if (s1.dim(k) == 1) return dim_t(0);
        dim_t idx[max_ndims] = {};
        idx[k] = step;
        return s1.offset(idx) - base;
    };
    std::vector<axis_t> axes;
    for (int k = 0; k < dst.ndims(); ++k) {
        const dim_t blk = dst.block_of(k);
        axes.push_back({dst.padded_dim(k) / blk, dst.stride(k), src1_step(k, blk)});
    }
    if (dst.inner_nblks() == 1) axes.push_back({dst.inner_blk(0), 1, src1_step(dst.inner_idx(0), 1)});
    std::stable_sort(axes.begin(), axes.end(), [](const axis_t &a, const axis_t &b) {
        return a.dst_stride > b.dst_stride || (a.dst_stride == b.dst_stride && a.size > b.size);
    });
    std::erase_if(axes, [](const axis_t &a) { return a.size == 1; });
    return axes;
}

// The kernel's rows for dst against src1 in layout s1; false if src1's innermost stride is
// neither 0 nor 1 (it must then be reordered into dst's layout).
bool geometry(const tensor_desc &dst, const tensor_desc &s1, binary_geom_t &g) {
    std::vector<axis_t> axes = physical_axes(dst, s1);
    if (axes.empty()) axes.push_back({1, 1, 0});
    int i = static_cast<int>(axes.size()) - 1;
    if (axes[i].src1_stride != 0 && axes[i].src1_stride != 1) return false;
    g.src1_scalar = axes[i].src1_stride == 0;
    g.len = axes[i].size;
    for (--i; i >= 0 && axes[i].src1_stride == (g.src1_scalar ? 0 : g.len); --i) g.len *= axes[i].size;
    if (i >= 0) {
        g.rows = axes[i].size;
        g.src1_row_stride = axes[i].src1_stride;
        for (--i; i >= 0 && axes[i].src1_stride == g.src1_row_stride * g.rows; --i) g.rows *= axes[i].size;
    }
    g.outer.assign(axes.begin(), axes.begin() + (i + 1));
    return true;
}

bool jit_takes(const binary_prb_t &p, std::string &why) {
    if (p.dst.inner_nblks() > 1) {
        why = cat("dst ", p.dst.str(), " has two inner blocks");
        return false;
    }
    if (p.src0 != p.dst && p.po.has_sum()) {
        why = cat("src0 ", p.src0.str(), " differs from dst ", p.dst.str(), " and the sum post-op reads dst");
        return false;
    }
    if (p.src0 != p.dst && !same_family(p.src0.tag(), p.dst.tag())) {
        why = cat("src0 ", p.src0.str(), " is not of dst ", p.dst.str(), "'s family, so not reordered into it");
        return false;
    }
    return true;
}

std::string cache_key(const binary_conf_t &c) {
    const auto &[isa_level, alg, src1_scalar, post_ops, simd_w, ur, n_vtemps, n_vregs_used] = c;
    std::string key = "binary_fwd|";
    append_raw(key, isa_level, alg, src1_scalar, simd_w, ur, n_vtemps, n_vregs_used);
    for (const post_op &e : post_ops) append_raw(key, e.what, e.alg, e.alpha, e.beta, e.scale);
    return key;
}

struct binary_scratch_tag;
using binary_scratch_t = thread_scratch_t<binary_scratch_tag, 1>;

class binary_jit_t : public binary_impl_t {
public:
    binary_jit_t(const binary_prb_t &p, const binary_geom_t &g, const tensor_desc &src1_read, int simd_w,
            int unroll_floats, kernel_ptr kernel)
        : p_(p), g_(g), src1_read_(src1_read), kernel_(std::move(kernel)), fn_(kernel_->entry<binary_kernel_fn_t>()) {
        len_per_call_ = std::min(g_.len, chunk_floats);
        rows_per_call_ = g_.len >= chunk_floats ? 1 : std::max<dim_t>(1, chunk_floats / g_.len);
        rows_per_call_ = std::min(rows_per_call_, g_.rows);
        // Short rows that repeat one src1 row (a per-channel operand on nhwc or nChw16c) run as
        // longer rows, src1's row repeated to fill whole vectors up to the kernel's unroll: the
        // kernel's per-row work and masked tails then no longer come with every few floats.
        const dim_t period = std::lcm(g_.len, dim_t(simd_w));
        if (!g_.src1_scalar && g_.src1_row_stride == 0 && g_.rows > 1 && period <= unroll_floats)
            repeat_len_ = unroll_floats / period * period;
    }

    void execute(const binary_args_t &a) const override {
        const float *src0 = a.src0, *src1 = a.src1;
        // src1 first: its buffer may fail to come, and dst is not written before then.
        binary_scratch_t lease;
        if (src1_read_ != p_.src1) {
            float *buf = lease.get(0, static_cast<std::size_t>(src1_read_.nelems_padded()));
            reorder_now(tensor(p_.src1, const_cast<float *>(a.src1)), tensor(src1_read_, buf));
            src1 = buf;
        }
        if (p_.src0 != p_.dst) {
            reorder_now(tensor(p_.src0, const_cast<float *>(a.src0)), tensor(p_.dst, a.dst));
            src0 = a.dst;
        }
        dim_t n_outer = 1;
        for (const axis_t &x : g_.outer) n_outer *= x.size;
        const dim_t row_chunks = div_up(g_.rows, rows_per_call_), len_chunks = div_up(g_.len, len_per_call_);
        parallel_for(n_outer * row_chunks * len_chunks, 1, [&](dim_t b, dim_t e) {
            for (dim_t t = b; t < e; ++t) {
                const dim_t lc = t % len_chunks, rc = t / len_chunks % row_chunks;
                dim_t o = t / len_chunks / row_chunks, off = 0, off1 = 0;
                for (auto x = g_.outer.rbegin(); x != g_.outer.rend(); ++x) {
                    const dim_t i = o % x->size;
                    o /= x->size;
                    off += i * x->dst_stride;
                    off1 += i * x->src1_stride;
                }
                const dim_t row = rc * rows_per_call_, at = lc * len_per_call_;
                off += row * g_.len + at;
                off1 += row * g_.src1_row_stride + (g_.src1_scalar ? 0 : at);
                const dim_t rows = std::min(rows_per_call_, g_.rows - row);
                if (repeat_len_ == 0) {
                    const binary_call_args_t args {src0 + off, src1 + off1, a.dst + off, rows,
                            std::min(len_per_call_, g_.len - at), g_.src1_row_stride};
                    fn_(&args);
                    continue;
                }
                alignas(64) float repeated[binary_max_ur * 16]; // repeat_len_ <= ur * simd_w
                assert(repeat_len_ <= static_cast<dim_t>(std::size(repeated)));
                for (dim_t i = 0; i < repeat_len_; ++i) repeated[i] = src1[off1 + i % g_.len];
                const dim_t n = rows * g_.len, whole = n / repeat_len_ * repeat_len_;
                if (whole > 0) {
                    const binary_call_args_t args {
                            src0 + off, repeated, a.dst + off, whole / repeat_len_, repeat_len_, 0};
                    fn_(&args);
                }
                if (whole < n) {
                    const binary_call_args_t args {
                            src0 + off + whole, src1 + off1, a.dst + off + whole, (n - whole) / g_.len, g_.len, 0};
                    fn_(&args);
                }
            }
        });
        zero_padding(p_.dst, a.dst);
    }

    std::string info() const override {
        std::string s;
        if (p_.src0 != p_.dst) s += cat("src0 reordered to ", to_string(p_.dst.tag()), "; ");
        if (src1_read_ != p_.src1) s += cat("src1 reordered to ", to_string(src1_read_.tag()), "; ");
        dim_t n_outer = 1;
        for (const axis_t &x : g_.outer) n_outer *= x.size;
        return s
                + cat("outer=", n_outer, " rows=", g_.rows, " len=", g_.len,
                        " src1=", g_.src1_scalar ? "scalar" : "row", " src1_row_stride=", g_.src1_row_stride);
    }

private:
    binary_prb_t p_;
    binary_geom_t g_;
    tensor_desc src1_read_; // src1's layout as the kernel reads it
    kernel_ptr kernel_;
    binary_kernel_fn_t fn_;
    dim_t rows_per_call_ = 1, len_per_call_ = 1;
    dim_t repeat_len_ = 0; // > 0: rows run as rows of this many floats, src1's row repeated
};

} // namespace

template <isa level>
status create_binary_fwd_jit(const binary_prb_t &prb, std::unique_ptr<binary_impl_t> &out, std::string &why) {
    if (!jit_takes(prb, why)) return status::unimplemented;
    tensor_desc src1_read = prb.src1;
    binary_geom_t g;
    if (!src1_in_place(prb.src1, prb.dst) || !geometry(prb.dst, prb.src1, g)) {
        if (!same_family(prb.src1.tag(), prb.dst.tag())) {
            why = cat("src1 ", prb.src1.str(), " is not read in place and not of dst ", prb.dst.str(),
                    "'s family, so not reordered into it");
            return status::unimplemented;
        }
        src1_read = tensor_desc(prb.src1.dims(), prb.dst.tag());
        g = binary_geom_t {};
        [[maybe_unused]] const bool ok = geometry(prb.dst, src1_read, g);
        assert(ok); // src1 in dst's layout reads at stride 0 or 1
    }
    binary_conf_t c;
    if (status st = init_conf_binary_fwd(c, level, prb.desc.alg, g.src1_scalar, prb.po, why); st != status::success)
        return st;
    kernel_ptr k;
    if (status st = kernel_cache().get(
                cache_key(c), [&] { return make_for_isa<jit_binary_fwd_kernel_t, jit_generator_t>(level, c); }, k, why);
            st != status::success)
        return st;
    out = std::make_unique<binary_jit_t>(prb, g, src1_read, c.simd_w, c.ur * c.simd_w, std::move(k));
    return status::success;
}

template status create_binary_fwd_jit<isa::avx512_core>(
        const binary_prb_t &, std::unique_ptr<binary_impl_t> &, std::string &);
template status create_binary_fwd_jit<isa::avx2>(const binary_prb_t &, std::unique_ptr<binary_impl_t> &, std::string &);

} // namespace blockdnn::impl
