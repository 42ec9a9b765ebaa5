// SPDX-License-Identifier: Apache-2.0
// RNN forward's public side: the table, the problem, the checks of each execution's tensors
// (before anything is written), the descriptors of the tensors, and dispatch.
#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "core/verbose.hpp"
#include "ops/rnn/rnn_jit.hpp"
#include "ops/rnn/rnn_impl.hpp"
#include "ops/op_state.hpp"
#include "tensor/layout.hpp"

namespace blockdnn::impl {

namespace {

constexpr const char *op = "rnn_fwd";

constexpr rnn_row_t impls[] = {
        {"jit:avx512_core", isa::avx512_core, create_rnn_fwd_jit<isa::avx512_core>},
        {"jit:avx2", isa::avx2, create_rnn_fwd_jit<isa::avx2>},
        {"ref", isa::scalar, create_any<create_rnn_fwd_ref>},
};

} // namespace

rnn_prb_t make_rnn_prb(const rnn_desc &in) {
    rnn_prb_t p;
    p.desc = in;
    rnn_desc &d = p.desc;
    d.validate();
    if (d.sic == 0) d.sic = d.dhc;
    if (d.dic == 0) d.dic = d.dhc;

    p.n_dirs = rnn_n_dirs(d.direction);
    p.n_gates = rnn_n_gates(d.cell);
    p.n_bias_gates = rnn_n_bias_gates(d.cell);
    p.dlc = d.direction == rnn_direction::bi_concat ? 2 * d.dhc : d.dhc;
    // tensor_desc throws (naming the dim) if a product overflows int64.
    p.src_layer = tensor_desc({d.t, d.mb, d.slc}, d.src_layer_tag);
    p.states = tensor_desc({d.l, p.n_dirs, d.mb, d.dhc}, format_tag::ldnc);
    p.wei_layer = tensor_desc({d.l, p.n_dirs, d.slc, p.n_gates, d.dhc}, d.weights_layer_tag);
    p.wei_iter = tensor_desc({d.l, p.n_dirs, d.sic, p.n_gates, d.dhc}, d.weights_iter_tag);
    p.bias = tensor_desc({d.l, p.n_dirs, p.n_bias_gates, d.dhc}, format_tag::ldgo);
    p.dst_layer = tensor_desc({d.t, d.mb, p.dlc}, d.dst_layer_tag);
    return p;
}

namespace {

// Checks a tensor given for `field` against the expected descriptor; `names` are the
// benchdnn names of the expected dims, for the message.
const float *check_tensor(const tensor &t, const char *field, const tensor_desc &want,
        std::initializer_list<const char *> names, bool required) {
    if (t.empty()) {
        if (required) fail(status::invalid_arguments, op, ": ", field, " is required but has no memory");
        return nullptr;
    }
    const tensor_desc &got = t.desc();
    if (got.tag() != want.tag())
        fail(status::invalid_arguments, op, ": ", field, " layout ", to_string(got.tag()), " (", got.str(),
                "), expected ", to_string(want.tag()), " (", want.str(), ")");
    int d = 0;
    for (const char *name : names) {
        if (got.dim(d) != want.dim(d))
            fail(status::invalid_arguments, op, ": ", field, " dims[", d, "] (", got.dim_name(d), ") = ", got.dim(d),
                    ", expected ", name, " = ", want.dim(d));
        ++d;
    }
    if (got.dt() != want.dt())
        fail(status::invalid_arguments, op, ": ", field, " data type ", to_string(got.dt()), ", expected ",
                to_string(want.dt()));
    return t.f32();
}

struct rnn_fwd_state_t : op_state_t<rnn_prb_t, rnn_impl_t> {
    bool weights_given = false; // the implementation holds the weights given at creation
};

std::shared_ptr<rnn_fwd_state_t> create_state(const rnn_desc &desc) {
    return create_op_state<rnn_fwd_state_t>(op, rnn_fwd_impls(), make_rnn_prb(desc));
}

std::shared_ptr<rnn_fwd_state_t> create_state_with_weights(
        const rnn_desc &desc, const tensor &weights_layer, const tensor &weights_iter, const tensor &bias) {
    std::shared_ptr<rnn_fwd_state_t> st = create_state(desc);
    const rnn_prb_t &p = st->prb;
    const float *wl =
            check_tensor(weights_layer, "weights_layer", p.wei_layer, {"l", "directions", "slc", "gates", "dhc"}, true);
    const float *wi =
            check_tensor(weights_iter, "weights_iter", p.wei_iter, {"l", "directions", "sic", "gates", "dhc"}, true);
    const float *b = check_tensor(bias, "bias", p.bias, {"l", "directions", "bias gates", "dhc"}, false);
    wait_for_current_stream(); // the weights are read now
    rnn_args_t weights;
    weights.wei_layer = wl;
    weights.wei_iter = wi;
    weights.bias = b;
    st->impl->take_weights(weights);
    st->weights_given = true;
    return st;
}

} // namespace

std::string to_string(const rnn_prb_t &p) {
    const rnn_desc &d = p.desc;
    return cat(to_string(d.cell), ":", to_string(d.direction),
            d.cell == rnn_cell::vanilla_rnn ? cat(":", to_string(d.activation)) : std::string(), " l", d.l, "t", d.t,
            "mb", d.mb, "slc", d.slc, "sic", d.sic, "dhc", d.dhc, "dic", d.dic, " ", to_string(d.src_layer_tag), ":",
            to_string(d.weights_layer_tag), ":", to_string(d.weights_iter_tag), ":", to_string(d.dst_layer_tag));
}

std::span<const rnn_row_t> rnn_fwd_impls() { return impls; }

} // namespace blockdnn::impl

