// SPDX-License-Identifier: Apache-2.0
// Recurrent layers, forward: vanilla RNN, LSTM, GRU and linear-before-reset GRU stacks in one
// or both directions (oneDNN's RNN primitive model and names), PyTorch's stacks of them
// (rnn_stack_fwd), and converters from PyTorch's and ONNX's weight layouts and gate orders.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blockdnn/eltwise_alg.hpp"
#include "blockdnn/primitive.hpp"
#include "blockdnn/tensor.hpp"

namespace blockdnn {

/// The cell. Gates are stored in this order in weights and bias (the g dimension); the
/// equations are those of oneDNN's RNN developer guide (dev_guide_rnn), with W the
/// weights_layer slice, U the weights_iter slice, B the bias slice of a (layer, direction),
/// x_t the layer's input at time t, h_{t-1} and c_{t-1} the states from the previous step, and
/// sigma the logistic function:
///
/// - vanilla_rnn, 1 gate:  h_t = act(W x_t + U h_{t-1} + B), act = rnn_desc::activation.
/// - lstm, 4 gates (i, f, c~, o) (Hochreiter & Schmidhuber 1997, with the forget gate of
///   Gers et al. 2000; no peepholes, no projection):
///       i = sigma(W_i x_t + U_i h_{t-1} + B_i)     f = sigma(W_f x_t + U_f h_{t-1} + B_f)
///       c~ = tanh(W_c x_t + U_c h_{t-1} + B_c)     o = sigma(W_o x_t + U_o h_{t-1} + B_o)
///       c_t = f * c_{t-1} + i * c~                 h_t = o * tanh(c_t)
/// - gru, 3 gates (u, r, o~) (Cho et al. 2014, arXiv:1406.1078; ONNX linear_before_reset = 0):
///       u = sigma(W_u x_t + U_u h_{t-1} + B_u)     r = sigma(W_r x_t + U_r h_{t-1} + B_r)
///       o~ = tanh(W_o x_t + U_o (r * h_{t-1}) + B_o)
///       h_t = u * h_{t-1} + (1 - u) * o~
/// - lbr_gru, 3 gates (u, r, o~) and 4 bias gates (B_u, B_r, B_o, B_u'): the reset gate
///   applies after U_o (PyTorch's nn.GRU, ONNX linear_before_reset = 1, cuDNN):
///       o~ = tanh(W_o x_t + B_o + r * (U_o h_{t-1} + B_u'))      (u, r, h_t as in gru)
enum class rnn_cell { vanilla_rnn, lstm, gru, lbr_gru };

/// "vanilla_rnn", "lstm", "gru" or "lbr_gru".
const char *to_string(rnn_cell cell);
/// Gates in the weights: 1, 4, 3, 3. Throws `blockdnn::error` (invalid_arguments) if cell is
/// not an rnn_cell value.
int rnn_n_gates(rnn_cell cell);
/// Gates in the bias: as rnn_n_gates, except 4 for lbr_gru. Throws as rnn_n_gates does.
int rnn_n_bias_gates(rnn_cell cell);

/// The order time steps are processed in, and how two directions combine (oneDNN's
/// rnn_direction). In rnn_fwd each direction runs its whole stack of layers on its own: layer
/// k + 1 of a direction reads layer k of the same direction, and only the last layer's outputs
/// are combined into dst_layer: concatenated over channels (l2r first) or summed. In
/// rnn_stack_fwd (PyTorch's stacks) every layer's outputs are combined so, and layer k + 1
/// reads the combination.
enum class rnn_direction {
    l2r,       ///< t = 0, 1, ..., T - 1; one direction
    r2l,       ///< t = T - 1, ..., 0; one direction
    bi_concat, ///< both; dst_layer channels = 2 * dhc, [l2r | r2l]
    bi_sum,    ///< both; dst_layer = l2r + r2l, dhc channels
};

/// "l2r", "r2l", "bi_concat" or "bi_sum" (benchdnn's --direction words, with bi_ prefixes).
const char *to_string(rnn_direction dir);

/// A recurrent stack. Sizes use benchdnn's RNN names. The direction dimension d of weights,
/// bias and states has 1 entry for l2r / r2l (index 0) and 2 for bi_* (0 = l2r, 1 = r2l).
///
/// PyTorch's and ONNX's layers map to this as follows. Their data layout (seq, batch, feature)
/// is tnc (batch_first / ONNX layout = 1: ntc). Their h0 / c0 / h_n / c_n, (layers *
/// directions, batch, hidden), are ldnc memory as they are. PyTorch's stacks with more than
/// one layer and input_size != hidden_size, or bidirectional ones (whose layer k + 1 reads both
/// directions' outputs), do not fit rnn_fwd's model: rnn_stack_fwd runs them, with this same
/// descriptor.
struct rnn_desc {
    rnn_cell cell = rnn_cell::lstm;
    /// vanilla_rnn: tanh, relu or sigmoid. The other cells' gate functions are fixed, and
    /// they take only tanh here (the default).
    eltwise_alg activation = eltwise_alg::tanh;
    /// relu's negative slope (vanilla_rnn with relu); 0 for every other cell and activation.
    float alpha = 0.f;
    rnn_direction direction = rnn_direction::l2r;
    dim_t l = 1;   ///< layers
    dim_t t = 1;   ///< time steps
    dim_t mb = 1;  ///< batch
    dim_t slc = 0; ///< src_layer channels (input features of the first layer)
    dim_t sic = 0; ///< src_iter channels; 0 means dhc, and it must equal dhc
    dim_t dhc = 0; ///< hidden channels of every layer
    dim_t dic = 0; ///< dst_iter channels; 0 means dhc, and it must equal dhc (no projection)
    format_tag src_layer_tag = format_tag::tnc;       ///< tnc or ntc
    format_tag dst_layer_tag = format_tag::tnc;       ///< tnc or ntc
    format_tag weights_layer_tag = format_tag::ldigo; ///< ldigo or ldgoi
    format_tag weights_iter_tag = format_tag::ldigo;  ///< ldigo or ldgoi

