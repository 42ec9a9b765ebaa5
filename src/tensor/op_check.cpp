// SPDX-License-Identifier: Apache-2.0
// Argument checks shared by the ops' execute(), and zeroing of blocked padding.
#include <cstdint>

#include "tensor/op_check.hpp"
#include "core/utils.hpp"
#include "tensor/launch.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

void check_arg(const char *op, const char *role, const tensor &t, const tensor_desc &want,
        std::span<const std::string> fields) {
    if (t.empty()) fail(status::invalid_arguments, op, ": ", role, " tensor has no memory");
    const tensor_desc &got = t.desc();
    if (got.dt() != want.dt())
        fail(status::invalid_arguments, op, ": ", role, " data type ", to_string(got.dt()), ", expected ",
                to_string(want.dt()));
    if (got.ndims() != want.ndims())
        fail(status::invalid_arguments, op, ": ", role, " has ", got.ndims(), " dims (", got.str(), "), expected ",
                want.ndims(), " (", want.str(), ")");
    for (int d = 0; d < want.ndims(); ++d)
        if (got.dim(d) != want.dim(d))
            fail(status::invalid_arguments, op, ": ", role, " dims[", d, "] (", got.dim_name(d), ") = ", got.dim(d),
                    ", expected ", d < static_cast<int>(fields.size()) ? fields[d] : cat("dims[", d, "]"), " = ",
                    want.dim(d), " (", role, " is ", got.str(), ", expected ", want.str(), ")");
    if (got.tag() != want.tag())
        fail(status::invalid_arguments, op, ": ", role, " layout ", to_string(got.tag()), " differs from the ",
                to_string(want.tag()), " the op was created with");
}

namespace {
const char *family_name(layout_family f) {
    switch (f) {
    case layout_family::activation: return "an activation";
    case layout_family::weights: return "a weights";
    case layout_family::rnn_data: return "an RNN data";
    case layout_family::rnn_weights: return "an RNN weights";
    }
    return "an unknown";
}
} // namespace

void check_not_any(const char *op, const char *role, format_tag tag) {
    if (tag == format_tag::any)
        fail(status::invalid_arguments, op, ": ", role, " layout is any, which this op does not take: give a layout");
}

void check_tag(const char *op, const char *role, format_tag tag, layout_family family, int ndims) {
    if (tag == format_tag::undef) fail(status::invalid_arguments, op, ": ", role, " layout is undef");
    check_not_any(op, role, tag);
    if (!is_format_tag(tag))
        fail(status::invalid_arguments, op, ": ", role, " layout ", static_cast<int>(tag),
                " is not a format_tag value");
    const layout_info_t &li = layout_info(tag);
    if (li.family != family)
        fail(status::invalid_arguments, op, ": ", role, " layout ", li.name, " is ", family_name(li.family),
                " layout, expected ", family_name(family), " layout");
    if (li.ndims != ndims)
        fail(status::invalid_arguments, op, ": ", role, " layout ", li.name, " has ", li.ndims, " dims, expected ",
                ndims);
}

tensor_desc make_arg_desc(const char *op, const char *role, const dims_t &dims, format_tag tag) {
    try {
        return tensor_desc(dims, tag);
    } catch (const error &e) {
        fail(e.code(), op, ": ", role, ": ", e.what());
    }
}

bool overlaps(const tensor &a, const tensor &b) {
    if (a.empty() || b.empty()) return false;
    const auto a0 = reinterpret_cast<std::uintptr_t>(a.data()), b0 = reinterpret_cast<std::uintptr_t>(b.data());
    const auto a1 = a0 + a.desc().size_bytes(), b1 = b0 + b.desc().size_bytes();
    return a0 < b1 && b0 < a1;
}

bool same_tensor(const tensor &a, const tensor &b) { return a.data() == b.data() && a.desc() == b.desc(); }

void check_no_overlap(const char *op, const char *a_role, const tensor &a, const char *b_role, const tensor &b) {
    if (overlaps(a, b))
        fail(status::invalid_arguments, op, ": ", a_role, " (", a.desc().str(), ") overlaps ", b_role, " (",
                b.desc().str(), ") in memory");
}

void check_outputs_alone(const char *op, std::initializer_list<role_tensor_t> outputs,
        std::initializer_list<role_tensor_t> inputs, std::initializer_list<const tensor *> in_place) {
    std::size_t i = 0;
    for (auto o = outputs.begin(); o != outputs.end(); ++o, ++i) {
        const tensor *may_be = i < in_place.size() ? in_place.begin()[i] : nullptr;
        for (const role_tensor_t &in : inputs)
            if (!(may_be == &in.t && same_tensor(o->t, in.t))) check_no_overlap(op, o->role, o->t, in.role, in.t);
        for (auto o2 = outputs.begin(); o2 != o; ++o2) check_no_overlap(op, o->role, o->t, o2->role, o2->t);
    }
}

void check_bias_arg(const char *op, const tensor &bia, bool with_bias, const tensor_desc &want) {
    if (with_bias && bia.empty())
        fail(status::invalid_arguments, op,
                ": bia tensor has no memory, but the op was created with bias (desc.with_bias = true)");
    static const std::string oc[] = {"oc"};
    if (with_bias) check_arg(op, "bia", bia, want, oc);
    else if (!bia.empty())
        fail(status::invalid_arguments, op, ": a bia tensor (", bia.desc().str(),
                ") was given, but the op was created without bias (desc.with_bias = false)");
}

void check_held_weights(const char *op, bool held, const tensor &wei, const tensor &bia) {
    if (held && (!wei.empty() || !bia.empty()))
        fail(status::invalid_arguments, op,
                ": this op holds the weights given at creation; run it with execute(src, dst) (wei and bia empty)");
    if (!held && wei.empty() && bia.empty())
        fail(status::invalid_arguments, op,
                ": execute(src, dst) needs weights given at creation; this op takes them in execute(src, wei, [bia,] "
                "dst) (wei tensor has no memory)");
}

tensor_desc with_mb(const tensor_desc &d, dim_t mb) {
    dims_t dims = d.dims();
    dims[0] = mb;
    return tensor_desc(dims, d.dt(), d.tag());
}

void hold_weights(const tensor &wei, const tensor &bia, const tensor_desc &wei_desc, const tensor_desc &bia_desc,
        tensor &own_wei, tensor &own_bia) {
    wait_for_current_stream(); // the weights are read now
    own_wei = tensor(wei_desc);
    reorder_now(wei, own_wei);
    if (bia_desc.ndims()) {
        own_bia = tensor(bia_desc);
        reorder_now(bia, own_bia);
    }
}

std::vector<std::string> dim_fields(std::initializer_list<const char *> lead, const char *prefix, int n) {
    std::vector<std::string> v(lead.begin(), lead.end());
    const char *const letters = "dhw";
    for (int k = 3 - n; k < 3; ++k) v.push_back(std::string(prefix) + letters[k]);
    return v;
}

} // namespace blockdnn::impl
