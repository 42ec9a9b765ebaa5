// SPDX-License-Identifier: Apache-2.0
// The ops as Python objects: the compiled bases of blockdnn.nn's classes (Conv, BatchNorm, Pool,
// Linear, Eltwise, Softmax) and the batch-norm folding they use.
//
// The library's ops are made for one problem (conv_desc holds mb and the sizes), so each object
// makes its op on the first call with a given input descriptor and keeps it: a call with a shape
// and layout seen before is a lookup, an execute and the result's conversion. The inputs are
// viewed without a copy; a plain input gives a torch tensor that views the library's result, a
// blockdnn.Tensor gives a blockdnn.Tensor in its layout (nChw16c in, nChw16c out).
//
// Every call converts its arguments with the GIL, then releases it to make an op or run one;
// the op runs on the calling thread's current stream (blockdnn.stream(s)), so inside one the
// work is queued and the result is ready once the stream is synchronized.
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.hpp"

namespace blockdnn::python {

namespace {

// ------------------------------------------------------------------ tensors in and out

bool is_channels_last(format_tag tag) {
    return tag == format_tag::nwc || tag == format_tag::nhwc || tag == format_tag::ndhwc;
}

// An argument as a library tensor, and whether it came as a blockdnn.Tensor (the result then
// is one too) or as anything else (a torch tensor or an array: the result is a torch tensor).
struct input_t {
    tensor t;
    bool is_blockdnn = false;
};

// A torch tensor that requires grad as a detached view of the same memory (PyTorch gives no
// DLPack view of one); anything else as it is. Inference results have no autograd history.
tensor as_tensor_detached(py::handle x, const char *arg) {
    if (!py::isinstance<tensor>(x) && py::getattr(x, "requires_grad", py::none()).ptr() == Py_True)
        return as_tensor(x.attr("detach")(), arg);
    return as_tensor(x, arg);
}

input_t take(py::handle x, const char *arg) { return {as_tensor_detached(x, arg), py::isinstance<tensor>(x)}; }

// torch.utils.dlpack.from_dlpack, looked up once; its reference is kept for the process's life
// (the module is not unloaded before the interpreter ends).
py::handle torch_from_dlpack() {
    static py::handle fn = py::object(py::module_::import("torch.utils.dlpack").attr("from_dlpack")).release();
    return fn;
}

// An op's result for Python: `dst` as a blockdnn.Tensor, or as a torch tensor viewing its
// memory (dst is plain then: the ops reorder a blocked result back for a plain input).
py::object give(const tensor &dst, bool as_blockdnn) {
    py::object t = py::cast(dst);
    if (as_blockdnn) return t;
    return torch_from_dlpack()(t.attr("__dlpack__")());
}

// True if the memory of `a` and `b` (their whole extents, padding included) overlaps.
bool overlap(const tensor &a, const tensor &b) {
    const auto *pa = static_cast<const char *>(a.data()), *pb = static_cast<const char *>(b.data());
    return pa < pb + b.desc().size_bytes() && pb < pa + a.desc().size_bytes();
}

// True if `desc` is the plain row-major layout of its rank (nchw, not nhwc): the one layout an
// op's own copy of a parameter, or a view with other dims, may have.
bool is_row_major(const tensor_desc &desc) { return desc.tag() == plain_tag_of_rank(desc.ndims()); }

// A private copy of a parameter (weights, bias, statistics), row-major in layout `tag`, so that
// the op keeps what it was given whatever happens to the torch tensor later. `arg` names the
// parameter in errors; its shape must be `dims`. The copy is made at the call, whatever stream
// is current, so it holds the parameter once the call returns.
tensor own_copy(py::handle obj, const std::string &owner, const char *arg, const dims_t &dims, format_tag tag) {
    tensor src;
    try {
        src = as_tensor_detached(obj, arg);
    } catch (const py::value_error &e) { // a float64 or CUDA parameter: say whose
        throw py::value_error(owner + ": " + e.what());
    } catch (const py::type_error &e) {
        throw py::type_error(owner + ": " + e.what());
    }
    if (src.desc().dims() != dims)
        throw py::value_error(
                owner + ": " + arg + " has shape " + shape_text(src.desc().dims()) + ", expected " + shape_text(dims));
    tensor row_major(tensor_desc(dims, plain_tag_of_rank(static_cast<int>(dims.size()))));
    stream_scope now(default_stream());
    if (is_row_major(src.desc())) std::memcpy(row_major.data(), src.data(), src.desc().size_bytes());
    else reorder(src, row_major); // channels-last weights of a channels_last model
    return row_major.desc().tag() == tag ? row_major : rewrap(row_major, tensor_desc(dims, tag));
}

std::optional<tensor> own_copy_or_none(
        py::handle obj, const std::string &owner, const char *arg, const dims_t &dims, format_tag tag) {
    if (obj.is_none()) return std::nullopt;
    return own_copy(obj, owner, arg, dims, tag);
}

// Runs `f`, with the library's errors naming the module they came from.
template <typename F>
auto named(const std::string &name, F &&f) {
    try {
        return f();
    } catch (const error &e) {
        throw error(e.code(), name + ": " + e.what());
    }
}

// ------------------------------------------------------------------ memory for results

// Memory for the ops' results (and the reorders around them), handed out again once nothing
// views it any more. A fresh buffer costs more than many ops: large ones are new mappings whose
// pages fault in and are zeroed twice (by the kernel, then by the tensor), 10 ms for the 51 MB a
// ReLU on a 16x256x56x56 tensor returns, which it computes in 1 ms. In a network each result is
// dropped once the next op has read it, so a few buffers serve every call.
//
// A buffer is a library tensor (zero-filled once) that the pool owns; a result shares its
// ownership, so the pool's count of owners is 1 exactly when no tensor, torch view or queued
// stream work holds it. Only the thread holding the GIL hands buffers out, and nothing but a
// handout makes new owners, so a count of 1 stays 1. The results' padding (blocked layouts) is
// written by the ops that take their dst from here (see result()).
class result_pool {
public:
    // Memory for `desc`: a free buffer at least as large (and at most twice), or a new one.
    tensor get(const tensor_desc &desc) {
        const std::size_t bytes = std::max<std::size_t>(desc.size_bytes(), sizeof(float));
        std::shared_ptr<tensor> *best = nullptr;
        for (auto &b : bufs_) {
            const std::size_t have = b->desc().size_bytes();
            if (b.use_count() == 1 && have >= bytes && have <= 2 * bytes
                    && (!best || have < (*best)->desc().size_bytes()))
                best = &b;
        }
        std::shared_ptr<tensor> buf;
        if (best) {
            // use_count() is a relaxed read. The last owner to let go may be a stream thread
            // that wrote the buffer (queued work) or read it; the acquire fence orders its
            // accesses, released by its decrement of the count, before the new result's.
            std::atomic_thread_fence(std::memory_order_acquire);
            buf = *best;
        } else {
            buf = std::make_shared<tensor>(tensor_desc({dim_t((bytes + 3) / sizeof(float))}, format_tag::x));
            bufs_.push_back(buf);
            trim();
        }
        return tensor(desc, buf->data(), std::shared_ptr<void>(buf, buf->data()));
    }