    /// Checks every rule and throws `blockdnn::error` at the first one broken, naming the
    /// field, its value and the rule (e.g. "rnn_fwd: sic = 8 must equal dhc = 16 (...)"):
    /// invalid_arguments for a cell or direction outside its enumeration, a size < 1, sic
    /// (0: dhc) != dhc, slc != dhc with l > 1 (layers past the first read dhc channels through
    /// the same weights_layer tensor; rnn_stack_fwd takes such stacks), a vanilla activation
    /// other than tanh / relu / sigmoid, another cell's activation other than tanh, an alpha
    /// that is not finite or not 0 outside vanilla relu, a tag outside the lists above;
    /// unimplemented for dic (0: dhc) != dhc (projection).
    void validate() const;

    /// The benchdnn descriptor of the sizes, "l1t50mb64sic512slc512dhc512dic512" (sic and dic
    /// as dhc when 0); parse_rnn_desc reads it back. Cell, direction and tags are not part of it
    /// (benchdnn gives them as options).
    std::string str() const;

    /// The floating-point operations (not GFLOP) of the stack's GEMMs, 2 per multiply-add:
    /// 2 l d t mb gates dhc (slc + sic), d the directions. Validates first, throwing as
    /// validate() does.
    double flops() const;
};

/// Parses a benchdnn RNN descriptor (benchdnn doc/driver_rnn.md): keys l t mb sic slc dhc dic,
/// each followed by an integer, in any order, with optional '_' separators, and an optional
/// name after 'n' (quotes dropped, stored in `*name` when given), e.g.
/// "l1t50mb64sic512slc512dhc512dic512" or l4t3mb20_sic36_n"uniform:unroll_tail".
/// benchdnn's defaults: l = 1, t = 1, mb = 2, slc = sic, dhc = sic, dic = dhc; sic is
/// required. Only the sizes are set; the other fields keep rnn_desc's defaults (set cell,
/// direction and tags after parsing). Throws `blockdnn::error` (invalid_arguments) quoting the
/// descriptor and what is wrong (an unknown or repeated key, a key without a number or with
/// more than 12 digits, no sic, a size below 1). How the sizes relate (sic and dic equal to dhc)
/// is left to rnn_desc::validate.
rnn_desc parse_rnn_desc(std::string_view text, std::string *name = nullptr);

/// Tensors of one execution. Optional ones may be left empty.
struct rnn_fwd_args {
    tensor src_layer {};     ///< (t, mb, slc)
    tensor src_iter {};      ///< (l, d, mb, dhc) ldnc, initial h; empty: zeros
    tensor src_iter_c {};    ///< (l, d, mb, dhc) ldnc, initial c (lstm only); empty: zeros
    tensor weights_layer {}; ///< (l, d, slc, g, dhc)
    tensor weights_iter {};  ///< (l, d, sic, g, dhc)
    tensor bias {};          ///< (l, d, bias gates, dhc) ldgo; empty: zeros
    tensor dst_layer {};     ///< (t, mb, dhc or 2 * dhc): the last layer's h at every t
    tensor dst_iter {};      ///< (l, d, mb, dhc) ldnc, final h of every layer and direction; optional
    tensor dst_iter_c {};    ///< (l, d, mb, dhc) ldnc, final c (lstm only); optional
};

/// RNN forward: create once (validates, picks an implementation), execute many times.
/// The final states are those after the last step processed: t = T - 1 for l2r, t = 0 for r2l.
/// Implementations (impl_name()): "jit:avx512_core", "jit:avx2" or "ref"; impl_info() adds a
/// JIT one's plan in words, one item a line: the problem, the blocking, the layer GEMM, the
/// per-step brgemm(s) and the cells.
///
/// @code
///   rnn_desc d;  d.cell = rnn_cell::lstm;  d.t = 10;  d.mb = 4;  d.slc = 8;  d.dhc = 16;
///   rnn_fwd op(d);
///   tensor src(op.src_layer_desc()), wl(op.weights_layer_desc()), wi(op.weights_iter_desc()),
///          b(op.bias_desc()), dst(op.dst_layer_desc());
///   op.execute({.src_layer = src, .weights_layer = wl, .weights_iter = wi, .bias = b, .dst_layer = dst});
/// @endcode
class rnn_fwd : public primitive {
public:
    /// Validates `desc` and picks the best implementation. Throws `blockdnn::error` naming the
    /// field and value: invalid_arguments for a size < 1, sic != dhc, slc != dhc with l > 1
    /// (layers past the first read dhc channels through the same weights_layer tensor; use
    /// rnn_stack_fwd), a vanilla activation other than tanh / relu / sigmoid, another cell's
    /// activation other than tanh, an alpha that is not finite or not 0 outside vanilla relu, a
    /// tag outside the lists above; unimplemented for dic != dhc (projection).
    explicit rnn_fwd(const rnn_desc &desc);

