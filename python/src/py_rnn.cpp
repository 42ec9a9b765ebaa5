// SPDX-License-Identifier: Apache-2.0
// blockdnn._blockdnn.RnnStack: PyTorch's nn.RNN / nn.LSTM / nn.GRU on rnn_stack_fwd. The
// weights are imported once, at construction; an op is created (and its weights packed) per
// (seq_len, batch) and kept for the next calls of that shape. python/blockdnn/rnn.py wraps it.
#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "ops_common.hpp"

namespace blockdnn::python {

namespace {

rnn_cell cell_from_string(const std::string &s) {
    if (s == "vanilla_rnn") return rnn_cell::vanilla_rnn;
    if (s == "lstm") return rnn_cell::lstm;
    if (s == "gru") return rnn_cell::gru;
    if (s == "lbr_gru") return rnn_cell::lbr_gru;
    throw py::value_error("RnnStack: cell = '" + s + "' is not one of vanilla_rnn, lstm, gru, lbr_gru");
}

eltwise_alg activation_from_string(const std::string &s) {
    if (s == "tanh") return eltwise_alg::tanh;
    if (s == "relu") return eltwise_alg::relu;
    throw py::value_error("RnnStack: nonlinearity = '" + s + "' is not one of tanh, relu");
}

// t, a dense row-major view of memory whose shape is `phys`, described as `want` (a layout
// whose memory order is `phys`: ntc for (batch, seq, channels), ldnc for (layers * dirs,
// batch, hidden) seen as (l, d, mb, dhc), ...), sharing and keeping alive t's memory.
tensor view_rows(const tensor &t, const dims_t &phys, const tensor_desc &want, const char *arg) {
    const tensor_desc &d = t.desc();
    bool ok = !d.is_blocked() && d.dims() == phys;
    dim_t stride = 1;
    for (int k = static_cast<int>(phys.size()) - 1; ok && k >= 0; --k) {
        ok = phys[k] == 1 || d.stride(k) == stride;
        stride *= phys[k];
    }
    if (!ok)
        throw py::value_error(
                std::string(arg) + ": expected a contiguous tensor of shape " + shape_text(phys) + ", got " + d.str());
    return rewrap(t, want);
}

// The stack, the weights it was built with and the ops made for each shape so far.
class rnn_stack_t {
public:
    rnn_stack_t(const std::string &cell, const std::string &nonlinearity, dim_t num_layers, bool bidirectional,
            dim_t input_size, dim_t hidden_size, bool batch_first, const py::list &params) {
        desc_.cell = cell_from_string(cell);
        desc_.activation = activation_from_string(nonlinearity);
        desc_.direction = bidirectional ? rnn_direction::bi_concat : rnn_direction::l2r;
        desc_.l = num_layers;
        desc_.slc = input_size;
        desc_.dhc = hidden_size;
        batch_first_ = batch_first;
        desc_.src_layer_tag = desc_.dst_layer_tag = batch_first ? format_tag::ntc : format_tag::tnc;
        // The op of a one-step, one-row problem gives the weights' descriptors; it also checks
        // the sizes, with the library's messages.
        desc_.t = desc_.mb = 1;
        const rnn_stack_fwd probe(desc_);
        impl_name_ = probe.impl_name();
        const dim_t dirs = probe.n_dirs();
        if (static_cast<dim_t>(py::len(params)) != num_layers * dirs)
            throw py::value_error("RnnStack: params has " + std::to_string(py::len(params))
                    + " entries, expected num_layers * directions = " + std::to_string(num_layers * dirs));
        for (dim_t k = 0; k < num_layers; ++k)
            weights_.push_back({tensor(probe.weights_layer_desc(k)), tensor(probe.weights_iter_desc(k)),
                    tensor(probe.bias_desc(k))});
        // PyTorch's (w_ih, w_hh, b_ih, b_hh) of each layer and direction, viewed in place.
        std::vector<std::array<tensor, 4>> given;
        for (dim_t k = 0; k < num_layers; ++k)
            for (dim_t dir = 0; dir < dirs; ++dir) {
                const py::tuple p = params[static_cast<std::size_t>(k * dirs + dir)].cast<py::tuple>();
                if (p.size() != 4)
                    throw py::value_error("RnnStack: params[" + std::to_string(k * dirs + dir)
                            + "] must be (w_ih, w_hh, b_ih, b_hh), got " + std::to_string(p.size()) + " items");
                const std::string sfx = "_l" + std::to_string(k) + (dir ? "_reverse" : "");
                const std::string names[] = {"weight_ih" + sfx, "weight_hh" + sfx, "bias_ih" + sfx, "bias_hh" + sfx};
                given.push_back({view_as(as_tensor(p[0], names[0].c_str()), format_tag::oi, names[0].c_str()),
                        view_as(as_tensor(p[1], names[1].c_str()), format_tag::oi, names[1].c_str()),
                        p[2].is_none() ? tensor() : as_tensor(p[2], names[2].c_str()),
                        p[3].is_none() ? tensor() : as_tensor(p[3], names[3].c_str())});
            }
        // The imports touch no Python object, so other Python threads run meanwhile; `given`
        // outlives the release, so the views are handed back with the GIL. They run now, on
        // the calling thread, whatever stream is current: the ops made later read these
        // tensors without waiting for any stream.
        py::gil_scoped_release nogil;
        stream_scope now(default_stream());
        for (dim_t k = 0; k < num_layers; ++k)
            for (dim_t dir = 0; dir < dirs; ++dir) {
                const std::array<tensor, 4> &p = given[static_cast<std::size_t>(k * dirs + dir)];
                const rnn_layer_weights &w = weights_[static_cast<std::size_t>(k)];
                rnn_import_weights(rnn_framework::pytorch, desc_.cell, p[0], w.weights_layer, 0, dir);
                rnn_import_weights(rnn_framework::pytorch, desc_.cell, p[1], w.weights_iter, 0, dir);
                rnn_import_bias(rnn_framework::pytorch, desc_.cell, p[2], p[3], w.bias, 0, dir);
            }
    }

