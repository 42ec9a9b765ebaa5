// SPDX-License-Identifier: Apache-2.0
// Example: CPU streams, the C++ form of PyTorch's torch.cpu.Stream / torch.cpu.StreamContext
// examples. Ops called inside a `stream_scope` are queued on its stream and run on the library's
// threads while the caller goes on; `synchronize()` waits for them. Shown here:
//   1. a tensor copied on a stream (plain to plain, and plain to the blocked layout);
//   2. Conv2d(1, 1, 3) on a 1x1x100x100 input on a stream;
//   3. RNN(10, 10) (vanilla, tanh) on a 100-step sequence on a stream;
//   4. two streams with separate work, synchronized one after the other.
// Each result is compared bit for bit with the same op called directly (the default stream),
// and both times are printed. Exits 1 if a stream result differs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

#include "blockdnn/blockdnn.hpp"

using namespace blockdnn;

namespace {

// A tensor of uniform values in [-1, 1) from a fixed seed.
tensor random_tensor(const tensor_desc &d, unsigned seed) {
    const tensor t(d);
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (dim_t i = 0; i < d.nelems_padded(); ++i) t.f32()[i] = u(gen);
    return t;
}

bool identical(const tensor &a, const tensor &b) {
    return a.desc() == b.desc() && std::memcmp(a.data(), b.data(), a.desc().size_bytes()) == 0;
}

// The best of 20 wall times of fn(), in microseconds, after one untimed run.
template <typename F>
double best_us(F &&fn) {
    fn();
    double best = 1e30;
    for (int k = 0; k < 20; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

bool all_identical = true;

void report(const char *what, bool same, double direct_us, double stream_us) {
    std::printf("%-46s %-9s  direct %8.1f us, on streams %8.1f us\n", what, same ? "identical" : "DIFFERENT", direct_us,
            stream_us);
    all_identical = all_identical && same;
}

} // namespace

int main() {
    try {
        std::printf("blockdnn streams example: isa %s, threads %d\n", to_string(effective_isa()), get_num_threads());

        // 1. A tensor copied on a stream: y = x.clone() and x.to_mkldnn() in PyTorch.
        const tensor x = random_tensor(tensor_desc({1, 16, 100, 100}, format_tag::nchw), 1);
        {
            const tensor y_direct = reorder(x, format_tag::nchw);
            const tensor yb_direct = to_blocked(x);

            stream s;
            tensor y, yb;
            {
                stream_scope on(s);
                y = reorder(x, format_tag::nchw); // queued on s: returns at once, y not written yet
                yb = to_blocked(x);               // nchw -> nChw16c (nChw8c on AVX2), after it
            }
            s.synchronize(); // y and yb are ready
            const bool same = identical(y, y_direct) && identical(yb, yb_direct);

            const double direct = best_us([&] {
                reorder(x, format_tag::nchw);
                to_blocked(x);
            });
            const double streamed = best_us([&] {
                {
                    stream_scope on(s);
                    reorder(x, format_tag::nchw);
                    to_blocked(x);
                }
                s.synchronize();
            });
            report("1. copy 1x16x100x100 (nchw, then blocked):", same, direct, streamed);
        }

        // 2. Conv2d(1, 1, 3) on a 1x1x100x100 input (PyTorch's defaults: bias, no padding).
        conv_desc cd;
        cd.ic = 1;
        cd.oc = 1;
        cd.ih = cd.iw = 100;
        cd.kh = cd.kw = 3;
        cd.with_bias = true;
        cd.infer_dst_dims();
        const conv_fwd conv(cd, format_tag::nchw, random_tensor(tensor_desc(cd.wei_dims(false), format_tag::oihw), 2),
                random_tensor(tensor_desc(cd.bia_dims(), format_tag::x), 3), format_tag::nchw);
        const tensor image = random_tensor(conv.src_desc(), 4);
        const tensor conv_direct(conv.dst_desc());
        conv.execute(image, conv_direct);
        {
            stream s;
            const tensor out(conv.dst_desc());
            {
                stream_scope on(s);
                conv.execute(image, out); // queued on s
            }
            s.synchronize();
            const bool same = identical(out, conv_direct);

            const double direct = best_us([&] { conv.execute(image, out); });
            const double streamed = best_us([&] {
                {
                    stream_scope on(s);
                    conv.execute(image, out);
                }
                s.synchronize();
            });
            report("2. Conv2d(1, 1, 3) on 1x1x100x100:", same, direct, streamed);
        }

        // 3. RNN(10, 10) on a (100, 10) sequence: T = 100 steps, batch 1, 10 features; PyTorch's
        // output (every step's h) and h_n.
        rnn_desc rd;
        rd.cell = rnn_cell::vanilla_rnn;
        rd.activation = eltwise_alg::tanh;
        rd.t = 100;
        rd.mb = 1;
        rd.slc = 10;
        rd.dhc = 10;
        // Weights (layers, directions, input, gates, hidden) and bias (layers, directions, gates,
        // hidden); rnn_import_weights and rnn_import_bias take PyTorch's instead.
        const rnn_fwd rnn(rd, random_tensor(tensor_desc({1, 1, 10, 1, 10}, format_tag::ldigo), 5),
                random_tensor(tensor_desc({1, 1, 10, 1, 10}, format_tag::ldigo), 6),
                random_tensor(tensor_desc({1, 1, 1, 10}, format_tag::ldgo), 7));
        const tensor seq = random_tensor(rnn.src_layer_desc(), 8);
        const tensor rnn_direct(rnn.dst_layer_desc()), h_n_direct(rnn.dst_iter_desc());
        rnn.execute({.src_layer = seq, .dst_layer = rnn_direct, .dst_iter = h_n_direct});
        {
            stream s;
            const tensor out(rnn.dst_layer_desc()), h_n(rnn.dst_iter_desc());
            {
                stream_scope on(s);
                rnn.execute({.src_layer = seq, .dst_layer = out, .dst_iter = h_n});
            }
            s.synchronize();
            const bool same = identical(out, rnn_direct) && identical(h_n, h_n_direct);

            const double direct = best_us([&] { rnn.execute({.src_layer = seq, .dst_layer = out, .dst_iter = h_n}); });
            const double streamed = best_us([&] {
                {
                    stream_scope on(s);
                    rnn.execute({.src_layer = seq, .dst_layer = out, .dst_iter = h_n});
                }
                s.synchronize();
            });
            report("3. RNN(10, 10) on a (100, 10) sequence:", same, direct, streamed);
        }

        // 4. Two streams with separate work: the convolution on one, the RNN on the other, at the
        // same time. make_streams(2) shares the threads out between them (as
        // stream(stream_options{.threads = n}) would), so neither splits its ops for the
        // whole machine.
        {
            auto streams = make_streams(2);
            stream &s1 = *streams[0], &s2 = *streams[1];
            const tensor conv_out(conv.dst_desc()), rnn_out(rnn.dst_layer_desc());
            {
                stream_scope on(s1);
                conv.execute(image, conv_out);
            }
            {
                stream_scope on(s2);
                rnn.execute({.src_layer = seq, .dst_layer = rnn_out});
            }
            s1.synchronize(); // the conv's result is ready
            s2.synchronize(); // and the RNN's
            const bool same = identical(conv_out, conv_direct) && identical(rnn_out, rnn_direct);

            const double direct = best_us([&] {
                conv.execute(image, conv_out);
                rnn.execute({.src_layer = seq, .dst_layer = rnn_out});
            });
            const double streamed = best_us([&] {
                {
                    stream_scope on(s1);
                    conv.execute(image, conv_out);
                }
                {
                    stream_scope on(s2);
                    rnn.execute({.src_layer = seq, .dst_layer = rnn_out});
                }
                s1.synchronize();
                s2.synchronize();
            });
            char what[64];
            std::snprintf(
                    what, sizeof what, "4. conv and RNN on two streams (%d+%d threads):", s1.threads(), s2.threads());
            report(what, same, direct, streamed);
        }

        std::printf("%s\n",
                all_identical ? "streams: every result identical to the direct calls"
                              : "streams: FAILED, a stream result differs from the direct call");
        return all_identical ? 0 : 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "streams: %s\n", e.what());
        return 2;
    }
}