    /// As rnn_fwd(desc), and takes the weights now: the implementation reads them here, once
    /// (the JIT ones pack them into the layout their kernels want), so execute() does no
    /// weight work; it must then be given no weights_layer, weights_iter or bias (empty
    /// tensors). Later changes to these tensors are not seen. `bias` may be empty (zeros).
    /// Throws as rnn_fwd(desc), and invalid_arguments for weights that do not match the
    /// descriptor (the same checks and messages as execute()). Inside a stream_scope it first
    /// waits for the work queued on the current stream (blockdnn/stream.hpp).
    rnn_fwd(const rnn_desc &desc, const tensor &weights_layer, const tensor &weights_iter, const tensor &bias = {});

    /// Runs the stack. Throws `blockdnn::error` (invalid_arguments) before writing anything if a
    /// required tensor (src_layer, weights_layer and weights_iter unless given at creation,
    /// dst_layer) has no memory, if weights are given that were given at creation, if
    /// any tensor given differs from the descriptor below (the message names the tensor, the
    /// dim and both values, e.g. "rnn_fwd: weights_iter dims[4] (o) = 5, expected dhc = 4"),
    /// if src_iter_c / dst_iter_c are given to a cell other than lstm, or if an output shares
    /// memory with an input.
    void execute(const rnn_fwd_args &args) const;