    // Forgets every buffer: free ones are released now, held ones when their last view goes.
    void clear() { bufs_.clear(); }

    // Bytes of the buffers no result holds.
    std::size_t free_bytes() const {
        std::size_t n = 0;
        for (const auto &b : bufs_)
            if (b.use_count() == 1) n += b->desc().size_bytes();
        return n;
    }

    // The pool forgets its oldest buffers past this many bytes in all (held ones are then the
    // memory of their results alone).
    static constexpr std::size_t capacity_bytes = std::size_t(1) << 30;

private:
    void trim() {
        std::size_t total = 0;
        for (const auto &b : bufs_) total += b->desc().size_bytes();
        for (auto it = bufs_.begin(); total > capacity_bytes && it + 1 < bufs_.end();) {
            total -= (*it)->desc().size_bytes();
            it = bufs_.erase(it);
        }
    }

    std::vector<std::shared_ptr<tensor>> bufs_;
};

// The one pool of the process; never destroyed, so no result outlives it at exit.
result_pool &results() {
    static auto *p = new result_pool;
    return *p;
}

// A result's memory: for the ops that write every element of dst, blocked padding included
// (conv, pooling, eltwise, batch norm, softmax, inner product and reorder do).
tensor result(const tensor_desc &desc) { return results().get(desc); }

// ------------------------------------------------------------------ the per-shape op cache

// The ops one Python object made, one per input descriptor (and variant: a conv with or without
// the sum post-op). Few shapes are live at once; past `capacity` the oldest is dropped, so a
// stream of ever new shapes does not hold memory for each.
template <typename op_t>
class op_cache {
public:
    // The op for (src, variant): found, or made by `make()` with the GIL released (making may
    // generate code or reorder weights). A copy of the op (a handle) is returned, so a call
    // keeps its op even if another thread's call drops it from the cache meanwhile. `make`
    // reads the parameters the caller copied with the GIL; an op made from parameters that
    // were replaced meanwhile (clear()) serves its call but is not kept. Those copies were made
    // at the call (own_copy), so the op is made outside any stream: inside one, the library
    // would first wait for all the work queued on it, and only the op's execution is queued.
    template <typename make_t>
    op_t get(const tensor_desc &src, int variant, make_t &&make) {
        if (const op_t *op = find(src, variant)) return *op;
        const unsigned generation = generation_;
        std::optional<op_t> made;
        {
            py::gil_scoped_release nogil;
            stream_scope now(default_stream());
            made.emplace(make());
        }
        if (generation != generation_) return *made;
        if (const op_t *op = find(src, variant)) return *op; // another thread made it first
        if (entries_.size() >= capacity) entries_.erase(entries_.begin());
        entries_.push_back({src, variant, *made});
        return *made;
    }

    // Drops every op: the parameters they hold were replaced.
    void clear() {
        entries_.clear();
        ++generation_;
    }
    std::size_t size() const { return entries_.size(); }

    // (src descriptor, implementation) of each op, oldest first: which kernels the shapes run.
    std::vector<std::pair<std::string, std::string>> impls() const {
        std::vector<std::pair<std::string, std::string>> v;
        for (const entry &e : entries_) v.emplace_back(e.src.str(), e.op.impl_name());
        return v;
    }

    static constexpr std::size_t capacity = 16;

private:
    struct entry {
        tensor_desc src;
        int variant;
        op_t op;
    };

    const op_t *find(const tensor_desc &src, int variant) const {
        for (const entry &e : entries_)
            if (e.variant == variant && e.src == src) return &e.op;
        return nullptr;
    }

