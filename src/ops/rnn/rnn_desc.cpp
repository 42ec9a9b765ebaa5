// SPDX-License-Identifier: Apache-2.0
// The RNN descriptor's rules, its benchdnn text and FLOPs, and the names of its enumerations.
#include <cmath>

#include "blockdnn/rnn.hpp"
#include "core/utils.hpp"
#include "ops/rnn/rnn_impl.hpp"

namespace blockdnn {

using impl::cat;
using impl::fail;

namespace {

void check_rnn_tag(const char *op, format_tag tag, const char *field, format_tag a, format_tag b) {
    if (tag != a && tag != b)
        fail(status::invalid_arguments, op, ": ", field, " = ", to_string(tag), " must be ", to_string(a), " or ",
                to_string(b));
}

} // namespace

void rnn_desc::validate() const { impl::validate_rnn_desc(*this, "rnn_fwd", false); }

void impl::validate_rnn_desc(const rnn_desc &d, const char *op, bool chained) {
    switch (d.cell) {
    case rnn_cell::vanilla_rnn:
    case rnn_cell::lstm:
    case rnn_cell::gru:
    case rnn_cell::lbr_gru: break;
    default: fail(status::invalid_arguments, op, ": cell = ", static_cast<int>(d.cell), " is not a known cell");
    }
    switch (d.direction) {
    case rnn_direction::l2r:
    case rnn_direction::r2l:
    case rnn_direction::bi_concat:
    case rnn_direction::bi_sum: break;
    default:
        fail(status::invalid_arguments, op, ": direction = ", static_cast<int>(d.direction),
                " is not a known direction");
    }
    const std::pair<const char *, dim_t> sizes[] = {
            {"l", d.l}, {"t", d.t}, {"mb", d.mb}, {"slc", d.slc}, {"dhc", d.dhc}};
    for (const auto &[name, v] : sizes)
        if (v < 1) fail(status::invalid_arguments, op, ": ", name, " = ", v, " must be positive");
    const dim_t sic_ = d.sic ? d.sic : d.dhc, dic_ = d.dic ? d.dic : d.dhc;
    if (sic_ != d.dhc)
        fail(status::invalid_arguments, op, ": sic = ", sic_, " must equal dhc = ", d.dhc,
                " (the hidden state feeds back into the cell)");
    if (dic_ != d.dhc)
        fail(status::unimplemented, op, ": dic = ", dic_, " differs from dhc = ", d.dhc,
                "; projection is not supported");
    if (!chained && d.l > 1 && d.slc != d.dhc)
        fail(status::invalid_arguments, op, ": slc = ", d.slc, " must equal dhc = ", d.dhc, " when l = ", d.l,
                " > 1 (layers past the first read dhc channels through the same weights_layer tensor); "
                "rnn_stack_fwd runs such stacks, PyTorch's way, as one single-layer rnn_fwd per layer");
    if (d.cell == rnn_cell::vanilla_rnn && d.activation != eltwise_alg::tanh && d.activation != eltwise_alg::relu
            && d.activation != eltwise_alg::sigmoid)
        fail(status::invalid_arguments, op, ": activation = ", to_string(d.activation),
                " is not supported by vanilla_rnn (tanh, relu, sigmoid)");
    // The other cells' gate functions are fixed (sigmoid and tanh), so a field they would not
    // read is refused rather than ignored.
    if (d.cell != rnn_cell::vanilla_rnn && d.activation != eltwise_alg::tanh)
        fail(status::invalid_arguments, op, ": activation = ", to_string(d.activation),
                " applies to vanilla_rnn only; ", to_string(d.cell),
                "'s gate functions are fixed (only tanh, the default)");
    if (!std::isfinite(d.alpha)) fail(status::invalid_arguments, op, ": alpha = ", d.alpha, " is not finite");
    if (d.alpha != 0.f && (d.cell != rnn_cell::vanilla_rnn || d.activation != eltwise_alg::relu))
        fail(status::invalid_arguments, op, ": alpha = ", d.alpha, " is relu's negative slope; it must be 0 for ",
                to_string(d.cell), d.cell == rnn_cell::vanilla_rnn ? cat(" with ", to_string(d.activation)) : "");
    check_rnn_tag(op, d.src_layer_tag, "src_layer_tag", format_tag::tnc, format_tag::ntc);
    check_rnn_tag(op, d.dst_layer_tag, "dst_layer_tag", format_tag::tnc, format_tag::ntc);
    check_rnn_tag(op, d.weights_layer_tag, "weights_layer_tag", format_tag::ldigo, format_tag::ldgoi);
    check_rnn_tag(op, d.weights_iter_tag, "weights_iter_tag", format_tag::ldigo, format_tag::ldgoi);
}

std::string rnn_desc::str() const {
    return cat("l", l, "t", t, "mb", mb, "sic", sic ? sic : dhc, "slc", slc, "dhc", dhc, "dic", dic ? dic : dhc);
}

double rnn_desc::flops() const {
    validate();
    // In double throughout: the sizes' product may pass dim_t's range while each size is valid.
    double n = 2.0;
    for (dim_t v : {l, impl::rnn_n_dirs(direction), t, mb, dim_t {rnn_n_gates(cell)}, dhc}) n *= static_cast<double>(v);
    return n * (static_cast<double>(slc) + static_cast<double>(sic ? sic : dhc));
}

const char *to_string(rnn_cell cell) {
    switch (cell) {
    case rnn_cell::vanilla_rnn: return "vanilla_rnn";
    case rnn_cell::lstm: return "lstm";
    case rnn_cell::gru: return "gru";
    case rnn_cell::lbr_gru: return "lbr_gru";
    }
    return "unknown";
}

int rnn_n_gates(rnn_cell cell) {
    switch (cell) {
    case rnn_cell::vanilla_rnn: return 1;
    case rnn_cell::lstm: return 4;
    case rnn_cell::gru:
    case rnn_cell::lbr_gru: return 3;
    }
    fail(status::invalid_arguments, "rnn_n_gates: cell = ", static_cast<int>(cell),
            " is not an rnn_cell (vanilla_rnn, lstm, gru, lbr_gru)");
}

int rnn_n_bias_gates(rnn_cell cell) {
    if (cell == rnn_cell::lbr_gru) return 4;
    if (const int c = static_cast<int>(cell);
            c < static_cast<int>(rnn_cell::vanilla_rnn) || c > static_cast<int>(rnn_cell::lbr_gru))
        fail(status::invalid_arguments, "rnn_n_bias_gates: cell = ", c,
                " is not an rnn_cell (vanilla_rnn, lstm, gru, lbr_gru)");
    return rnn_n_gates(cell);
}

const char *to_string(rnn_direction dir) {
    switch (dir) {
    case rnn_direction::l2r: return "l2r";
    case rnn_direction::r2l: return "r2l";
    case rnn_direction::bi_concat: return "bi_concat";
    case rnn_direction::bi_sum: return "bi_sum";
    }
    return "unknown";
}

} // namespace blockdnn