    /// The validated descriptor, with sic and dic filled in.
    const rnn_desc &desc() const;
    /// 1 for l2r / r2l, 2 for bi_concat / bi_sum.
    dim_t n_dirs() const;

    tensor_desc src_layer_desc() const;     ///< (t, mb, slc) in src_layer_tag
    tensor_desc src_iter_desc() const;      ///< (l, d, mb, dhc) ldnc; also src_iter_c, dst_iter(_c)
    tensor_desc weights_layer_desc() const; ///< (l, d, slc, gates, dhc) in weights_layer_tag
    tensor_desc weights_iter_desc() const;  ///< (l, d, sic, gates, dhc) in weights_iter_tag
    tensor_desc bias_desc() const;          ///< (l, d, bias gates, dhc) ldgo
    tensor_desc dst_layer_desc() const;     ///< (t, mb, dhc or 2 * dhc) in dst_layer_tag
    tensor_desc dst_iter_desc() const { return src_iter_desc(); }
};

/// The weights of one layer of an rnn_stack_fwd: that layer's slices of rnn_fwd's tensors
/// (l = 1), with i = the layer's input channels (rnn_stack_fwd::layer_slc).
struct rnn_layer_weights {
    tensor weights_layer {}; ///< (1, d, layer_slc(k), gates, dhc) in weights_layer_tag
    tensor weights_iter {};  ///< (1, d, dhc, gates, dhc) in weights_iter_tag
    tensor bias {};          ///< (1, d, bias gates, dhc) ldgo; empty: zeros
};

/// Tensors of one execution of an rnn_stack_fwd. Optional ones may be left empty.
struct rnn_stack_fwd_args {
    tensor src_layer {};                    ///< (t, mb, slc) in src_layer_tag
    tensor src_iter {};                     ///< (l, d, mb, dhc) ldnc, initial h; empty: zeros
    tensor src_iter_c {};                   ///< (l, d, mb, dhc) ldnc, initial c (lstm only); empty: zeros
    std::vector<rnn_layer_weights> weights; ///< one per layer; empty if given at creation
    tensor dst_layer {};                    ///< (t, mb, dhc or 2 * dhc) in dst_layer_tag: the last layer's h
    tensor dst_iter {};                     ///< (l, d, mb, dhc) ldnc, final h of every layer and direction; optional
    tensor dst_iter_c {};                   ///< (l, d, mb, dhc) ldnc, final c (lstm only); optional
};

/// A stack of recurrent layers as PyTorch's nn.RNN / nn.LSTM / nn.GRU run it (num_layers,
/// bidirectional): layer k + 1 reads layer k's outputs, both directions combined as
/// desc.direction says (bi_concat: 2 * dhc channels [l2r | r2l], as PyTorch; bi_sum: their
/// sum, dhc channels), so layer 0 reads slc channels, the others dhc or 2 * dhc, and slc need
/// not equal dhc. It holds one single-layer rnn_fwd per layer (layer(k)) and chains them
/// through intermediate (t, mb, dhc or 2 * dhc) buffers that each execution allocates for
/// itself, so executions on several streams at once do not share them.
///
/// The descriptor is rnn_desc, read the same way except for the chaining; the tensors of one
/// layer are those of rnn_fwd with l = 1 (rnn_layer_weights), the states those of the whole
/// stack in ldnc, which is PyTorch's h_0 / c_0 / h_n / c_n order (num_layers * num_directions,
/// batch, hidden). Each layer's weights come from PyTorch's weight_ih_l{k}[_reverse],
/// weight_hh_l{k}[_reverse], bias_ih_l{k}[_reverse] and bias_hh_l{k}[_reverse] through
/// rnn_import_weights / rnn_import_bias (layer 0, direction 0 or 1 of the layer's tensor).
/// impl_name() is the layers' common implementation name, or their names joined by '+' in
/// layer order when they differ; impl_info() gives each layer's impl_info(). Under
/// BLOCKDNN_VERBOSE each layer prints its own rnn_fwd exec line.
///
/// @code
///   rnn_desc d;  d.cell = rnn_cell::lstm;  d.direction = rnn_direction::bi_concat;
///   d.l = 2;  d.t = 10;  d.mb = 4;  d.slc = 5;  d.dhc = 10;   // nn.LSTM(5, 10, 2, bidirectional=True)
///   std::vector<rnn_layer_weights> w(2);
///   for (dim_t k = 0; k < 2; ++k) ... // fill w[k] from the module's parameters (rnn_import_*)
///   rnn_stack_fwd op(d, w);
///   tensor x(op.src_layer_desc()), y(op.dst_layer_desc()), h_n(op.dst_iter_desc()), c_n(op.dst_iter_desc());
///   op.execute({.src_layer = x, .dst_layer = y, .dst_iter = h_n, .dst_iter_c = c_n});
/// @endcode
class rnn_stack_fwd : public primitive {
public:
    /// Validates `desc` as rnn_desc::validate does except that slc may differ from dhc for any
    /// l, and creates each layer's rnn_fwd. Throws `blockdnn::error` naming "rnn_stack_fwd", the
    /// field and value: invalid_arguments for a cell or direction outside its enumeration, a
    /// size < 1, sic (0: dhc) != dhc, a vanilla activation other than tanh / relu / sigmoid,
    /// another cell's activation other than tanh, an alpha that is not finite or not 0 outside
    /// vanilla relu, a tag outside rnn_desc's lists; unimplemented for dic (0: dhc) != dhc
    /// (projection).
    explicit rnn_stack_fwd(const rnn_desc &desc);

