// SPDX-License-Identifier: Apache-2.0
// RNN internals: the validated problem, the implementation interface (a virtual execute, so
// JIT rows can own generated code) and the table (rnn_fwd.cpp; the contract is ops/op_table.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/rnn.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

/// Directions a stack runs: 1 for l2r / r2l, 2 for bi_concat / bi_sum.
inline dim_t rnn_n_dirs(rnn_direction dir) {
    return dir == rnn_direction::bi_concat || dir == rnn_direction::bi_sum ? 2 : 1;
}

/// rnn_desc::validate's rules, with `op` naming the op in the messages. `chained`: the
/// layers are rnn_stack_fwd's, each reading the one before, so slc may differ from dhc.
void validate_rnn_desc(const rnn_desc &desc, const char *op, bool chained);

/// A validated forward problem with the descriptors of its tensors.
struct rnn_prb_t {
    rnn_desc desc;          // sic and dic filled in
    dim_t n_dirs = 1;       // 1 or 2
    dim_t n_gates = 1;      // gates in the weights
    dim_t n_bias_gates = 1; // gates in the bias
    dim_t dlc = 0;          // dst_layer channels: dhc, or 2 * dhc for bi_concat
    tensor_desc src_layer, states, wei_layer, wei_iter, bias, dst_layer;
};

/// Validates a descriptor (rnn_desc::validate) and builds the problem, sic and dic filled in.
/// Throws blockdnn::error naming the field (see rnn_fwd's constructor).
rnn_prb_t make_rnn_prb(const rnn_desc &desc);

/// "lstm:l2r:tanh l1t10mb4slc8sic16dhc16dic16 tnc:ldigo:ldigo:tnc", for verbose lines.
std::string to_string(const rnn_prb_t &p);

/// Memory of one execution, checked against the problem. Optional tensors are null when absent
/// (no bias = zeros, no src_iter[_c] = zero initial states, no dst_iter[_c] = not written).
struct rnn_args_t {
    const float *src_layer = nullptr, *src_iter = nullptr, *src_iter_c = nullptr;
    const float *wei_layer = nullptr, *wei_iter = nullptr, *bias = nullptr;
    float *dst_layer = nullptr, *dst_iter = nullptr, *dst_iter_c = nullptr;
};

/// One forward implementation for one problem. execute() may run many times and from several
/// threads at once, so it must not change the object; it runs with args' weights, or with those
/// of take_weights() when args.wei_layer is null.
class rnn_impl_t : public impl_t<rnn_args_t> {
public:
    /// impl_t::take_weights, with rnn's difference: the pointers are the caller's tensors
    /// (rnn_fwd keeps no copy), valid during this call only, and later executes get null
    /// weight pointers. So every implementation keeps what it needs here (a copy, or a packed
    /// layout). Only weights.wei_layer, wei_iter and bias are set (bias may be null: zeros).
    void take_weights(const rnn_args_t &weights) override = 0;
};

using rnn_row_t = op_row_t<rnn_prb_t, rnn_impl_t>;

/// Forward implementations, best first; the last is "ref".
std::span<const rnn_row_t> rnn_fwd_impls();

/// The reference (rnn_ref.cpp).
std::unique_ptr<rnn_impl_t> create_rnn_fwd_ref(const rnn_prb_t &prb);

} // namespace blockdnn::impl
