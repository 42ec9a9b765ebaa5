// SPDX-License-Identifier: Apache-2.0
// The fused RNN cell (gate nonlinearities + state update) of one hidden-unit panel: what one
// kernel computes and the layout it reads. Equations: include/blockdnn/rnn.hpp (oneDNN's RNN
// developer guide), gates in oneDNN order (lstm i, f, c~, o; gru u, r, o~).
#pragma once

#include <cstdint>
#include <string>

#include "blockdnn/eltwise_alg.hpp"
#include "blockdnn/isa.hpp"
#include "blockdnn/rnn.hpp"
#include "blockdnn/status.hpp"

namespace blockdnn::impl {

/// Original GRU needs r * h_{t-1} over all hidden units before the candidate's GEMM, so its
/// step runs in two parts; every other cell is one part.
enum class rnn_cell_part_t { full, gru_part1, gru_part2 };

/// Layout (all row strides in floats): a panel holds hb hidden units of every gate. Row m of
/// the gates buffer holds, for this panel, gate g's unit j at gates[m * LDG + g * hb + j]; the
/// bias, packed per panel, at bias[g * hb + j]; lbr_gru's recurrent gates at
/// gates_h[m * LDGH + g * hb + j]. States are dense rows: h_prev / h_new at [m * LDH + j],
/// c (lstm) and r * h (gru part 1 output) at [m * LDS + j]. Units j >= n_valid are padding:
/// the gates and bias have them (zero), states do not and are never touched there.
struct rnn_cell_conf_t {
    isa level = isa::avx512_core;
    rnn_cell cell = rnn_cell::lstm;
    rnn_cell_part_t part = rnn_cell_part_t::full;
    eltwise_alg activation = eltwise_alg::tanh; // vanilla_rnn: tanh, relu or sigmoid
    float alpha = 0.f;                          // relu's negative slope
    int simd_w = 0;
    int hb = 0;      // hidden units per panel, a multiple of simd_w
    int n_valid = 0; // hidden units of this panel that exist, 1..hb
    int nv = 0;      // vectors covering n_valid
    int n_tail = 0;  // floats in the last vector when n_valid % simd_w != 0
    std::int64_t LDG = 0, LDGH = 0, LDH = 0, LDS = 0;
};

/// Fills `c`; unimplemented with the reason in `why` for an ISA without a kernel, a vanilla
/// activation other than tanh / relu / sigmoid, or a block that does not fit the layout.
status init_conf_rnn_cell(rnn_cell_conf_t &c, isa level, rnn_cell cell, rnn_cell_part_t part, eltwise_alg activation,
        float alpha, int hb, int n_valid, std::int64_t LDG, std::int64_t LDGH, std::int64_t LDH, std::int64_t LDS,
        std::string &why);

std::string to_string(const rnn_cell_conf_t &c);

} // namespace blockdnn::impl
