// SPDX-License-Identifier: Apache-2.0
// ABI safety of every RNN cell kernel kind (jit/jit_abi_check.hpp), full panels and panels
// with a tail, with a known first output of each kind.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "ops/rnn/jit_rnn_cell_fwd_kernel.hpp"
#include "jit/jit_abi_check.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using jit_abi_test::checked_call_t;

TEST(JitAbi, EveryRnnCellKernelKeepsTheAbi) {
    checked_call_t cc;
    int n_checked = 0;
    const struct {
        rnn_cell cell;
        rnn_cell_part_t part;
        eltwise_alg act;
    } kinds[] = {{rnn_cell::vanilla_rnn, rnn_cell_part_t::full, eltwise_alg::tanh},
            {rnn_cell::vanilla_rnn, rnn_cell_part_t::full, eltwise_alg::relu},
            {rnn_cell::vanilla_rnn, rnn_cell_part_t::full, eltwise_alg::sigmoid},
            {rnn_cell::lstm, rnn_cell_part_t::full, eltwise_alg::tanh},
            {rnn_cell::gru, rnn_cell_part_t::gru_part1, eltwise_alg::tanh},
            {rnn_cell::gru, rnn_cell_part_t::gru_part2, eltwise_alg::tanh},
            {rnn_cell::lbr_gru, rnn_cell_part_t::full, eltwise_alg::tanh}};
    for (isa level : {isa::avx2, isa::avx512_core}) {
        if (detected_isa() < level) continue;
        const int hb = 2 * simd_w_of(level);
        for (const auto &kd : kinds)
            for (int n_valid : {hb, hb - 3}) { // a full panel, and one with a tail
                rnn_cell_conf_t c;
                std::string why;
                const std::int64_t LDG = 4 * hb, H = hb;
                ASSERT_EQ(
                        init_conf_rnn_cell(c, level, kd.cell, kd.part, kd.act, 0.1f, hb, n_valid, LDG, LDG, H, H, why),
                        status::success)
                        << why;
                std::unique_ptr<rnn_cell_kernel_t> k;
                ASSERT_EQ(rnn_cell_kernel_t::create(k, c, why), status::success) << why;
                const int rows = 3;
                std::vector<float> gates(rows * LDG, 0.f), gates_h(rows * LDG, 0.f), bias(4 * hb, 0.f);
                std::vector<float> h_prev(rows * H, 0.5f), h_new(rows * H, -1.f), cs(rows * H, 0.25f),
                        rh(rows * H, -1.f);
                const rnn_cell_call_args_t args {gates.data(), gates_h.data(), bias.data(), h_prev.data(), h_new.data(),
                        cs.data(), rh.data(), rows};
                cc.check(k->generator().code(), &args, k->generator().name() + ":" + to_string(c));
                // Zero pre-activations: a known first output of each kind.
                const float got = kd.part == rnn_cell_part_t::gru_part1 ? rh[0] : h_new[0];
                float want = 0.f;
                switch (kd.cell) {
                case rnn_cell::vanilla_rnn: want = kd.act == eltwise_alg::sigmoid ? 0.5f : 0.f; break;
                case rnn_cell::lstm: want = 0.5f * std::tanh(0.5f * 0.25f); break; // c = 0.5 c_prev
                case rnn_cell::gru:
                    want = kd.part == rnn_cell_part_t::gru_part1 ? 0.25f : 0.f;
                    break;                                   // part 2: u = 0 here
                case rnn_cell::lbr_gru: want = 0.25f; break; // o = 0, h = u h_prev
                }
                EXPECT_NEAR(got, want, 1e-6) << to_string(c);
                if (n_valid < H) {
                    const std::vector<float> &out = kd.part == rnn_cell_part_t::gru_part1 ? rh : h_new;
                    EXPECT_EQ(out[n_valid], -1.f) << "writes stop at n_valid: " << to_string(c);
                }
                ++n_checked;
            }
    }
    if (n_checked == 0) GTEST_SKIP() << "no JIT ISA on this CPU";
}
