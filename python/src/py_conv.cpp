// SPDX-License-Identifier: Apache-2.0
// The ops with weights as Python objects: Conv (with sum_into, a residual add) and Linear, the
// compiled bases of blockdnn.nn.Conv1d/2d/3d and blockdnn.nn.Linear, and fold_bn, which folds
// an inference batch norm into conv weights. What the op objects share is in ops_common.hpp.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "ops_common.hpp"

namespace blockdnn::python {

namespace {

// True if the memory of `a` and `b` (their whole extents, padding included) overlaps.
bool overlap(const tensor &a, const tensor &b) {
    const auto *pa = static_cast<const char *>(a.data()), *pb = static_cast<const char *>(b.data());
    return pa < pb + b.desc().size_bytes() && pb < pa + a.desc().size_bytes();
}

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
                // Checked here, in PyTorch's terms: the library's message counts dilation from 0.
                checked_extent(name_, "kernel", src, j, k_[j], dil_[j], p_[j] + p_r_[j]);
                *f[0] = src.dim(2 + j);
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

// ------------------------------------------------------------------ fold_bn

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

} // namespace

void bind_conv(py::module_ &m) {
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

    auto linear =
            py::class_<linear_op>(m, "_Linear", "the compiled base of blockdnn.nn.Linear")
                    .def(py::init<std::string, dim_t, dim_t, py::handle, py::handle, const opt_str &, float, float>(),
                            py::arg("name"), py::arg("in_features"), py::arg("out_features"), py::arg("weight"),
                            py::arg("bias"), py::arg("activation"), py::arg("alpha"), py::arg("beta"))
                    .def("_set_params", &linear_op::set_params, py::arg("weight"), py::arg("bias"))
                    .def("__call__", &linear_op::call, py::arg("input"));
    def_cache_queries(linear);

    m.def("fold_bn", &fold_bn, py::arg("weight"), py::arg("bias"), py::arg("running_mean"), py::arg("running_var"),
            py::arg("bn_weight"), py::arg("bn_bias"), py::arg("eps"),
            R"(Conv weights (out, in/groups, k...) and bias (None: zeros) with an inference batch norm
folded in: returns (weight, bias) as new torch tensors such that conv(x) with them equals
bn(conv(x)). bn_weight / bn_bias None: 1 / 0 (affine=False).)");
}

} // namespace blockdnn::python
