// SPDX-License-Identifier: Apache-2.0
// Reference RNN forward: the cell equations of include/blockdnn/rnn.hpp (oneDNN's RNN
// developer guide; LSTM: Hochreiter & Schmidhuber 1997 / Gers et al. 2000; GRU: Cho et al.
// 2014), one time step at a time. Gate pre-activations and activations are computed in double;
// states are rounded to float after each step, as the frameworks keep them. Tensors are read
// and written only through tensor_desc::offset, so every allowed layout works.
#include <cmath>
#include <vector>

#include "rnn/rnn_impl.hpp"

namespace blockdnn::impl {

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

class rnn_fwd_ref_t final : public rnn_fwd_impl_t {
public:
    explicit rnn_fwd_ref_t(const rnn_prb_t &prb) : p_(prb) {}

    void execute(const rnn_fwd_mem_t &mem) const override {
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
                for (dim_t step = 0; step < T; ++step) {
                    const dim_t t = reverse ? T - 1 - step : step;
                    cell(mem, lay, dir, &in[t * MB * in_c], in_c, h, c, h_new, c_new);
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
    double wei_layer(const rnn_fwd_mem_t &m, dim_t lay, dim_t dir, dim_t i, dim_t g, dim_t o) const {
        const dim_t idx[] = {lay, dir, i, g, o};
        return m.wei_layer[p_.wei_layer.offset(idx)];
    }
    double wei_iter(const rnn_fwd_mem_t &m, dim_t lay, dim_t dir, dim_t i, dim_t g, dim_t o) const {
        const dim_t idx[] = {lay, dir, i, g, o};
        return m.wei_iter[p_.wei_iter.offset(idx)];
    }
    double bias(const rnn_fwd_mem_t &m, dim_t lay, dim_t dir, dim_t g, dim_t o) const {
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

    // One time step of one layer and direction for the whole batch: x is [mb][x_c], h and c the
    // previous states [mb][dhc]; h_new and c_new receive the new ones.
    void cell(const rnn_fwd_mem_t &m, dim_t lay, dim_t dir, const float *x, dim_t x_c, const std::vector<float> &h,
            const std::vector<float> &c, std::vector<float> &h_new, std::vector<float> &c_new) const {
        const rnn_cell kind = p_.desc.cell;
        const dim_t G = p_.n_gates, DHC = p_.desc.dhc;
        std::vector<double> wx(G * DHC), uh(G * DHC), r_h(DHC);
        for (dim_t n = 0; n < p_.desc.mb; ++n) {
            const float *xn = x + n * x_c, *hn = &h[n * DHC];
            // W x_t and U h_{t-1} for every gate (gru's candidate uses U (r * h) instead, below).
            for (dim_t g = 0; g < G; ++g)
                for (dim_t o = 0; o < DHC; ++o) {
                    double sx = 0, sh = 0;
                    for (dim_t i = 0; i < x_c; ++i) sx += xn[i] * wei_layer(m, lay, dir, i, g, o);
                    if (!(kind == rnn_cell::gru && g == 2))
                        for (dim_t j = 0; j < DHC; ++j) sh += hn[j] * wei_iter(m, lay, dir, j, g, o);
                    wx[g * DHC + o] = sx;
                    uh[g * DHC + o] = sh;
                }
            auto pre = [&](dim_t g, dim_t o) { return wx[g * DHC + o] + uh[g * DHC + o] + bias(m, lay, dir, g, o); };
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
                case rnn_cell::gru: r_h[o] = sigmoid(pre(1, o)) * hn[o]; break;
                case rnn_cell::lbr_gru: {
                    const double u = sigmoid(pre(0, o)), r = sigmoid(pre(1, o));
                    const double cand = std::tanh(wx[2 * DHC + o] + bias(m, lay, dir, 2, o)
                            + r * (uh[2 * DHC + o] + bias(m, lay, dir, 3, o)));
                    h_new[at] = static_cast<float>(u * hn[o] + (1 - u) * cand);
                    break;
                }
                }
            }
            if (kind != rnn_cell::gru) continue;
            // gru: the candidate needs r * h_{t-1} over all of dhc first.
            for (dim_t o = 0; o < DHC; ++o) {
                double s = 0;
                for (dim_t j = 0; j < DHC; ++j) s += r_h[j] * wei_iter(m, lay, dir, j, 2, o);
                const double u = sigmoid(pre(0, o));
                const double cand = std::tanh(wx[2 * DHC + o] + s + bias(m, lay, dir, 2, o));
                h_new[n * DHC + o] = static_cast<float>(u * hn[o] + (1 - u) * cand);
            }
        }
    }

    const rnn_prb_t p_;
};

} // namespace

std::unique_ptr<rnn_fwd_impl_t> create_rnn_fwd_ref(const rnn_prb_t &prb) {
    return std::make_unique<rnn_fwd_ref_t>(prb);
}

} // namespace blockdnn::impl
