// SPDX-License-Identifier: Apache-2.0
// PyTorch's stacks of recurrent layers (num_layers, bidirectional, input_size != hidden_size):
// one single-layer rnn_fwd per layer, each reading the one before through an intermediate
// buffer, the states sliced per layer out of the stack's ldnc tensors.
#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "core/utils.hpp"
#include "ops/op_state.hpp"
#include "ops/rnn/rnn_impl.hpp"
#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"

namespace blockdnn::impl {

namespace {

constexpr const char *op = "rnn_stack_fwd";

struct rnn_stack_state_t : op_state_base_t {
    rnn_desc desc;    // validated; sic and dic filled in
    dim_t n_dirs = 1; // 1 or 2
    std::vector<rnn_fwd> layers;
    tensor_desc src_layer;    // (t, mb, slc) in src_layer_tag
    tensor_desc states;       // (l, d, mb, dhc) ldnc
    tensor_desc layer_states; // (1, d, mb, dhc) ldnc: one layer's slice of `states`
    tensor_desc dst_layer;    // (t, mb, dlc) in dst_layer_tag
    tensor_desc mid;          // (t, mb, dlc) tnc: a layer's output that the next one reads
    bool weights_given = false;
    std::string name; // impl_name's text

    // The names the checks give layer k's weights entry and its tensors' dims, built at
    // creation, so that an execution given the weights formats none unless a check fails.
    struct weights_names_t {
        std::array<std::string, 3> roles; // "weights[k].weights_layer", ".weights_iter", ".bias"
        std::array<std::vector<std::string>, 3> fields;
    };
    std::vector<weights_names_t> weights_names;

