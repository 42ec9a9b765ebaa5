// SPDX-License-Identifier: Apache-2.0
// The op objects' shared pieces (declared in ops_common.hpp: arguments in and results out, the
// parameters' copies, the pool of result memory, the checks of an input) and the ops that need
// nothing more: BatchNorm, Eltwise and Softmax, the compiled bases of blockdnn.nn's classes, with
// blockdnn.nn's helpers empty_cache, cached_result_bytes and flatten. Conv, Linear and fold_bn
// (the ops with weights) are in py_conv.cpp, pooling in py_pool.cpp.
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "ops_common.hpp"

namespace blockdnn::python {

namespace {

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

// torch.utils.dlpack.from_dlpack, looked up once; its reference is kept for the process's life
// (the module is not unloaded before the interpreter ends).
py::handle torch_from_dlpack() {
    static py::handle fn = py::object(py::module_::import("torch.utils.dlpack").attr("from_dlpack")).release();
    return fn;
}

} // namespace

// ------------------------------------------------------------------ ops_common.hpp's functions

bool is_channels_last(format_tag tag) {
    return tag == format_tag::nwc || tag == format_tag::nhwc || tag == format_tag::ndhwc;
}

tensor as_tensor_detached(py::handle x, const char *arg) {
    if (!py::isinstance<tensor>(x) && py::getattr(x, "requires_grad", py::none()).ptr() == Py_True)
        return as_tensor(x.attr("detach")(), arg);
    return as_tensor(x, arg);
}

input_t take(py::handle x, const char *arg) { return {as_tensor_detached(x, arg), py::isinstance<tensor>(x)}; }

py::object give(const tensor &dst, bool as_blockdnn) {
    py::object t = py::cast(dst);
    if (as_blockdnn) return t;
    return torch_from_dlpack()(t.attr("__dlpack__")());
}

bool is_row_major(const tensor_desc &desc) { return desc.tag() == plain_tag_of_rank(desc.ndims()); }

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

tensor result(const tensor_desc &desc) { return results().get(desc); }

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

dim_t checked_extent(
        const std::string &name, const char *what, const tensor_desc &src, int j, dim_t k, dim_t dil, dim_t pad) {
    const dim_t i = src.dim(2 + j), ext = (k - 1) * dil + 1;
    if (i + pad < ext)
        throw py::value_error(name + ": the " + what + " (extent " + std::to_string(ext) + " with dilation "
                + std::to_string(dil) + ") is larger than input size " + std::to_string(i) + " plus padding "
                + std::to_string(pad) + " in input of shape " + shape_text(src.dims()));
    return ext;
}

const char *act_dims_text(int ndims) {
    switch (ndims) {
    case 3: return "(N, C, L)";
    case 4: return "(N, C, H, W)";
    default: return "(N, C, D, H, W)";
    }
}

namespace {

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

} // namespace

void bind_ops(py::module_ &m) {
    auto bn = py::class_<bnorm_op>(m, "_BatchNorm", "the compiled base of blockdnn.nn.BatchNorm1d/2d/3d")
                      .def(py::init<std::string, dim_t, std::vector<int>, float, py::handle, py::handle, py::handle,
                                   py::handle>(),
                              py::arg("name"), py::arg("num_features"), py::arg("ranks"), py::arg("eps"),
                              py::arg("weight"), py::arg("bias"), py::arg("running_mean"), py::arg("running_var"))
                      .def("_set_params", &bnorm_op::set_params, py::arg("weight"), py::arg("bias"),
                              py::arg("running_mean"), py::arg("running_var"))
                      .def("__call__", &bnorm_op::call, py::arg("input"));
    def_cache_queries(bn);

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
}

} // namespace blockdnn::python
