// SPDX-License-Identifier: Apache-2.0
// Reference RNN forward: the cell equations of include/blockdnn/rnn.hpp (oneDNN's RNN
// developer guide; LSTM: Hochreiter & Schmidhuber 1997 / Gers et al. 2000; GRU: Cho et al.
// 2014), one time step at a time. Gate pre-activations and activations are computed in double;
// states are rounded to float after each step, as the frameworks keep them. Tensors are read
// and written only through tensor_desc::offset, so every allowed layout works.
#include <algorithm>
#include <cmath>
#include <vector>

#include "sched/parallel.hpp"
#include "core/utils.hpp"
#include "ops/rnn/rnn_impl.hpp"

namespace blockdnn::impl {

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

class rnn_fwd_ref_t final : public rnn_impl_t {
public:
    explicit rnn_fwd_ref_t(const rnn_prb_t &prb) : p_(prb) {}

    void take_weights(const rnn_args_t &weights) override {
        auto keep = [](std::vector<float> &dst, const float *src, const tensor_desc &d) {
            if (src) dst.assign(src, src + d.nelems_padded());
        };
        keep(wl_, weights.wei_layer, p_.wei_layer);
        keep(wi_, weights.wei_iter, p_.wei_iter);
        keep(bias_, weights.bias, p_.bias);
    }

    void execute(const rnn_args_t &given) const override {
        rnn_args_t mem = given;
        if (!mem.wei_layer) {
            mem.wei_layer = wl_.data();
            mem.wei_iter = wi_.data();
            mem.bias = bias_.empty() ? nullptr : bias_.data();
        }
        const rnn_desc &d = p_.desc;
        const dim_t T = d.t, MB = d.mb, DHC = d.dhc;
        // The first layer's input as a dense [t][mb][slc] array; later layers read the
        // previous layer's [t][mb][dhc] output of the same direction.
        std::vector<float> src(T * MB * d.slc);
        for (dim_t t = 0; t < T; ++t)
            for (dim_t n = 0; n < MB; ++n)
                for (dim_t ch = 0; ch < d.slc; ++ch) {
                    const dim_t idx[] = {t, n, ch};
                    src[(t * MB + n) * d.slc + ch] = mem.src_layer[p_.src_layer.offset(idx)];
                }

        std::vector<std::vector<float>> last(p_.n_dirs); // last layer's [t][mb][dhc], per direction
        for (dim_t dir = 0; dir < p_.n_dirs; ++dir) {
            const bool reverse = d.direction == rnn_direction::r2l || dir == 1;
            std::vector<float> in = src, out(T * MB * DHC);
            dim_t in_c = d.slc;
            for (dim_t lay = 0; lay < d.l; ++lay) {
                std::vector<float> h(MB * DHC, 0.f), c(MB * DHC, 0.f);
                read_state(mem.src_iter, lay, dir, h);
                read_state(mem.src_iter_c, lay, dir, c);
                std::vector<float> h_new(MB * DHC), c_new(MB * DHC);
                const dense_weights_t w = dense_weights(mem, lay, dir, in_c);
                for (dim_t step = 0; step < T; ++step) {
                    const dim_t t = reverse ? T - 1 - step : step;
                    cell(w, &in[t * MB * in_c], in_c, h, c, h_new, c_new);
                    h.swap(h_new);
                    c.swap(c_new);
                    std::copy(h.begin(), h.end(), out.begin() + t * MB * DHC);
                }
                write_state(mem.dst_iter, lay, dir, h);
                write_state(mem.dst_iter_c, lay, dir, c);
                in.swap(out);
                in_c = DHC;
            }
            last[dir] = std::move(in);
        }

        for (dim_t t = 0; t < T; ++t)
            for (dim_t n = 0; n < MB; ++n)
                for (dim_t ch = 0; ch < p_.dlc; ++ch) {
                    const dim_t dir = ch / DHC, o = ch % DHC, at = (t * MB + n) * DHC + o;
                    float v = last[dir][at];
                    if (d.direction == rnn_direction::bi_sum) v = last[0][at] + last[1][at];
                    const dim_t idx[] = {t, n, ch};
                    mem.dst_layer[p_.dst_layer.offset(idx)] = v;
                }
    }

private:
    double wei_layer(const rnn_args_t &m, dim_t lay, dim_t dir, dim_t i, dim_t g, dim_t o) const {
        const dim_t idx[] = {lay, dir, i, g, o};
        return m.wei_layer[p_.wei_layer.offset(idx)];
    }
    double wei_iter(const rnn_args_t &m, dim_t lay, dim_t dir, dim_t i, dim_t g, dim_t o) const {
        const dim_t idx[] = {lay, dir, i, g, o};
        return m.wei_iter[p_.wei_iter.offset(idx)];
    }
    double bias(const rnn_args_t &m, dim_t lay, dim_t dir, dim_t g, dim_t o) const {
        if (!m.bias) return 0.0;
        const dim_t idx[] = {lay, dir, g, o};
        return m.bias[p_.bias.offset(idx)];
    }

