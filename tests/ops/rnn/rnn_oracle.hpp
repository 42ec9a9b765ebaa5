// SPDX-License-Identifier: Apache-2.0
// A test oracle for one RNN layer in one direction, written in the frameworks' own terms:
// weights as [gates * hidden, input] matrices in PyTorch's or ONNX's gate order and the
// equations as PyTorch's nn.RNN / nn.LSTM / nn.GRU and ONNX's RNN / LSTM / GRU documentation
// state them. Feeding the library through rnn_import_* and comparing against this checks the
// converters and the reference together.
#pragma once

#include <cmath>
#include <vector>

#include "blockdnn/blockdnn.hpp"

namespace rnn_oracle {

using blockdnn::dim_t;
using blockdnn::rnn_cell;
using blockdnn::rnn_framework;

struct layer_t {
    rnn_framework fw = rnn_framework::pytorch;
    rnn_cell cell = rnn_cell::lstm;                          // gru = ONNX linear_before_reset 0, lbr_gru = 1 / PyTorch
    blockdnn::eltwise_alg act = blockdnn::eltwise_alg::tanh; // vanilla only
    float alpha = 0.f;
    dim_t I = 0, H = 0;
    std::vector<float> W, R, b_ih, b_hh; // [G*H][I], [G*H][H], [G*H], [G*H]
};

inline double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// Runs one layer over x [T][N][I] (reverse: from t = T - 1 down), starting from h and c
/// ([N][H], updated in place to the final states). Returns [T][N][H].
inline std::vector<float> run(const layer_t &L, const std::vector<float> &x, dim_t T, dim_t N, bool reverse,
        std::vector<float> &h, std::vector<float> &c) {
    const dim_t I = L.I, H = L.H;
    const bool pt = L.fw == rnn_framework::pytorch;
    // Row blocks of each named gate in the framework's order.
    const int gi = 0, gf = pt ? 1 : 2, gc = pt ? 2 : 3, go = pt ? 3 : 1; // lstm
    const int gz = pt ? 1 : 0, gr = pt ? 0 : 1, gn = 2;                  // gru: update, reset, candidate
    auto wx = [&](int g, dim_t n, dim_t o, const float *xt) {
        double s = L.b_ih[g * H + o];
        for (dim_t i = 0; i < I; ++i) s += static_cast<double>(L.W[(g * H + o) * I + i]) * xt[n * I + i];
        return s;
    };
    auto rh = [&](int g, dim_t n, dim_t o, const std::vector<double> &hv) {
        double s = L.b_hh[g * H + o];
        for (dim_t j = 0; j < H; ++j) s += static_cast<double>(L.R[(g * H + o) * H + j]) * hv[n * H + j];
        return s;
    };
    std::vector<float> out(T * N * H);
    for (dim_t step = 0; step < T; ++step) {
        const dim_t t = reverse ? T - 1 - step : step;
        const float *xt = &x[t * N * I];
        const std::vector<double> hp(h.begin(), h.end());
        for (dim_t n = 0; n < N; ++n) {
            std::vector<double> r(H);
            if (L.cell == rnn_cell::gru)
                for (dim_t o = 0; o < H; ++o) r[o] = sigm(wx(gr, n, o, xt) + rh(gr, n, o, hp)) * hp[n * H + o];
            for (dim_t o = 0; o < H; ++o) {
                double hn = 0;
                switch (L.cell) {
                case rnn_cell::vanilla_rnn: {
                    const double a = wx(0, n, o, xt) + rh(0, n, o, hp);
                    hn = L.act == blockdnn::eltwise_alg::relu         ? (a > 0 ? a : L.alpha * a)
                            : L.act == blockdnn::eltwise_alg::sigmoid ? sigm(a)
                                                                      : std::tanh(a);
                    break;
                }
                case rnn_cell::lstm: {
                    auto gate = [&](int g) { return wx(g, n, o, xt) + rh(g, n, o, hp); };
                    const double cn = sigm(gate(gf)) * c[n * H + o] + sigm(gate(gi)) * std::tanh(gate(gc));
                    c[n * H + o] = static_cast<float>(cn);
                    hn = sigm(gate(go)) * std::tanh(cn);
                    break;
                }
                case rnn_cell::gru: {
                    // ONNX, linear_before_reset = 0: h~ = tanh(W_h x + Wb_h + (r . h) R_h^T + Rb_h)
                    const double z = sigm(wx(gz, n, o, xt) + rh(gz, n, o, hp));
                    double s = L.b_hh[gn * H + o];
                    for (dim_t j = 0; j < H; ++j) s += static_cast<double>(L.R[(gn * H + o) * H + j]) * r[j];
                    hn = (1 - z) * std::tanh(wx(gn, n, o, xt) + s) + z * hp[n * H + o];
                    break;
                }
                case rnn_cell::lbr_gru: {
                    const double z = sigm(wx(gz, n, o, xt) + rh(gz, n, o, hp));
                    const double rr = sigm(wx(gr, n, o, xt) + rh(gr, n, o, hp));
                    hn = (1 - z) * std::tanh(wx(gn, n, o, xt) + rr * rh(gn, n, o, hp)) + z * hp[n * H + o];
                    break;
                }
                }
                h[n * H + o] = static_cast<float>(hn);
                out[(t * N + n) * H + o] = h[n * H + o];
            }
        }
    }
    return out;
}

} // namespace rnn_oracle