namespace blockdnn {

using namespace impl;

rnn_fwd::rnn_fwd(const rnn_desc &desc) : primitive(create_state(desc)) {}

rnn_fwd::rnn_fwd(const rnn_desc &desc, const tensor &weights_layer, const tensor &weights_iter, const tensor &bias)
    : primitive(create_state_with_weights(desc, weights_layer, weights_iter, bias)) {}

const rnn_desc &rnn_fwd::desc() const { return state<rnn_fwd_state_t>().prb.desc; }
dim_t rnn_fwd::n_dirs() const { return state<rnn_fwd_state_t>().prb.n_dirs; }
tensor_desc rnn_fwd::src_layer_desc() const { return state<rnn_fwd_state_t>().prb.src_layer; }
tensor_desc rnn_fwd::src_iter_desc() const { return state<rnn_fwd_state_t>().prb.states; }
tensor_desc rnn_fwd::weights_layer_desc() const { return state<rnn_fwd_state_t>().prb.wei_layer; }
tensor_desc rnn_fwd::weights_iter_desc() const { return state<rnn_fwd_state_t>().prb.wei_iter; }
tensor_desc rnn_fwd::bias_desc() const { return state<rnn_fwd_state_t>().prb.bias; }
tensor_desc rnn_fwd::dst_layer_desc() const { return state<rnn_fwd_state_t>().prb.dst_layer; }

void rnn_fwd::execute(const rnn_fwd_args &a) const {
    const rnn_fwd_state_t &st = state<rnn_fwd_state_t>();
    const rnn_prb_t &p = st.prb;
    const rnn_desc &d = p.desc;
    const bool lstm = d.cell == rnn_cell::lstm;
    if (!lstm && !a.src_iter_c.empty())
        fail(status::invalid_arguments, op, ": src_iter_c is given but cell ", to_string(d.cell), " has no cell state");
    if (!lstm && !a.dst_iter_c.empty())
        fail(status::invalid_arguments, op, ": dst_iter_c is given but cell ", to_string(d.cell), " has no cell state");
    const auto data_names = {"t", "mb", "slc"};
    const auto state_names = {"l", "directions", "mb", "dhc"};
    rnn_args_t m;
    m.src_layer = check_tensor(a.src_layer, "src_layer", p.src_layer, data_names, true);
    m.src_iter = check_tensor(a.src_iter, "src_iter", p.states, state_names, false);
    m.src_iter_c = check_tensor(a.src_iter_c, "src_iter_c", p.states, state_names, false);
    if (st.weights_given) {
        const std::pair<const tensor *, const char *> given[] = {
                {&a.weights_layer, "weights_layer"}, {&a.weights_iter, "weights_iter"}, {&a.bias, "bias"}};
        for (const auto &[t, name] : given)
            if (!t->empty())
                fail(status::invalid_arguments, op, ": ", name,
                        " is given but the weights were given at creation; leave it empty");
    } else {
        m.wei_layer = check_tensor(
                a.weights_layer, "weights_layer", p.wei_layer, {"l", "directions", "slc", "gates", "dhc"}, true);
        m.wei_iter = check_tensor(
                a.weights_iter, "weights_iter", p.wei_iter, {"l", "directions", "sic", "gates", "dhc"}, true);
        m.bias = check_tensor(a.bias, "bias", p.bias, {"l", "directions", "bias gates", "dhc"}, false);
    }
    m.dst_layer = const_cast<float *>(
            check_tensor(a.dst_layer, "dst_layer", p.dst_layer, {"t", "mb", p.dlc == d.dhc ? "dhc" : "2 * dhc"}, true));
    m.dst_iter = const_cast<float *>(check_tensor(a.dst_iter, "dst_iter", p.states, state_names, false));
    m.dst_iter_c = const_cast<float *>(check_tensor(a.dst_iter_c, "dst_iter_c", p.states, state_names, false));

    check_outputs_alone(op, {{"dst_layer", a.dst_layer}, {"dst_iter", a.dst_iter}, {"dst_iter_c", a.dst_iter_c}},
            {{"src_layer", a.src_layer}, {"src_iter", a.src_iter}, {"src_iter_c", a.src_iter_c},
                    {"weights_layer", a.weights_layer}, {"weights_iter", a.weights_iter}, {"bias", a.bias}});

    launch(
            {op, st.impl_name, effective_isa(), shared_state()},
            {&a.src_layer, &a.src_iter, &a.src_iter_c, &a.weights_layer, &a.weights_iter, &a.bias, &a.dst_layer,
                    &a.dst_iter, &a.dst_iter_c},
            [&] { return to_string(p); }, [impl = st.impl.get(), m] { impl->execute(m); });
}

} // namespace blockdnn
