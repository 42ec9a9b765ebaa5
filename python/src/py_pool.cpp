// SPDX-License-Identifier: Apache-2.0
// Pooling as a Python object: max and average pooling with PyTorch's arguments, and adaptive
// pooling, in the compiled base of blockdnn.nn's pooling classes. What the op objects share is
// in ops_common.hpp.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "ops_common.hpp"

namespace blockdnn::python {

namespace {

// The work layout of an op that runs best blocked, for an input in `tag`: a plain nc[d][h]w
// input is reordered into the preferred blocked layout and the result back; blocked and
// channels-last inputs are used as they are.
format_tag work_tag_for(const tensor_desc &src) {
    if (src.is_blocked() || is_channels_last(src.tag()) || src.ndims() < 3) return src.tag();
    return blocked_tag_for(src);
}

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
            const dim_t k = k_[j], s = s_[j], p = p_[j];
            if (s <= 0 || p < 0 || dil_[j] <= 0 || k <= 0)
                throw py::value_error(
                        name_ + ": kernel_size, stride and dilation must be positive, padding not negative");
            const dim_t ext = checked_extent(name_, "window", src, j, k, dil_[j], 2 * p);
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

} // namespace

void bind_pool(py::module_ &m) {
    auto pool = py::class_<pool_op>(m, "_Pool", "the compiled base of blockdnn.nn's pooling classes")
                        .def(py::init<std::string, const std::string &, std::vector<dim_t>, std::vector<dim_t>,
                                     std::vector<dim_t>, std::vector<dim_t>, bool, std::vector<dim_t>>(),
                                py::arg("name"), py::arg("alg"), py::arg("kernel_size"), py::arg("stride"),
                                py::arg("padding"), py::arg("dilation"), py::arg("ceil_mode"), py::arg("output_size"))
                        .def("__call__", &pool_op::call, py::arg("input"));
    def_cache_queries(pool);
}

} // namespace blockdnn::python