    // Runs the stack: x is (seq, batch, input) or, batch_first, (batch, seq, input); h0 / c0
    // (may be None) and h_n / c_n (None: not written) are (layers * dirs, batch, hidden); out is
    // x's shape with dirs * hidden channels. All contiguous float32.
    void run(py::handle x, py::handle h0, py::handle c0, py::handle out, py::handle h_n, py::handle c_n) {
        const tensor tx = as_tensor(x, "input");
        if (tx.desc().ndims() != 3) throw py::value_error("input: expected 3 dims, got " + tx.desc().str());
        const dim_t t = tx.desc().dim(batch_first_ ? 1 : 0), mb = tx.desc().dim(batch_first_ ? 0 : 1);
        const std::shared_ptr<const rnn_stack_fwd> op = op_for(t, mb);
        const rnn_desc &d = op->desc();
        const dim_t dirs = op->n_dirs(), dlc = op->dst_layer_desc().dim(2);
        auto data_dims = [&](dim_t c) { return batch_first_ ? dims_t {mb, t, c} : dims_t {t, mb, c}; };
        const dims_t state_dims {d.l * dirs, mb, d.dhc};
        auto state = [&](py::handle obj, const char *arg) {
            if (obj.is_none()) return tensor();
            return view_rows(as_tensor(obj, arg), state_dims, op->src_iter_desc(), arg);
        };
        rnn_stack_fwd_args a;
        a.src_layer = view_rows(tx, data_dims(d.slc), op->src_layer_desc(), "input");
        a.src_iter = state(h0, "h_0");
        a.src_iter_c = state(c0, "c_0");
        a.dst_layer = view_rows(as_tensor(out, "output"), data_dims(dlc), op->dst_layer_desc(), "output");
        a.dst_iter = state(h_n, "h_n");
        a.dst_iter_c = state(c_n, "c_n");
        py::gil_scoped_release nogil;
        op->execute(a);
    }

