// SPDX-License-Identifier: Apache-2.0
// A stacked LSTM as PyTorch's nn.LSTM defines it (unidirectional, seq-first), on rnn_fwd.
#pragma once

#include <string>
#include <vector>

#include "nets/resnet.hpp"

namespace nets {

/// PyTorch's nn.LSTM(input_size, hidden_size, num_layers) in inference, h0 = c0 = 0, on
/// blockdnn::rnn_fwd (LSTM cell equations in include/blockdnn/rnn.hpp; PyTorch's gate order
/// i, f, g, o is converted by rnn_import_weights / rnn_import_bias). Parameters use PyTorch's
/// names: weight_ih_l{k} {4H, I_k}, weight_hh_l{k} {4H, H}, bias_ih_l{k}, bias_hh_l{k} {4H},
/// I_0 = input_size, I_k = H after. Layers with the same input width share one rnn_fwd (its
/// layers all read dhc channels), so input_size == hidden_size gives a single op; otherwise
/// the first layer is its own op. Weights are given to the ops at creation.
class lstm {
public:
    /// For src (t, mb, input_size) in tnc. Throws what `params` throws, and blockdnn::error for
    /// sizes rnn_fwd rejects.
    lstm(blockdnn::dim_t layers, blockdnn::dim_t t, blockdnn::dim_t mb, blockdnn::dim_t input_size,
            blockdnn::dim_t hidden_size, const param_source &params);

    /// The last layer's h at every step: (t, mb, hidden_size) in tnc. const: may run
    /// concurrently on different inputs.
    blockdnn::tensor forward(const blockdnn::tensor &src) const;

    blockdnn::tensor_desc src_desc() const { return ops_.front().src_layer_desc(); }
    blockdnn::tensor_desc dst_desc() const { return ops_.back().dst_layer_desc(); }
    /// "jit:avx512_core" etc., one per op, space-separated.
    std::string impl_names() const;
    /// 2 * multiply-adds of the gate GEMMs of one forward pass.
    double flops() const { return flops_; }

private:
    std::vector<blockdnn::rnn_fwd> ops_;
    double flops_ = 0;
};

} // namespace nets