    std::string str() const override {
        const rnn_desc &d = desc;
        return cat(to_string(d.cell), ":", to_string(d.direction),
                d.cell == rnn_cell::vanilla_rnn ? cat(":", to_string(d.activation)) : std::string(), " l", d.l, "t",
                d.t, "mb", d.mb, "slc", d.slc, "sic", d.sic, "dhc", d.dhc, "dic", d.dic, " ",
                to_string(d.src_layer_tag), ":", to_string(d.weights_layer_tag), ":", to_string(d.weights_iter_tag),
                ":", to_string(d.dst_layer_tag));
    }
    std::string info() const override {
        std::string s = name;
        for (std::size_t k = 0; k < layers.size(); ++k) s += cat("\nlayer ", k, ": ", layers[k].impl_info());
        return s;
    }
};

// The desc of layer k: one layer, reading slc (k = 0) or the previous layer's dst_layer, and
// writing the stack's dst_layer (last layer) or an intermediate tnc buffer.
rnn_desc layer_desc(const rnn_desc &d, dim_t k, dim_t dlc) {
    rnn_desc ld = d;
    ld.l = 1;
    ld.slc = k == 0 ? d.slc : dlc;
    ld.src_layer_tag = k == 0 ? d.src_layer_tag : format_tag::tnc;
    ld.dst_layer_tag = k == d.l - 1 ? d.dst_layer_tag : format_tag::tnc;
    return ld;
}

const char *layer_slc_name(const rnn_stack_state_t &st, dim_t k) {
    if (k == 0) return "slc";
    return st.desc.direction == rnn_direction::bi_concat ? "2 * dhc" : "dhc";
}

void check_k(const rnn_stack_state_t &st, dim_t k, const char *what) {
    if (k < 0 || k >= st.desc.l)
        fail(status::invalid_arguments, op, ": ", what, ": k = ", k, " is outside [0, l = ", st.desc.l, ")");
}

// A tensor given for `role`, checked against `want` when it has memory (or always when
// `required`); `fields` names want's dims for the message.
void check_opt(const char *role, const tensor &t, const tensor_desc &want, std::span<const std::string> fields,
        bool required) {
    if (t.empty() && !required) return;
    if (t.empty()) fail(status::invalid_arguments, op, ": ", role, " is required but has no memory");
    check_arg(op, role, t, want, fields);
}

rnn_stack_state_t::weights_names_t make_weights_names(const rnn_stack_state_t &st, dim_t k) {
    const std::string at = cat("weights[", k, "].");
    return {{at + "weights_layer", at + "weights_iter", at + "bias"},
            {{{"l", "directions", layer_slc_name(st, k), "gates", "dhc"}, {"l", "directions", "dhc", "gates", "dhc"},
                    {"l", "directions", "bias gates", "dhc"}}}};
}

// Checks entry k of the per-layer weights against the descriptors of layer k's tensors.
void check_layer_weights(const rnn_stack_state_t &st, dim_t k, const rnn_layer_weights &w, const tensor_desc &wl,
        const tensor_desc &wi, const tensor_desc &b) {
    const rnn_stack_state_t::weights_names_t &n = st.weights_names[static_cast<std::size_t>(k)];
    check_opt(n.roles[0].c_str(), w.weights_layer, wl, n.fields[0], true);
    check_opt(n.roles[1].c_str(), w.weights_iter, wi, n.fields[1], true);
    check_opt(n.roles[2].c_str(), w.bias, b, n.fields[2], false);
}

void check_layer_weights(const rnn_stack_state_t &st, dim_t k, const rnn_layer_weights &w) {
    const rnn_fwd &lay = st.layers[static_cast<std::size_t>(k)];
    check_layer_weights(st, k, w, lay.weights_layer_desc(), lay.weights_iter_desc(), lay.bias_desc());
}

void check_weights_count(const rnn_stack_state_t &st, std::size_t n) {
    if (static_cast<dim_t>(n) != st.desc.l)
        fail(status::invalid_arguments, op, ": weights has ", n, " entries, expected one per layer, l = ", st.desc.l);
}

std::shared_ptr<rnn_stack_state_t> create_state(
        const rnn_desc &in, std::span<const rnn_layer_weights> weights, bool with_weights) {
    validate_rnn_desc(in, op, true);
    auto st = std::make_shared<rnn_stack_state_t>();
    rnn_desc &d = st->desc;
    d = in;
    if (d.sic == 0) d.sic = d.dhc;
    if (d.dic == 0) d.dic = d.dhc;
    st->n_dirs = rnn_n_dirs(d.direction);
    const dim_t dlc = d.direction == rnn_direction::bi_concat ? 2 * d.dhc : d.dhc;
    st->src_layer = make_arg_desc(op, "src_layer", {d.t, d.mb, d.slc}, d.src_layer_tag);
    st->states = make_arg_desc(op, "src_iter", {d.l, st->n_dirs, d.mb, d.dhc}, format_tag::ldnc);
    st->layer_states = tensor_desc({1, st->n_dirs, d.mb, d.dhc}, format_tag::ldnc);
    st->dst_layer = make_arg_desc(op, "dst_layer", {d.t, d.mb, dlc}, d.dst_layer_tag);
    st->mid = tensor_desc({d.t, d.mb, dlc}, format_tag::tnc);
    if (with_weights) check_weights_count(*st, weights.size());
    for (dim_t k = 0; k < d.l; ++k) st->weights_names.push_back(make_weights_names(*st, k));
    st->layers.reserve(static_cast<std::size_t>(d.l));
    for (dim_t k = 0; k < d.l; ++k) {
        const rnn_desc ld = layer_desc(d, k, dlc);
        if (!with_weights) {
            st->layers.emplace_back(ld);
            continue;
        }
        // Checked here, so that the messages name the entry, before rnn_fwd reads them.
        const rnn_layer_weights &w = weights[static_cast<std::size_t>(k)];
        const rnn_prb_t p = make_rnn_prb(ld);
        check_layer_weights(*st, k, w, p.wei_layer, p.wei_iter, p.bias);
        st->layers.emplace_back(ld, w.weights_layer, w.weights_iter, w.bias);
    }
    st->weights_given = with_weights;
    st->name = st->layers[0].impl_name();
    bool same = true;
    for (const rnn_fwd &lay : st->layers) same = same && std::string(lay.impl_name()) == st->name;
    if (!same) {
        st->name.clear();
        for (const rnn_fwd &lay : st->layers) {
            if (!st->name.empty()) st->name += '+';
            st->name += lay.impl_name();
        }
    }
    st->impl_name = st->name.c_str();
    return st;
}

// Layer k's slice (1, d, mb, dhc) of a stack state tensor (l, d, mb, dhc), sharing its memory.
tensor layer_slice(const rnn_stack_state_t &st, const tensor &t, dim_t k) {
    if (t.empty()) return {};
    const dim_t idx[] = {k, 0, 0, 0};
    return tensor(st.layer_states, t.f32() + t.desc().offset(idx));
}

} // namespace

} // namespace blockdnn::impl