    std::vector<entry> entries_;
    unsigned generation_ = 0;
};

// The eltwise function applied after an op (conv, linear), or none.
struct activation_t {
    eltwise_alg alg;
    float alpha, beta;
};

std::optional<activation_t> activation_from(const std::optional<std::string> &alg, float alpha, float beta) {
    if (!alg) return std::nullopt;
    return activation_t {eltwise_alg_from_string(*alg), alpha, beta};
}

post_ops chain_of(bool sum, const std::optional<activation_t> &act) {
    post_ops po;
    if (sum) po.append_sum(1.f);
    if (act) po.append_eltwise(act->alg, act->alpha, act->beta);
    return po;
}

// The work layout of an op that runs best blocked, for an input in `tag`: a plain nc[d][h]w
// input is reordered into the preferred blocked layout and the result back; blocked and
// channels-last inputs are used as they are.
format_tag work_tag_for(const tensor_desc &src) {
    if (src.is_blocked() || is_channels_last(src.tag()) || src.ndims() < 3) return src.tag();
    return blocked_tag_for(src);
}

void check_rank(const std::string &name, const tensor_desc &src, int ndims, const char *dims_text) {
    if (src.ndims() != ndims)
        throw py::value_error(name + ": expected a " + std::to_string(ndims) + "-D input " + dims_text + ", got shape "
                + shape_text(src.dims()) + (src.ndims() == ndims - 1 ? " (add the batch dim: x.unsqueeze(0))" : ""));
}

void check_channels(const std::string &name, const tensor_desc &src, dim_t c, const char *field) {
    if (src.dim(1) != c)
        throw py::value_error(name + ": expected " + std::to_string(c) + " input channels (" + field + "), got "
                + std::to_string(src.dim(1)) + " in input of shape " + shape_text(src.dims()));
}

const char *act_dims_text(int ndims) {
    switch (ndims) {
    case 3: return "(N, C, L)";
    case 4: return "(N, C, H, W)";
    default: return "(N, C, D, H, W)";
    }
}

// ------------------------------------------------------------------ Conv

// A forward convolution with PyTorch's arguments: weights {oc, ic/g, k...}, per spatial dim
// (outermost first) a kernel size, stride, begin and end pad and dilation (PyTorch's: 1 is
// dense), and an optional bias and activation. Calls may add the result into a tensor of the
// output's shape (sum_into: a residual add) before the activation.
class conv_op {
public:
    conv_op(std::string name, dim_t ic, dim_t oc, dim_t g, std::vector<dim_t> k, std::vector<dim_t> s,
            std::vector<dim_t> p, std::vector<dim_t> p_r, std::vector<dim_t> dil, py::handle weight, py::handle bias,
            const std::optional<std::string> &act, float alpha, float beta)
        : name_(std::move(name)), ic_(ic), oc_(oc), g_(g), k_(std::move(k)), s_(std::move(s)), p_(std::move(p)),
          p_r_(std::move(p_r)), dil_(std::move(dil)),
          act_(named(name_, [&] { return activation_from(act, alpha, beta); })) {
        const std::size_t sp = k_.size();
        if (sp < 1 || sp > 3 || s_.size() != sp || p_.size() != sp || p_r_.size() != sp || dil_.size() != sp)
            throw py::value_error(name_ + ": kernel_size, stride, padding and dilation need one entry per spatial dim");
        if (ic <= 0 || oc <= 0 || g <= 0 || ic % g || oc % g)
            throw py::value_error(name_ + ": in_channels = " + std::to_string(ic) + " and out_channels = "
                    + std::to_string(oc) + " must be positive multiples of groups = " + std::to_string(g));
        set_params(weight, bias);
    }

    void set_params(py::handle weight, py::handle bias) {
        const int ndims = static_cast<int>(k_.size()) + 2;
        dims_t wdims {oc_, ic_ / g_};
        wdims.insert(wdims.end(), k_.begin(), k_.end());
        static constexpr format_tag oi_tags[] = {format_tag::oiw, format_tag::oihw, format_tag::oidhw};
        static constexpr format_tag goi_tags[] = {format_tag::goiw, format_tag::goihw, format_tag::goidhw};
        const tensor w = own_copy(weight, name_, "weight", wdims, oi_tags[ndims - 3]);
        if (g_ == 1) wei_ = w;
        else { // the library's grouped form of the same memory: {g, oc/g, ic/g, k...}
            dims_t gdims {g_, oc_ / g_, ic_ / g_};
            gdims.insert(gdims.end(), k_.begin(), k_.end());
            wei_ = rewrap(w, tensor_desc(gdims, goi_tags[ndims - 3]));
        }
        bia_ = own_copy_or_none(bias, name_, "bias", {oc_}, format_tag::x).value_or(tensor());
        cache_.clear();
    }

    py::object call(py::handle x, py::handle sum_into) {
        const input_t in = take(x, "input");
        const tensor_desc &sd = in.t.desc();
        check_rank(name_, sd, static_cast<int>(k_.size()) + 2, act_dims_text(static_cast<int>(k_.size()) + 2));
        check_channels(name_, sd, ic_, "in_channels");
        const bool sum = !sum_into.is_none();
        const tensor r = sum ? as_tensor_detached(sum_into, "sum_into") : tensor();
        const tensor wei = wei_, bia = bia_; // this call's parameters, whatever another thread assigns
        const conv_fwd op = cache_.get(sd, sum, [&] { return make(sd, sum, wei, bia); });
        if (sum && r.desc().dims() != op.dst_desc().dims())
            throw py::value_error(name_ + ": sum_into has shape " + shape_text(r.desc().dims()) + ", the output's is "
                    + shape_text(op.dst_desc().dims()));
        // The conv would write its input while reading it (in whichever layouts it picks).
        if (sum && overlap(r, in.t))
            throw py::value_error(name_ + ": sum_into shares memory with the input; give a tensor of its own "
                    + "(sum_into=r.clone())");
        // A plain input runs in the op's layouts, reordered around it (see make()); the buffers
        // are taken with the GIL, which the pool needs.
        const tensor src_buf = in.t.desc() == op.src_desc() ? tensor() : result(op.src_desc());
        const tensor dst = sum && r.desc() == op.dst_desc() ? r : result(op.dst_desc());
        const tensor out = sum || dst.desc().tag() == sd.tag() ? dst : result(tensor_desc(dst.desc().dims(), sd.tag()));
        {
            py::gil_scoped_release nogil;
            if (!src_buf.empty()) reorder(in.t, src_buf);
            if (sum && dst.data() != r.data()) reorder(r, dst); // the sum reads dst: r in the op's layout
            op.execute(src_buf.empty() ? in.t : src_buf, dst);
            if (sum && dst.data() != r.data()) reorder(dst, r);
            if (out.data() != dst.data()) reorder(dst, out);
        }
        if (sum) return py::reinterpret_borrow<py::object>(sum_into);
        return give(out, in.is_blockdnn);
    }

