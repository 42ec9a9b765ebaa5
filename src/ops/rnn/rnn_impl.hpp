// SPDX-License-Identifier: Apache-2.0
// RNN internals: the validated problem, the implementation interface (a virtual execute, so
// JIT rows can own generated code) and the table (rnn.cpp; the contract is ops/op_table.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/rnn.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

/// A validated forward problem with the descriptors of its tensors.
struct rnn_prb_t {
    rnn_desc desc;          // sic and dic filled in
    dim_t n_dirs = 1;       // 1 or 2
    dim_t n_gates = 1;      // gates in the weights
    dim_t n_bias_gates = 1; // gates in the bias
    dim_t dlc = 0;          // dst_layer channels: dhc, or 2 * dhc for bi_concat
    tensor_desc src_layer, states, wei_layer, wei_iter, bias, dst_layer;
};

/// Validates a descriptor (filling sic and dic) and builds the problem. Throws
/// blockdnn::error naming the field (see rnn_fwd's constructor).
rnn_prb_t make_rnn_prb(const rnn_desc &desc);

/// "lstm:l2r:tanh l1t10mb4slc8sic16dhc16dic16 tnc:ldigo:ldigo:tnc", for verbose lines.
std::string to_string(const rnn_prb_t &p);

/// Memory of one execution, checked against the problem. Optional tensors are null when absent
/// (no bias = zeros, no src_iter[_c] = zero initial states, no dst_iter[_c] = not written).
struct rnn_fwd_mem_t {
    const float *src_layer = nullptr, *src_iter = nullptr, *src_iter_c = nullptr;
    const float *wei_layer = nullptr, *wei_iter = nullptr, *bias = nullptr;
    float *dst_layer = nullptr, *dst_iter = nullptr, *dst_iter_c = nullptr;
};

/// One forward implementation for one problem. execute() may run many times and from several
/// threads at once, so it must not change the object; it runs with mem's weights, or with those
/// of set_weights() when mem.wei_layer is null.
class rnn_fwd_impl_t : public impl_t<rnn_fwd_mem_t> {
public:
    /// Receives the weights once, when the caller gives them at creation (rnn_fwd's weights
    /// constructor): the implementation keeps what it needs (a copy, or a packed layout), and
    /// executes given null weight pointers use it. bias may be null (zeros). Called at most
    /// once, before any execute.
    virtual void set_weights(const float *wei_layer, const float *wei_iter, const float *bias) = 0;
};

using rnn_fwd_row_t = op_row_t<rnn_prb_t, rnn_fwd_impl_t>;

/// Forward implementations, best first; the last is "ref".
std::span<const rnn_fwd_row_t> rnn_fwd_impl_list();

/// The reference (rnn_ref.cpp).
std::unique_ptr<rnn_fwd_impl_t> create_rnn_fwd_ref(const rnn_prb_t &prb);

} // namespace blockdnn::impl