    void read_state(const float *s, dim_t lay, dim_t dir, std::vector<float> &v) const {
        if (!s) return;
        for (dim_t n = 0; n < p_.desc.mb; ++n)
            for (dim_t o = 0; o < p_.desc.dhc; ++o) {
                const dim_t idx[] = {lay, dir, n, o};
                v[n * p_.desc.dhc + o] = s[p_.states.offset(idx)];
            }
    }
    void write_state(float *s, dim_t lay, dim_t dir, const std::vector<float> &v) const {
        if (!s) return;
        for (dim_t n = 0; n < p_.desc.mb; ++n)
            for (dim_t o = 0; o < p_.desc.dhc; ++o) {
                const dim_t idx[] = {lay, dir, n, o};
                s[p_.states.offset(idx)] = v[n * p_.desc.dhc + o];
            }
    }

    double activation(double x) const {
        switch (p_.desc.activation) {
        case eltwise_alg::relu: return x > 0 ? x : p_.desc.alpha * x;
        case eltwise_alg::sigmoid: return sigmoid(x);
        default: return std::tanh(x);
        }
    }

    // The weights of one layer and direction as dense double matrices with the gates' outputs
    // contiguous: wl[i][g * dhc + o], wi[j][g * dhc + o], b[g * dhc + o]. The products below then
    // run along rows (each output still sums its inputs in ascending order, as a dot product).
    struct dense_weights_t {
        std::vector<double> wl, wi, b;
    };
    dense_weights_t dense_weights(const rnn_args_t &m, dim_t lay, dim_t dir, dim_t x_c) const {
        const dim_t G = p_.n_gates, DHC = p_.desc.dhc, GD = G * DHC;
        dense_weights_t w;
        w.wl.resize(x_c * GD);
        w.wi.resize(DHC * GD);
        w.b.resize(p_.n_bias_gates * DHC);
        for (dim_t g = 0; g < G; ++g)
            for (dim_t o = 0; o < DHC; ++o) {
                for (dim_t i = 0; i < x_c; ++i) w.wl[i * GD + g * DHC + o] = wei_layer(m, lay, dir, i, g, o);
                for (dim_t j = 0; j < DHC; ++j) w.wi[j * GD + g * DHC + o] = wei_iter(m, lay, dir, j, g, o);
            }
        for (dim_t g = 0; g < p_.n_bias_gates; ++g)
            for (dim_t o = 0; o < DHC; ++o) w.b[g * DHC + o] = bias(m, lay, dir, g, o);
        return w;
    }