    const op_cache<conv_fwd> &cache() const { return cache_; }

private:
    conv_fwd make(const tensor_desc &src, bool sum, const tensor &wei, const tensor &bia) const {
        return named(name_, [&] {
            conv_desc d;
            const int sp = static_cast<int>(k_.size());
            d.ndims = sp + 2;
            d.mb = src.dim(0);
            d.g = g_;
            d.ic = ic_;
            d.oc = oc_;
            dim_t *fields[][6] = {{&d.id, &d.kd, &d.sd, &d.pd, &d.pd_r, &d.dd},
                    {&d.ih, &d.kh, &d.sh, &d.ph, &d.ph_r, &d.dh}, {&d.iw, &d.kw, &d.sw, &d.pw, &d.pw_r, &d.dw}};
            for (int j = 0; j < sp; ++j) {
                dim_t **f = fields[3 - sp + j];
                // Said in PyTorch's terms here: the library's message counts dilation from 0.
                const dim_t i = src.dim(2 + j), ext = (k_[j] - 1) * dil_[j] + 1;
                if (i + p_[j] + p_r_[j] < ext)
                    throw py::value_error(name_ + ": the kernel (extent " + std::to_string(ext) + " with dilation "
                            + std::to_string(dil_[j]) + ") is larger than input size " + std::to_string(i)
                            + " plus padding " + std::to_string(p_[j] + p_r_[j]) + " in input of shape "
                            + shape_text(src.dims()));
                *f[0] = i;
                *f[1] = k_[j];
                *f[2] = s_[j];
                *f[3] = p_[j];
                *f[4] = p_r_[j];
                *f[5] = dilation_from_torch(dil_[j]);
            }
            d.with_bias = !bia.empty();
            d.infer_dst_dims();
            // A plain nc[d][h]w input lets the op pick: the blocked layouts of its kernels (or a
            // plain src for a first layer), reordered around the call; blocked and channels-last
            // inputs keep their layout, as the kernels take them.
            const bool keep = src.is_blocked() || is_channels_last(src.tag());
            const format_tag tag = keep ? src.tag() : format_tag::any;
            return conv_fwd(d, tag, wei, bia, tag, chain_of(sum, act_));
        });
    }

    std::string name_;
    dim_t ic_, oc_, g_;
    std::vector<dim_t> k_, s_, p_, p_r_, dil_;
    std::optional<activation_t> act_;
    tensor wei_, bia_;
    op_cache<conv_fwd> cache_;
};

// ------------------------------------------------------------------ BatchNorm

// Batch normalization in inference: running statistics when given (PyTorch's eval mode), the
// batch's own when not (track_running_stats=False); affine weight and bias when given.
class bnorm_op {
public:
    bnorm_op(std::string name, dim_t c, std::vector<int> ranks, float eps, py::handle weight, py::handle bias,
            py::handle running_mean, py::handle running_var)
        : name_(std::move(name)), c_(c), ranks_(std::move(ranks)), eps_(eps) {
        if (c <= 0) throw py::value_error(name_ + ": num_features = " + std::to_string(c) + " must be positive");
        set_params(weight, bias, running_mean, running_var);
    }

    void set_params(py::handle weight, py::handle bias, py::handle running_mean, py::handle running_var) {
        if (running_mean.is_none() != running_var.is_none())
            throw py::value_error(name_ + ": give both running_mean and running_var, or neither");
        scale_ = own_copy_or_none(weight, name_, "weight", {c_}, format_tag::x).value_or(tensor());
        shift_ = own_copy_or_none(bias, name_, "bias", {c_}, format_tag::x).value_or(tensor());
        mean_ = own_copy_or_none(running_mean, name_, "running_mean", {c_}, format_tag::x).value_or(tensor());
        var_ = own_copy_or_none(running_var, name_, "running_var", {c_}, format_tag::x).value_or(tensor());
        cache_.clear();
    }

    py::object call(py::handle x) {
        const input_t in = take(x, "input");
        const tensor_desc &sd = in.t.desc();
        bool rank_ok = false;
        for (int r : ranks_) rank_ok = rank_ok || sd.ndims() == r;
        if (!rank_ok) {
            std::string want;
            for (int r : ranks_) want += (want.empty() ? "" : " or ") + std::to_string(r) + "-D";
            throw py::value_error(name_ + ": expected a " + want + " input, got shape " + shape_text(sd.dims()));
        }
        check_channels(name_, sd, c_, "num_features");
        bnorm_fwd_args args {in.t, tensor(), mean_, var_, scale_, shift_}; // this call's parameters
        const bnorm_fwd op = cache_.get(sd, 0, [&] { return make(args); });
        args.dst = result(sd);
        {
            py::gil_scoped_release nogil;
            op.execute(args);
        }
        return give(args.dst, in.is_blockdnn);
    }