    /// As rnn_stack_fwd(desc), and takes the weights now, one rnn_layer_weights per layer (each
    /// layer's rnn_fwd reads and packs them once; later changes to them are not seen), so
    /// execute() must be given none. Throws as rnn_stack_fwd(desc), and invalid_arguments if
    /// weights does not hold l entries or an entry differs from weights_layer_desc(k),
    /// weights_iter_desc(k) or bias_desc(k) (the message names the entry, e.g.
    /// "rnn_stack_fwd: weights[1].weights_layer dims[2] (i) = 5, expected 2 * dhc = 20 (...)").
    /// Inside a stream_scope it first waits for the work queued on the current stream.
    rnn_stack_fwd(const rnn_desc &desc, std::span<const rnn_layer_weights> weights);

    /// Runs the stack on the calling thread's current stream (blockdnn/stream.hpp). Throws
    /// `blockdnn::error` (invalid_arguments) at the call, before anything is written, if
    /// src_layer or dst_layer has no memory, if args.weights is given although the weights
    /// were given at creation or does not hold l entries otherwise, if a tensor differs from
    /// the descriptors below (the message names the tensor or weights entry, the dim and both
    /// values), if src_iter_c / dst_iter_c are given to a cell other than lstm, or if an output
    /// overlaps another output or an input.
    void execute(const rnn_stack_fwd_args &args) const;

    /// The validated descriptor, with sic and dic filled in.
    const rnn_desc &desc() const;
    /// 1 for l2r / r2l, 2 for bi_concat / bi_sum.
    dim_t n_dirs() const;
    /// Layer k's input channels: slc for k = 0, else 2 * dhc for bi_concat and dhc otherwise.
    /// Throws `blockdnn::error` (invalid_arguments) naming k unless 0 <= k < l.
    dim_t layer_slc(dim_t k) const;
    /// Layer k's single-layer op. Throws as layer_slc.
    const rnn_fwd &layer(dim_t k) const;