namespace blockdnn {

using namespace impl;

rnn_stack_fwd::rnn_stack_fwd(const rnn_desc &desc) : primitive(create_state(desc, {}, false)) {}

rnn_stack_fwd::rnn_stack_fwd(const rnn_desc &desc, std::span<const rnn_layer_weights> weights)
    : primitive(create_state(desc, weights, true)) {}

const rnn_desc &rnn_stack_fwd::desc() const { return state<rnn_stack_state_t>().desc; }
dim_t rnn_stack_fwd::n_dirs() const { return state<rnn_stack_state_t>().n_dirs; }

dim_t rnn_stack_fwd::layer_slc(dim_t k) const { return layer(k).desc().slc; }

const rnn_fwd &rnn_stack_fwd::layer(dim_t k) const {
    const rnn_stack_state_t &st = state<rnn_stack_state_t>();
    check_k(st, k, "layer");
    return st.layers[static_cast<std::size_t>(k)];
}

tensor_desc rnn_stack_fwd::src_layer_desc() const { return state<rnn_stack_state_t>().src_layer; }
tensor_desc rnn_stack_fwd::src_iter_desc() const { return state<rnn_stack_state_t>().states; }
tensor_desc rnn_stack_fwd::dst_layer_desc() const { return state<rnn_stack_state_t>().dst_layer; }
tensor_desc rnn_stack_fwd::weights_layer_desc(dim_t k) const { return layer(k).weights_layer_desc(); }
tensor_desc rnn_stack_fwd::weights_iter_desc(dim_t k) const { return layer(k).weights_iter_desc(); }
tensor_desc rnn_stack_fwd::bias_desc(dim_t k) const { return layer(k).bias_desc(); }

void rnn_stack_fwd::execute(const rnn_stack_fwd_args &a) const {
    const rnn_stack_state_t &st = state<rnn_stack_state_t>();
    const rnn_desc &d = st.desc;
    const bool lstm = d.cell == rnn_cell::lstm;
    if (!lstm && !a.src_iter_c.empty())
        fail(status::invalid_arguments, op, ": src_iter_c is given but cell ", to_string(d.cell), " has no cell state");
    if (!lstm && !a.dst_iter_c.empty())
        fail(status::invalid_arguments, op, ": dst_iter_c is given but cell ", to_string(d.cell), " has no cell state");
    static const std::array<std::string, 4> state_fields = {"l", "directions", "mb", "dhc"};
    static const std::array<std::string, 3> src_layer_fields = {"t", "mb", "slc"};
    static const std::array<std::string, 3> dst_layer_fields = {"t", "mb", "dhc"},
                                            dst_concat_fields = {"t", "mb", "2 * dhc"};
    check_opt("src_layer", a.src_layer, st.src_layer, src_layer_fields, true);
    check_opt("src_iter", a.src_iter, st.states, state_fields, false);
    check_opt("src_iter_c", a.src_iter_c, st.states, state_fields, false);
    if (st.weights_given) {
        if (!a.weights.empty())
            fail(status::invalid_arguments, op, ": weights has ", a.weights.size(),
                    " entries but the weights were given at creation; leave it empty");
    } else {
        check_weights_count(st, a.weights.size());
        for (dim_t k = 0; k < d.l; ++k) check_layer_weights(st, k, a.weights[static_cast<std::size_t>(k)]);
    }
    check_opt("dst_layer", a.dst_layer, st.dst_layer,
            d.direction == rnn_direction::bi_concat ? dst_concat_fields : dst_layer_fields, true);
    check_opt("dst_iter", a.dst_iter, st.states, state_fields, false);
    check_opt("dst_iter_c", a.dst_iter_c, st.states, state_fields, false);

    check_outputs_alone(op, {{"dst_layer", a.dst_layer}, {"dst_iter", a.dst_iter}, {"dst_iter_c", a.dst_iter_c}},
            {{"src_layer", a.src_layer}, {"src_iter", a.src_iter}, {"src_iter_c", a.src_iter_c}});
    for (std::size_t k = 0; k < a.weights.size(); ++k) {
        const rnn_layer_weights &w = a.weights[k];
        const std::array<std::string, 3> &roles = st.weights_names[k].roles;
        const std::pair<const char *, const tensor *> ins[] = {
                {roles[0].c_str(), &w.weights_layer}, {roles[1].c_str(), &w.weights_iter}, {roles[2].c_str(), &w.bias}};
        for (const auto &[role, t] : ins) {
            check_no_overlap(op, "dst_layer", a.dst_layer, role, *t);
            check_no_overlap(op, "dst_iter", a.dst_iter, role, *t);
            check_no_overlap(op, "dst_iter_c", a.dst_iter_c, role, *t);
        }
    }

    // The work holds copies of the tensors (they share ownership of the memory) and runs the
    // layers one after another; each layer's execute runs inline there, since inside queued
    // work the current stream is the default one.
    launch(
            {op, nullptr, effective_isa(), shared_state()},
            {&a.src_layer, &a.src_iter, &a.src_iter_c, &a.dst_layer, &a.dst_iter, &a.dst_iter_c},
            [&] { return st.str(); },
            [stp = &st, a] {
                const rnn_stack_state_t &s = *stp;
                const dim_t L = s.desc.l;
                // Two buffers at most: layer k writes mid[k % 2] while it reads mid[(k - 1) % 2].
                // Per execution, so that executions running at once do not share them.
                tensor mid[2];
                oom_as_error(op, "allocating the intermediate layer outputs", [&] {
                    for (dim_t k = 0; k < std::min<dim_t>(L - 1, 2); ++k) mid[k] = tensor(s.mid);
                });
                for (dim_t k = 0; k < L; ++k) {
                    rnn_fwd_args la;
                    la.src_layer = k == 0 ? a.src_layer : mid[(k - 1) % 2];
                    la.dst_layer = k == L - 1 ? a.dst_layer : mid[k % 2];
                    la.src_iter = layer_slice(s, a.src_iter, k);
                    la.src_iter_c = layer_slice(s, a.src_iter_c, k);
                    la.dst_iter = layer_slice(s, a.dst_iter, k);
                    la.dst_iter_c = layer_slice(s, a.dst_iter_c, k);
                    if (!s.weights_given) {
                        const rnn_layer_weights &w = a.weights[static_cast<std::size_t>(k)];
                        la.weights_layer = w.weights_layer;
                        la.weights_iter = w.weights_iter;
                        la.bias = w.bias;
                    }
                    s.layers[static_cast<std::size_t>(k)].execute(la);
                }
            });
}

} // namespace blockdnn