    const op_cache<bnorm_fwd> &cache() const { return cache_; }

private:
    bnorm_fwd make(const bnorm_fwd_args &a) const {
        return named(name_, [&] {
            bnorm_flags flags = bnorm_flags::none;
            if (!a.scale.empty()) flags = flags | bnorm_flags::use_scale;
            if (!a.shift.empty()) flags = flags | bnorm_flags::use_shift;
            const bnorm_mode mode = a.mean.empty() ? bnorm_mode::training : bnorm_mode::inference;
            return bnorm_fwd(bnorm_desc {mode, a.src.desc(), {}, eps_, flags});
        });
    }

    std::string name_;
    dim_t c_;
    std::vector<int> ranks_;
    float eps_;
    tensor scale_, shift_, mean_, var_;
    op_cache<bnorm_fwd> cache_;
};

// ------------------------------------------------------------------ pooling

// Max or average pooling with PyTorch's arguments (kernel_size, stride, padding, dilation,
// ceil_mode, count_include_pad), or adaptive pooling to a fixed output size (windows of one
// size: each input size a multiple of its output size; output 1 is the global pool).
class pool_op {
public:
    pool_op(std::string name, const std::string &alg, std::vector<dim_t> k, std::vector<dim_t> s, std::vector<dim_t> p,
            std::vector<dim_t> dil, bool ceil_mode, std::vector<dim_t> output_size)
        : name_(std::move(name)), k_(std::move(k)), s_(std::move(s)), p_(std::move(p)), dil_(std::move(dil)),
          ceil_(ceil_mode), out_(std::move(output_size)) {
        if (alg == "max") alg_ = pool_alg::max;
        else if (alg == "avg_include_pad") alg_ = pool_alg::avg_include_pad;
        else if (alg == "avg_exclude_pad") alg_ = pool_alg::avg_exclude_pad;
        else throw py::value_error(name_ + ": unknown pooling algorithm '" + alg + "'");
        sp_ = static_cast<int>(out_.empty() ? k_.size() : out_.size());
        const std::size_t sp = static_cast<std::size_t>(sp_);
        if (sp < 1 || sp > 3 || (out_.empty() && (s_.size() != sp || p_.size() != sp || dil_.size() != sp)))
            throw py::value_error(name_ + ": kernel_size, stride, padding and dilation need one entry per spatial dim");
        for (dim_t o : out_)
            if (o <= 0) throw py::value_error(name_ + ": output_size " + shape_text(out_) + " must be positive");
    }

    py::object call(py::handle x) {
        const input_t in = take(x, "input");
        const tensor_desc &sd = in.t.desc();
        check_rank(name_, sd, sp_ + 2, act_dims_text(sp_ + 2));
        const pool_fwd op = cache_.get(sd, 0, [&] { return make(sd); });
        // A plain nc[d][h]w input runs blocked, reordered around the op (see make()).
        const tensor src_buf = in.t.desc() == op.src_desc() ? tensor() : result(op.src_desc());
        const tensor dst = result(op.dst_desc());
        const tensor out = dst.desc().tag() == sd.tag() ? dst : result(tensor_desc(dst.desc().dims(), sd.tag()));
        {
            py::gil_scoped_release nogil;
            if (!src_buf.empty()) reorder(in.t, src_buf);
            op.execute(src_buf.empty() ? in.t : src_buf, dst);
            if (out.data() != dst.data()) reorder(dst, out);
        }
        return give(out, in.is_blockdnn);
    }

    const op_cache<pool_fwd> &cache() const { return cache_; }

private:
    pool_fwd make(const tensor_desc &src) const {
        pool_desc d;
        d.alg = alg_;
        d.ndims = sp_ + 2;
        d.mb = src.dim(0);
        d.ic = src.dim(1);
        dim_t *fields[][7] = {{&d.id, &d.od, &d.kd, &d.sd, &d.pd, &d.pd_r, &d.dd},
                {&d.ih, &d.oh, &d.kh, &d.sh, &d.ph, &d.ph_r, &d.dh},
                {&d.iw, &d.ow, &d.kw, &d.sw, &d.pw, &d.pw_r, &d.dw}};
        for (int j = 0; j < sp_; ++j) {
            dim_t **f = fields[3 - sp_ + j];
            const dim_t i = src.dim(2 + j);
            *f[0] = i;
            if (!out_.empty()) {
                const dim_t o = out_[j];
                if (i % o)
                    throw py::value_error(name_ + ": input size " + std::to_string(i) + " (dim " + std::to_string(2 + j)
                            + " of " + shape_text(src.dims()) + ") is not a multiple of output size "
                            + std::to_string(o) + "; only adaptive pools with windows of one size are supported");
                *f[1] = o;
                *f[2] = *f[3] = i / o;
                continue;
            }
            const dim_t k = k_[j], s = s_[j], p = p_[j], ext = (k - 1) * dil_[j] + 1;
            if (s <= 0 || p < 0 || dil_[j] <= 0 || k <= 0)
                throw py::value_error(
                        name_ + ": kernel_size, stride and dilation must be positive, padding not negative");
            if (i + 2 * p < ext)
                throw py::value_error(name_ + ": the window (extent " + std::to_string(ext)
                        + ") is larger than input size " + std::to_string(i) + " plus padding " + std::to_string(2 * p)
                        + " in input of shape " + shape_text(src.dims()));
            // PyTorch's output size: floor or ceiling, less a last window that would start in
            // the end padding; the end pad then follows from it (any sign).
            const dim_t span = i + 2 * p - ext;
            dim_t o = (ceil_ ? (span + s - 1) / s : span / s) + 1;
            if (ceil_ && (o - 1) * s >= i + p) --o;
            if (alg_ == pool_alg::avg_include_pad && (o - 1) * s - p + k > i + p)
                throw py::value_error(name_
                        + ": with ceil_mode=True and count_include_pad=True the last window of input "
                        + shape_text(src.dims()) + " runs past the padding, where PyTorch divides by fewer taps "
                        + "than the kernel's; use count_include_pad=False or ceil_mode=False");
            *f[1] = o;
            *f[2] = k;
            *f[3] = s;
            *f[4] = p;
            *f[5] = (o - 1) * s + ext - i - p;
            *f[6] = dilation_from_torch(dil_[j]);
        }
        return named(name_, [&] { return pool_fwd(d, work_tag_for(src), work_tag_for(src)); });
    }