    // The one-step, one-row op's implementation, read from the probe rather than from an op
    // of the cache, which would push out the op of a shape in use.
    const std::string &impl_name() const { return impl_name_; }

    // (seq_len, batch, implementation) of each op kept, least recently used first.
    py::list kept() {
        std::lock_guard<std::mutex> lock(mutex_);
        py::list l;
        for (const auto &[shape, op] : ops_) l.append(py::make_tuple(shape.first, shape.second, op->impl_name()));
        return l;
    }

private:
    // The op of shape (t, mb): made on first use with the weights (which it packs), then kept;
    // at most max_ops shapes are kept, the least recently used dropped first.
    std::shared_ptr<const rnn_stack_fwd> op_for(dim_t t, dim_t mb) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (const auto *op = ops_.find({t, mb})) return *op;
        }
        rnn_desc d = desc_;
        d.t = t;
        d.mb = mb;
        std::shared_ptr<const rnn_stack_fwd> op;
        {
            py::gil_scoped_release nogil;
            // The weights were written at construction, on the calling thread, so there is no
            // stream work to wait for: created outside any stream_scope.
            stream_scope now(default_stream());
            op = std::make_shared<const rnn_stack_fwd>(d, weights_);
        }
        std::lock_guard<std::mutex> lock(mutex_);
        ops_.insert({t, mb}, op);
        return op;
    }

    static constexpr std::size_t max_ops = 8;

    rnn_desc desc_;
    bool batch_first_ = false;
    std::string impl_name_;
    std::vector<rnn_layer_weights> weights_;
    // The ops by (t, mb), guarded by mutex_.
    std::mutex mutex_;
    lru_list<std::pair<dim_t, dim_t>, std::shared_ptr<const rnn_stack_fwd>> ops_ {max_ops};
};

} // namespace

void bind_rnn(py::module_ &m) {
    py::class_<rnn_stack_t>(m, "RnnStack",
            R"(PyTorch's recurrent stacks on blockdnn.rnn_stack_fwd; use blockdnn.RNN / LSTM / GRU.

RnnStack(cell, nonlinearity, num_layers, bidirectional, input_size, hidden_size, batch_first,
params): cell is vanilla_rnn, lstm, gru or lbr_gru (PyTorch's GRU); nonlinearity tanh or relu
for vanilla_rnn, tanh for the other cells (their gate functions are fixed); params lists
(weight_ih, weight_hh, bias_ih, bias_hh) per layer and direction in PyTorch's order (l0,
l0_reverse, l1, ...), PyTorch's shapes and gate orders, biases may be None. They are converted
once, here.)")
            .def(py::init<const std::string &, const std::string &, dim_t, bool, dim_t, dim_t, bool,
                         const py::list &>(),
                    py::arg("cell"), py::arg("nonlinearity"), py::arg("num_layers"), py::arg("bidirectional"),
                    py::arg("input_size"), py::arg("hidden_size"), py::arg("batch_first"), py::arg("params"))
            .def("run", &rnn_stack_t::run, py::arg("input"), py::arg("h_0"), py::arg("c_0"), py::arg("output"),
                    py::arg("h_n"), py::arg("c_n"),
                    R"(Runs the stack on the current stream. input: (seq, batch, input_size), or (batch, seq,
input_size) when batch_first; output: input's shape with directions * hidden_size channels;
h_0, c_0 (None: zeros), h_n, c_n (None: not written): (num_layers * directions, batch,
hidden_size). Contiguous float32 torch tensors; outputs are written in place.)")
            .def_property_readonly("impl_name", &rnn_stack_t::impl_name,
                    "the implementation the layers run (\"jit:avx512_core\", \"jit:avx2\" or \"ref\")")
            .def_property_readonly("_kept", &rnn_stack_t::kept,
                    "(seq_len, batch, implementation) of each op kept, least recently used first");
}

} // namespace blockdnn::python
