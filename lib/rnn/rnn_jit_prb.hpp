// SPDX-License-Identifier: Apache-2.0
// Phase-1 problem and memory of the JIT RNN forward, with the reference's fields and meaning
// (oneDNN's RNN model: benchdnn names l, t, mb, slc, sic, dhc; each direction runs its own stack
// of layers; only the last layer's outputs combine). Dense tensors: src/dst_layer tnc or ntc,
// weights ldigo or ldgoi, bias ldgo, states ldnc.
#pragma once

#include <cstdint>
#include <string>

#include "blockdnn/eltwise_alg.hpp"
#include "jit/rnn/rnn_cell_conf.hpp"

namespace blockdnn::impl {

enum class rnn_dir_kind_t { l2r, r2l, bi_concat, bi_sum };

const char *to_string(rnn_dir_kind_t d);

struct rnn_jit_prb_t {
    rnn_cell_kind_t cell = rnn_cell_kind_t::lstm;
    eltwise_alg activation = eltwise_alg::tanh; // vanilla_rnn: tanh, relu, sigmoid
    float alpha = 0.f;                          // relu's negative slope
    rnn_dir_kind_t direction = rnn_dir_kind_t::l2r;
    std::int64_t l = 1, t = 1, mb = 1, slc = 1, sic = 1, dhc = 1;
    bool src_ntc = false, dst_ntc = false;               // else tnc
    bool wei_layer_ldgoi = false, wei_iter_ldgoi = false; // else ldigo

    std::int64_t n_dirs() const {
        return direction == rnn_dir_kind_t::bi_concat || direction == rnn_dir_kind_t::bi_sum ? 2 : 1;
    }
    int n_gates() const { return rnn_cell_n_gates(cell); }
    int n_bias_gates() const { return rnn_cell_n_bias_gates(cell); }
    std::int64_t dlc() const { return direction == rnn_dir_kind_t::bi_concat ? 2 * dhc : dhc; }
    /// FLOPs of the GEMMs (2 per multiply-add), the figure GFLOP/s counters use.
    double gemm_flops() const {
        const double per_layer_dir = 2.0 * t * mb * n_gates() * dhc * static_cast<double>(slc + sic);
        return per_layer_dir * static_cast<double>(l * n_dirs());
    }
};

/// "lstm:l2r l1t50mb64sic512slc512dhc512dic512 tnc:tnc" (benchdnn's descriptor spelling).
std::string to_string(const rnn_jit_prb_t &p);

/// One execution's memory; optional pointers may be null (no bias: zeros; no src_iter[_c]:
/// zero initial states; no dst_iter[_c]: not written).
struct rnn_jit_mem_t {
    const float *src_layer = nullptr, *src_iter = nullptr, *src_iter_c = nullptr;
    const float *wei_layer = nullptr, *wei_iter = nullptr, *bias = nullptr;
    float *dst_layer = nullptr, *dst_iter = nullptr, *dst_iter_c = nullptr;
};

} // namespace blockdnn::impl