    std::string name_;
    pool_alg alg_ = pool_alg::max;
    int sp_ = 2;
    std::vector<dim_t> k_, s_, p_, dil_;
    bool ceil_;
    std::vector<dim_t> out_;
    op_cache<pool_fwd> cache_;
};

// ------------------------------------------------------------------ Linear

// PyTorch's Linear: y = x W^T + b over the last dim of a plain input of any rank (the leading
// dims are the batch). A blocked input (N, C, [D,] [H,] W) is taken as flattened: its C * D * H
// * W features (in PyTorch's flatten order) must be in_features, and the result is (N, out).
class linear_op {
public:
    linear_op(std::string name, dim_t ic, dim_t oc, py::handle weight, py::handle bias,
            const std::optional<std::string> &act, float alpha, float beta)
        : name_(std::move(name)), ic_(ic), oc_(oc),
          act_(named(name_, [&] { return activation_from(act, alpha, beta); })) {
        if (ic <= 0 || oc <= 0)
            throw py::value_error(name_ + ": in_features = " + std::to_string(ic)
                    + " and out_features = " + std::to_string(oc) + " must be positive");
        set_params(weight, bias);
    }

    void set_params(py::handle weight, py::handle bias) {
        wei_ = own_copy(weight, name_, "weight", {oc_, ic_}, format_tag::oi);
        bia_ = own_copy_or_none(bias, name_, "bias", {oc_}, format_tag::x).value_or(tensor());
        cache_.clear();
    }

    py::object call(py::handle x) {
        const input_t in = take(x, "input");
        const tensor_desc &sd = in.t.desc();
        tensor src = in.t;
        dims_t out_dims;
        if (sd.is_blocked()) {
            dim_t features = 1;
            for (int k = 1; k < sd.ndims(); ++k) features *= sd.dim(k);
            if (features != ic_)
                throw py::value_error(name_ + ": a blocked input of shape " + shape_text(sd.dims()) + " has "
                        + std::to_string(features)
                        + " features (C * spatial), expected in_features = " + std::to_string(ic_));
            out_dims = {sd.dim(0), oc_};
        } else {
            if (sd.dim(sd.ndims() - 1) != ic_)
                throw py::value_error(name_ + ": expected input of shape (*, " + std::to_string(ic_)
                        + ") (in_features last), got " + shape_text(sd.dims()));
            out_dims = sd.dims();
            out_dims.back() = oc_;
        }
        const tensor_desc key = sd.is_blocked() ? sd : tensor_desc({sd.nelems() / ic_, ic_}, format_tag::nc);
        const tensor wei = wei_, bia = bia_; // this call's parameters, whatever another thread assigns
        const inner_product_fwd op = cache_.get(key, 0, [&] { return make(key, wei, bia); });
        if (!sd.is_blocked()) { // the leading dims as one batch dim: (mb, in_features), row-major
            if (!is_row_major(sd)) {
                const tensor row_major = result(tensor_desc(sd.dims(), plain_tag_of_rank(sd.ndims())));
                py::gil_scoped_release nogil;
                reorder(src, row_major);
                src = row_major;
            }
            src = rewrap(src, key);
        }
        const tensor dst = result(op.dst_desc());
        {
            py::gil_scoped_release nogil;
            op.execute(src, dst);
        }
        if (out_dims.size() == 2) return give(dst, in.is_blockdnn);
        return give(rewrap(dst, tensor_desc(out_dims, plain_tag_of_rank(int(out_dims.size())))), in.is_blockdnn);
    }

    const op_cache<inner_product_fwd> &cache() const { return cache_; }

private:
    inner_product_fwd make(const tensor_desc &src, const tensor &wei_oi, const tensor &bia) const {
        return named(name_, [&] {
            inner_product_desc d;
            d.ndims = src.ndims();
            d.mb = src.dim(0);
            d.ic = src.dim(1);
            d.oc = oc_;
            dim_t *sizes[] = {&d.id, &d.ih, &d.iw};
            for (int k = 2; k < src.ndims(); ++k) *sizes[3 - (src.ndims() - k)] = src.dim(k);
            d.with_bias = !bia.empty();
            // PyTorch's weight {out, in} holds, for a flattened (C, spatial) input, the same
            // elements in the same order as oi[d][h]w {out, C, spatial}.
            static constexpr format_tag tags[] = {format_tag::oi, format_tag::oiw, format_tag::oihw, format_tag::oidhw};
            const tensor wei = d.ndims == 2 ? wei_oi : rewrap(wei_oi, tensor_desc(d.wei_dims(), tags[d.ndims - 2]));
            return inner_product_fwd(d, src.tag(), wei, bia, format_tag::nc, chain_of(false, act_));
        });
    }