    // One time step of one layer and direction for the whole batch: x is [mb][x_c], h and c the
    // previous states [mb][dhc]; h_new and c_new receive the new ones. The products are split
    // over (mb row, block of gate outputs), so the reference keeps up with big problems.
    void cell(const dense_weights_t &w, const float *x, dim_t x_c, const std::vector<float> &h,
            const std::vector<float> &c, std::vector<float> &h_new, std::vector<float> &c_new) const {
        const rnn_cell kind = p_.desc.cell;
        const dim_t MB = p_.desc.mb, G = p_.n_gates, DHC = p_.desc.dhc, GD = G * DHC;
        constexpr dim_t cols = 256;
        // W x_t and U h_{t-1} for every gate; gru's candidate uses U (r * h) instead, below.
        const dim_t uh_cols = kind == rnn_cell::gru ? 2 * DHC : GD;
        std::vector<double> wx(MB * GD, 0.0), uh(MB * GD, 0.0);
        const dim_t n_blocks = div_up(GD, cols);
        parallel_for(MB * n_blocks, 1, [&](dim_t begin, dim_t end) {
            for (dim_t k = begin; k < end; ++k) {
                const dim_t n = k / n_blocks, c0 = k % n_blocks * cols, c1 = std::min(GD, c0 + cols);
                double *sx = &wx[n * GD], *sh = &uh[n * GD];
                for (dim_t i = 0; i < x_c; ++i) {
                    const double xi = x[n * x_c + i];
                    const double *row = &w.wl[i * GD];
                    for (dim_t go = c0; go < c1; ++go) sx[go] += xi * row[go];
                }
                const dim_t c1_h = std::min(c1, uh_cols);
                for (dim_t j = 0; j < DHC; ++j) {
                    const double hj = h[n * DHC + j];
                    const double *row = &w.wi[j * GD];
                    for (dim_t go = c0; go < c1_h; ++go) sh[go] += hj * row[go];
                }
            }
        });
        std::vector<double> r_h(kind == rnn_cell::gru ? MB * DHC : 0);
        for (dim_t n = 0; n < MB; ++n) {
            auto pre = [&](dim_t g, dim_t o) {
                return wx[n * GD + g * DHC + o] + uh[n * GD + g * DHC + o] + w.b[g * DHC + o];
            };
            for (dim_t o = 0; o < DHC; ++o) {
                const dim_t at = n * DHC + o;
                switch (kind) {
                case rnn_cell::vanilla_rnn: h_new[at] = static_cast<float>(activation(pre(0, o))); break;
                case rnn_cell::lstm: {
                    const double ig = sigmoid(pre(0, o)), fg = sigmoid(pre(1, o));
                    const double cg = std::tanh(pre(2, o)), og = sigmoid(pre(3, o));
                    const double c_t = fg * c[at] + ig * cg;
                    c_new[at] = static_cast<float>(c_t);
                    h_new[at] = static_cast<float>(og * std::tanh(c_t));
                    break;
                }
                case rnn_cell::gru: r_h[at] = sigmoid(pre(1, o)) * h[at]; break;
                case rnn_cell::lbr_gru: {
                    const double u = sigmoid(pre(0, o)), r = sigmoid(pre(1, o));
                    const double cand = std::tanh(wx[n * GD + 2 * DHC + o] + w.b[2 * DHC + o]
                            + r * (uh[n * GD + 2 * DHC + o] + w.b[3 * DHC + o]));
                    h_new[at] = static_cast<float>(u * h[at] + (1 - u) * cand);
                    break;
                }
                }
            }
        }
        if (kind != rnn_cell::gru) return;
        // gru: the candidate needs r * h_{t-1} over all of dhc first.
        const dim_t o_blocks = div_up(DHC, cols);
        parallel_for(MB * o_blocks, 1, [&](dim_t begin, dim_t end) {
            for (dim_t k = begin; k < end; ++k) {
                const dim_t n = k / o_blocks, o0 = k % o_blocks * cols, o1 = std::min(DHC, o0 + cols);
                for (dim_t o = o0; o < o1; ++o) {
                    double s = 0;
                    for (dim_t j = 0; j < DHC; ++j) s += r_h[n * DHC + j] * w.wi[j * GD + 2 * DHC + o];
                    const double u = sigmoid(wx[n * GD + o] + uh[n * GD + o] + w.b[o]);
                    const double cand = std::tanh(wx[n * GD + 2 * DHC + o] + s + w.b[2 * DHC + o]);
                    h_new[n * DHC + o] = static_cast<float>(u * h[n * DHC + o] + (1 - u) * cand);
                }
            }
        });
    }

    const rnn_prb_t p_;
    std::vector<float> wl_, wi_, bias_; // weights given at creation
};

} // namespace

std::unique_ptr<rnn_impl_t> create_rnn_fwd_ref(const rnn_prb_t &prb) { return std::make_unique<rnn_fwd_ref_t>(prb); }

} // namespace blockdnn::impl