    tensor_desc src_layer_desc() const; ///< (t, mb, slc) in src_layer_tag
    tensor_desc src_iter_desc() const;  ///< (l, d, mb, dhc) ldnc; also src_iter_c, dst_iter(_c)
    tensor_desc dst_layer_desc() const; ///< (t, mb, dhc or 2 * dhc) in dst_layer_tag
    tensor_desc dst_iter_desc() const { return src_iter_desc(); }
    tensor_desc weights_layer_desc(dim_t k) const; ///< (1, d, layer_slc(k), gates, dhc); throws as layer_slc
    tensor_desc weights_iter_desc(dim_t k) const;  ///< (1, d, dhc, gates, dhc); throws as layer_slc
    tensor_desc bias_desc(dim_t k) const;          ///< (1, d, bias gates, dhc) ldgo; throws as layer_slc
};

/// Frameworks whose RNN weights the converters below read.
///
/// Both keep one matrix per (layer, direction) and kind, of shape [gates * hidden, input],
/// row-major, gate blocks stacked along the rows: PyTorch's weight_ih_l{k}[_reverse] and
/// weight_hh_l{k}[_reverse]; ONNX's W[dir] and R[dir] (its W is [dirs, gates * hidden, input]).
/// Their gate orders differ from blockdnn's:
///
/// | cell        | blockdnn      | pytorch       | onnx          |
/// |-------------|---------------|---------------|---------------|
/// | lstm        | i, f, c~, o   | i, f, g, o    | i, o, f, c    |
/// | gru/lbr_gru | u, r, o~      | r, z, n       | z, r, h       |
///
/// (z is the update gate u; n, h and g the candidate.) PyTorch's nn.GRU is lbr_gru; ONNX's GRU
/// is gru with linear_before_reset = 0 and lbr_gru with 1.
enum class rnn_framework { pytorch, onnx };

/// "pytorch" or "onnx" ("unknown" for a value outside the enumeration).
const char *to_string(rnn_framework fw);

/// The blockdnn gate index of gate `fw_gate` of framework `fw`'s order (table above).
/// Throws `blockdnn::error` (invalid_arguments) if fw is not an rnn_framework value or
/// fw_gate is outside [0, rnn_n_gates(cell)).
int rnn_gate_index(rnn_framework fw, rnn_cell cell, int fw_gate);

/// Copies one framework weight matrix into slice (layer, dir) of a blockdnn weights tensor,
/// transposing it and reordering the gates.
///
/// `src`: dims {gates * dhc, i} in layout oi (wrap the framework's memory with
/// `tensor(tensor_desc({G * H, I}, format_tag::oi), ptr)`). `weights`: (l, d, i, gates, dhc)
/// in ldigo or ldgoi: a weights_layer (i = slc) or weights_iter (i = sic) tensor.
/// Only that slice is written. Throws `blockdnn::error` (invalid_arguments) naming the field
/// if fw is not an rnn_framework value, a tensor has no memory, the layouts are not these, weights' gates differ from
/// rnn_n_gates(cell), src's dims are not {gates * dhc, i}, layer / dir are out of range, or
/// src overlaps weights in memory (the copy cannot run in place).
void rnn_import_weights(
        rnn_framework fw, rnn_cell cell, const tensor &src, const tensor &weights, dim_t layer, dim_t dir);

/// Fills slice (layer, dir) of a bias tensor (l, d, bias gates, dhc), layout ldgo, from the
/// framework's two bias vectors of one (layer, direction), each {gates * dhc} in layout x:
/// PyTorch's bias_ih_l{k} / bias_hh_l{k}, ONNX's B[dir][0 : G*H] (Wb) / B[dir][G*H : 2*G*H] (Rb).
/// Either may be empty (zeros). Gate g gets b_ih[g] + b_hh[g], except for lbr_gru, whose
/// candidate gate gets b_ih[n] and whose extra fourth gate B_u' gets b_hh[n].
/// Throws as rnn_import_weights (b_ih or b_hh overlapping bias, too).
void rnn_import_bias(rnn_framework fw, rnn_cell cell, const tensor &b_ih, const tensor &b_hh, const tensor &bias,
        dim_t layer, dim_t dir);

} // namespace blockdnn