    std::string name_;
    dim_t ic_, oc_;
    std::optional<activation_t> act_;
    tensor wei_, bia_;
    op_cache<inner_product_fwd> cache_;
};

// ------------------------------------------------------------------ Eltwise, Softmax

// y = f(x) for one of eltwise_alg's functions, in the input's layout; in place when asked (the
// input is then the result).
class eltwise_op {
public:
    eltwise_op(std::string name, const std::string &alg, float alpha, float beta, bool inplace)
        : name_(std::move(name)), alg_(named(name_, [&] { return eltwise_alg_from_string(alg); })), alpha_(alpha),
          beta_(beta), inplace_(inplace) {}

    py::object call(py::handle x) {
        const input_t in = take(x, "input");
        const eltwise_fwd op = cache_.get(in.t.desc(), 0,
                [&] { return named(name_, [&] { return eltwise_fwd(alg_, alpha_, beta_, in.t.desc()); }); });
        const tensor dst = inplace_ ? in.t : result(in.t.desc());
        {
            py::gil_scoped_release nogil;
            op.execute(in.t, dst);
        }
        if (inplace_) return py::reinterpret_borrow<py::object>(x);
        return give(dst, in.is_blockdnn);
    }

    const op_cache<eltwise_fwd> &cache() const { return cache_; }

private:
    std::string name_;
    eltwise_alg alg_;
    float alpha_, beta_;
    bool inplace_;
    op_cache<eltwise_fwd> cache_;
};

// Softmax along one dim (PyTorch's dim; negative counts from the end), in the input's layout.
class softmax_op {
public:
    softmax_op(std::string name, int dim) : name_(std::move(name)), dim_(dim) {}

    py::object call(py::handle x) {
        const input_t in = take(x, "input");
        const tensor_desc &sd = in.t.desc();
        const int axis = dim_ < 0 ? dim_ + sd.ndims() : dim_;
        if (axis < 0 || axis >= sd.ndims())
            throw py::value_error(name_ + ": dim = " + std::to_string(dim_) + " is out of range for input of shape "
                    + shape_text(sd.dims()));
        const softmax_fwd op =
                cache_.get(sd, axis, [&] { return named(name_, [&] { return softmax_fwd(sd, sd, axis); }); });
        const tensor dst = result(sd);
        {
            py::gil_scoped_release nogil;
            op.execute(in.t, dst);
        }
        return give(dst, in.is_blockdnn);
    }

    const op_cache<softmax_fwd> &cache() const { return cache_; }

private:
    std::string name_;
    int dim_;
    op_cache<softmax_fwd> cache_;
};

// ------------------------------------------------------------------ helpers of blockdnn.nn

// A blockdnn.Tensor with dims start_dim..end_dim merged (PyTorch's flatten): a plain row-major
// one is viewed, any other is reordered to its plain layout first.
tensor flatten(const tensor &x, int start_dim, int end_dim) {
    const tensor_desc &d = x.desc();
    const int n = d.ndims();
    const int s = start_dim < 0 ? start_dim + n : start_dim, e = end_dim < 0 ? end_dim + n : end_dim;
    if (s < 0 || s >= n || e < 0 || e >= n || s > e)
        throw py::value_error("flatten: start_dim = " + std::to_string(start_dim) + " and end_dim = "
                + std::to_string(end_dim) + " do not fit a tensor of shape " + shape_text(d.dims()));
    dims_t dims;
    for (int k = 0; k < n; ++k) {
        if (k <= s || k > e) dims.push_back(d.dim(k));
        else dims.back() *= d.dim(k);
    }
    py::gil_scoped_release nogil;
    const tensor plain = is_row_major(d) ? x : reorder(x, plain_tag_of_rank(n));
    return rewrap(plain, tensor_desc(dims, plain_tag_of_rank(static_cast<int>(dims.size()))));
}

// PyTorch conv weights {oc, ic/g, k...} and bias with an inference batch norm folded in
// (bnorm_fold_into_conv): the new weights and bias, as torch tensors.
py::tuple fold_bn(py::handle weight, py::handle bias, py::handle mean, py::handle var, py::handle scale,
        py::handle shift, float eps) {
    const tensor w = as_tensor_detached(weight, "weight");
    const tensor_desc &wd = w.desc();
    if (wd.ndims() < 3 || wd.ndims() > 5)
        throw py::value_error("fold_bn: weight has shape " + shape_text(wd.dims()) + "; conv weights have 3 to 5 dims");
    static constexpr format_tag tags[] = {format_tag::oiw, format_tag::oihw, format_tag::oidhw};
    const dim_t oc = wd.dim(0);
    const std::string name = "fold_bn";
    const tensor wei = own_copy(weight, name, "weight", wd.dims(), tags[wd.ndims() - 3]);
    const tensor bia(tensor_desc({oc}, format_tag::x));
    const auto per_channel = [&](py::handle h, const char *arg) {
        return own_copy_or_none(h, name, arg, {oc}, format_tag::x).value_or(tensor());
    };
    const tensor b = per_channel(bias, "bias"), m = per_channel(mean, "running_mean"),
                 v = per_channel(var, "running_var"), g = per_channel(scale, "bn weight"),
                 sh = per_channel(shift, "bn bias");
    {
        // At the call, whatever stream is current: the results are torch tensors the caller
        // reads (and the nn classes copy) at once.
        py::gil_scoped_release nogil;
        stream_scope now(default_stream());
        bnorm_fold_into_conv(wei, b, m, v, g, sh, eps, wei, bia);
    }
    return py::make_tuple(
            give(rewrap(wei, tensor_desc(wd.dims(), plain_tag_of_rank(wd.ndims()))), false), give(bia, false));
}

// The implementations an op object's cached ops run, as (input descriptor, impl_name) pairs.
template <typename op_t>
py::list impls_of(const op_cache<op_t> &c) {
    py::list l;
    for (const auto &[src, impl] : c.impls()) l.append(py::make_tuple(src, impl));
    return l;
}

template <typename cls_t>
void def_cache_queries(cls_t &cls) {
    using op_t = typename cls_t::type;
    cls.def_property_readonly(
            "_impls", [](const op_t &o) { return impls_of(o.cache()); },
            "(input descriptor, implementation) of each op made so far, oldest first");
    cls.def_property_readonly("_cache_size", [](const op_t &o) { return o.cache().size(); });
}

} // namespace

void bind_ops(py::module_ &m) {
    using opt_str = std::optional<std::string>;
    const py::none none;
    auto conv = py::class_<conv_op>(m, "_Conv", "the compiled base of blockdnn.nn.Conv1d/2d/3d")
                        .def(py::init<std::string, dim_t, dim_t, dim_t, std::vector<dim_t>, std::vector<dim_t>,
                                     std::vector<dim_t>, std::vector<dim_t>, std::vector<dim_t>, py::handle, py::handle,
                                     const opt_str &, float, float>(),
                                py::arg("name"), py::arg("ic"), py::arg("oc"), py::arg("g"), py::arg("kernel_size"),
                                py::arg("stride"), py::arg("padding"), py::arg("padding_r"), py::arg("dilation"),
                                py::arg("weight"), py::arg("bias"), py::arg("activation"), py::arg("alpha"),
                                py::arg("beta"))
                        .def("_set_params", &conv_op::set_params, py::arg("weight"), py::arg("bias"))
                        .def("__call__", &conv_op::call, py::arg("input"), py::arg("sum_into") = none);
    def_cache_queries(conv);

    auto bn = py::class_<bnorm_op>(m, "_BatchNorm", "the compiled base of blockdnn.nn.BatchNorm1d/2d/3d")
                      .def(py::init<std::string, dim_t, std::vector<int>, float, py::handle, py::handle, py::handle,
                                   py::handle>(),
                              py::arg("name"), py::arg("num_features"), py::arg("ranks"), py::arg("eps"),
                              py::arg("weight"), py::arg("bias"), py::arg("running_mean"), py::arg("running_var"))
                      .def("_set_params", &bnorm_op::set_params, py::arg("weight"), py::arg("bias"),
                              py::arg("running_mean"), py::arg("running_var"))
                      .def("__call__", &bnorm_op::call, py::arg("input"));
    def_cache_queries(bn);

    auto pool = py::class_<pool_op>(m, "_Pool", "the compiled base of blockdnn.nn's pooling classes")
                        .def(py::init<std::string, const std::string &, std::vector<dim_t>, std::vector<dim_t>,
                                     std::vector<dim_t>, std::vector<dim_t>, bool, std::vector<dim_t>>(),
                                py::arg("name"), py::arg("alg"), py::arg("kernel_size"), py::arg("stride"),
                                py::arg("padding"), py::arg("dilation"), py::arg("ceil_mode"), py::arg("output_size"))
                        .def("__call__", &pool_op::call, py::arg("input"));
    def_cache_queries(pool);

    auto linear =
            py::class_<linear_op>(m, "_Linear", "the compiled base of blockdnn.nn.Linear")
                    .def(py::init<std::string, dim_t, dim_t, py::handle, py::handle, const opt_str &, float, float>(),
                            py::arg("name"), py::arg("in_features"), py::arg("out_features"), py::arg("weight"),
                            py::arg("bias"), py::arg("activation"), py::arg("alpha"), py::arg("beta"))
                    .def("_set_params", &linear_op::set_params, py::arg("weight"), py::arg("bias"))
                    .def("__call__", &linear_op::call, py::arg("input"));
    def_cache_queries(linear);

    auto eltwise = py::class_<eltwise_op>(m, "_Eltwise", "the compiled base of blockdnn.nn's activations")
                           .def(py::init<std::string, const std::string &, float, float, bool>(), py::arg("name"),
                                   py::arg("alg"), py::arg("alpha"), py::arg("beta"), py::arg("inplace"))
                           .def("__call__", &eltwise_op::call, py::arg("input"));
    def_cache_queries(eltwise);

    auto softmax = py::class_<softmax_op>(m, "_Softmax", "the compiled base of blockdnn.nn.Softmax")
                           .def(py::init<std::string, int>(), py::arg("name"), py::arg("dim"))
                           .def("__call__", &softmax_op::call, py::arg("input"));
    def_cache_queries(softmax);

    m.def(
            "empty_cache", [] { results().clear(); },
            "Releases the memory blockdnn.nn keeps for reuse by later results (held results keep theirs).");
    m.def(
            "cached_result_bytes", [] { return results().free_bytes(); },
            "Bytes of result memory blockdnn.nn keeps for reuse and no result holds now.");
    m.def(
            "flatten", [](const tensor &x, int start_dim, int end_dim) { return flatten(x, start_dim, end_dim); },
            py::arg("x"), py::arg("start_dim") = 1, py::arg("end_dim") = -1,
            "x (a blockdnn.Tensor) with dims start_dim..end_dim merged, as torch.flatten; plain");
    m.def("fold_bn", &fold_bn, py::arg("weight"), py::arg("bias"), py::arg("running_mean"), py::arg("running_var"),
            py::arg("bn_weight"), py::arg("bn_bias"), py::arg("eps"),
            R"(Conv weights (out, in/groups, k...) and bias (None: zeros) with an inference batch norm
folded in: returns (weight, bias) as new torch tensors such that conv(x) with them equals
bn(conv(x)). bn_weight / bn_bias None: 1 / 0 (affine=False).)");
}

} // namespace blockdnn::python
