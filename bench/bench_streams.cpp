// SPDX-License-Identifier: Apache-2.0
// Streams through the public API: what queueing an op costs, how soon queued work runs, and the
// throughput streams with thread budgets give (issue 22's floors). Rows differ from their
// baseline in the last path element only; T is set_num_threads(T) for the row:
//   stream_overhead/t<T>/eltwise16k_x1000/{direct,one_stream,one_stream_budget1}   1000 relu
//       eltwise_fwd on 16384 floats (src != dst, both in cache), called on the default stream vs
//       queued on one stream (all threads, or a 1-thread budget) under stream_scope then
//       synchronize() (ns_per_op; submit_ns_per_op: the
//       stream_scope loop alone, which the ops may overlap). At t1 submit runs inline, so the
//       row is the queueing path's own cost.
//   stream_latency/t<T>/empty_op/{synchronize,event}   s.submit([] {}) then s.synchronize(), or
//       s.record().synchronize(): submit to done as the caller sees it. The caller helps while
//       it waits, so it may run the op itself.
//   stream_latency/t2/empty_op/{worker_hot,worker_idle}   submit to the moment the caller, spinning
//       without helping, sees the op's store: a pool worker took and ran it (manual time). hot:
//       back to back, the worker still looking for work; idle: 200 us apart, so the worker
//       has gone to sleep and submit must wake it. Counters p50_ns and p90_ns: the time is a
//       mean, and wake-ups have a long tail.
//   lstm_t100_mb1_c128/t1/x1/sequential, lstm_t100_mb1_c128/t2/x1/{sequential,budget1}   one
//       request (LSTM, T 100, mb 1, slc = sic = dhc = 128, weights given at creation): on the
//       default stream with T threads vs on a stream(stream_options {.threads = 1}). Twice
//       budget1's rate is the ideal of x8/two_streams.
//   lstm_t100_mb1_c128/t2/x8/{sequential,two_streams,two_streams_nobudget}   eight requests:
//       one after another on the default stream (all threads), 4 on each of make_streams(2)
//       (one thread each), or on two streams without a budget (each op split for both threads).
// LSTM rows count requests in items_per_second. Times are wall-clock (UseRealTime); with
// --benchmark_repetitions every row also reports a "min" aggregate (bench_common.hpp), taken
// over each column on its own (its items_per_second is the slowest repetition's).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <immintrin.h>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "blockdnn/blockdnn.hpp"

using namespace blockdnn;

namespace {

// set_num_threads(n) for its lifetime; declare it before the streams so they go first.
class threads_scope {
public:
    explicit threads_scope(int n) { set_num_threads(n); }
    ~threads_scope() { reset_num_threads(); }
    threads_scope(const threads_scope &) = delete;
    threads_scope &operator=(const threads_scope &) = delete;
};

void fill_uniform(const tensor &t, float scale, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    float *p = t.f32();
    for (dim_t i = 0; i < t.desc().nelems(); ++i) p[i] = scale * u(gen);
}

// ---- stream overhead ----

constexpr int overhead_ops = 1000;
constexpr dim_t overhead_floats = 16384;

enum class overhead_mode { direct, one_stream, one_stream_budget1 };

void stream_overhead(benchmark::State &state, int nthr, overhead_mode mode) {
    const bool on_stream = mode != overhead_mode::direct;
    using clock = std::chrono::steady_clock;
    const threads_scope ts(nthr);
    const tensor_desc d({overhead_floats}, format_tag::x);
    const eltwise_fwd relu(eltwise_alg::relu, 0.f, 0.f, d);
    const tensor src(d), dst(d);
    fill_uniform(src, 1.f, 1);
    stream s(stream_options {.threads = mode == overhead_mode::one_stream_budget1 ? 1 : 0});
    clock::duration submitting {};
    const auto t0 = clock::now();
    for (auto _ : state) {
        if (on_stream) {
            const auto q0 = clock::now();
            {
                const stream_scope on(s);
                for (int i = 0; i < overhead_ops; ++i) relu.execute(src, dst);
            }
            submitting += clock::now() - q0;
            s.synchronize();
        } else {
            for (int i = 0; i < overhead_ops; ++i) relu.execute(src, dst);
        }
    }
    const double ops = static_cast<double>(state.iterations()) * overhead_ops;
    state.counters["ns_per_op"] = std::chrono::duration<double, std::nano>(clock::now() - t0).count() / ops;
    // The caller's side alone: the stream_scope loop that queues the ops (work may overlap it).
    if (on_stream)
        state.counters["submit_ns_per_op"] = std::chrono::duration<double, std::nano>(submitting).count() / ops;
    state.SetLabel(relu.impl_name());
}

// ---- submit-to-done latency ----

void latency_caller(benchmark::State &state, int nthr, bool with_event) {
    const threads_scope ts(nthr);
    stream s;
    for (auto _ : state) {
        s.submit([] {});
        if (with_event) s.record().synchronize();
        else s.synchronize();
    }
}

void latency_worker(benchmark::State &state, bool idle) {
    const threads_scope ts(2);
    stream s;
    std::atomic<bool> ran {false};
    std::vector<double> ns;
    for (auto _ : state) {
        ran.store(false, std::memory_order_relaxed); // the last op has finished (synchronize)
        const auto t0 = std::chrono::steady_clock::now();
        s.submit([&ran] { ran.store(true, std::memory_order_release); });
        while (!ran.load(std::memory_order_acquire)) _mm_pause(); // acquire: pairs with the op's store
        const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
        state.SetIterationTime(dt.count());
        ns.push_back(dt.count() * 1e9);
        s.synchronize();
        if (idle) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    // The time is the mean; wake-ups have a long tail, so the median and 90th percentile too.
    std::sort(ns.begin(), ns.end());
    if (!ns.empty()) {
        state.counters["p50_ns"] = ns[ns.size() / 2];
        state.counters["p90_ns"] = ns[ns.size() * 9 / 10];
    }
}

// ---- small LSTM throughput ----

struct lstm_t {
    static constexpr dim_t t = 100, mb = 1, c = 128;
    static rnn_desc desc() {
        rnn_desc d;
        d.cell = rnn_cell::lstm;
        d.t = t, d.mb = mb, d.slc = d.dhc = c;
        return d;
    }
    // Weights ~ 1 / sqrt(fan-in), inputs in [-1, 1): unsaturated gates, as in bench_rnn.
    static rnn_fwd make_op() {
        const rnn_fwd shape(desc());
        const tensor wl(shape.weights_layer_desc()), wi(shape.weights_iter_desc()), b(shape.bias_desc());
        fill_uniform(wl, 1.f / std::sqrt(static_cast<float>(c)), 2);
        fill_uniform(wi, 1.f / std::sqrt(static_cast<float>(c)), 3);
        fill_uniform(b, 0.1f, 4);
        return rnn_fwd(desc(), wl, wi, b);
    }

    explicit lstm_t(int requests) : op(make_op()) {
        for (int k = 0; k < requests; ++k) {
            src.emplace_back(op.src_layer_desc());
            dst.emplace_back(op.dst_layer_desc());
            fill_uniform(src.back(), 1.f, 10 + k);
        }
    }
    void run(int k) const { op.execute({.src_layer = src[k], .dst_layer = dst[k]}); }

    rnn_fwd op;
    std::vector<tensor> src, dst;
};

enum class lstm_mode { sequential, budget1, two_streams, two_streams_nobudget };

void lstm_requests(benchmark::State &state, int nthr, int requests, lstm_mode mode) {
    const threads_scope ts(nthr);
    const lstm_t net(requests);
    std::vector<std::unique_ptr<stream>> ss;
    switch (mode) {
    case lstm_mode::sequential: break;
    case lstm_mode::budget1: ss.push_back(std::make_unique<stream>(stream_options {.threads = 1})); break;
    case lstm_mode::two_streams: ss = make_streams(2); break;
    case lstm_mode::two_streams_nobudget:
        for (int k = 0; k < 2; ++k) ss.push_back(std::make_unique<stream>());
        break;
    }
    for (auto _ : state) {
        if (ss.empty()) {
            for (int k = 0; k < requests; ++k) net.run(k);
            continue;
        }
        for (int k = 0; k < requests; ++k) {
            const stream_scope on(*ss[k % ss.size()]);
            net.run(k);
        }
        for (auto &s : ss) s->synchronize();
    }
    state.SetItemsProcessed(state.iterations() * requests);
    std::string label = net.op.impl_name();
    for (auto &s : ss) label += " budget=" + std::to_string(s->threads());
    state.SetLabel(label);
}

// Registers a row timed in wall-clock time, with the "min" aggregate (worker_* rows time
// themselves: UseManualTime).
template <typename... Args>
benchmark::internal::Benchmark *add(const std::string &name, void (*fn)(benchmark::State &, Args...), Args... args) {
    return bench::with_min(benchmark::RegisterBenchmark(name.c_str(), fn, args...)->UseRealTime());
}

void register_all() {
    for (int t : {1, 2}) {
        const std::string base = "stream_overhead/t" + std::to_string(t) + "/eltwise16k_x1000/";
        add(base + "direct", stream_overhead, t, overhead_mode::direct);
        add(base + "one_stream", stream_overhead, t, overhead_mode::one_stream);
        add(base + "one_stream_budget1", stream_overhead, t, overhead_mode::one_stream_budget1);
    }
    for (int t : {1, 2}) {
        const std::string base = "stream_latency/t" + std::to_string(t) + "/empty_op/";
        add(base + "synchronize", latency_caller, t, false);
        add(base + "event", latency_caller, t, true);
    }
    bench::with_min(benchmark::RegisterBenchmark("stream_latency/t2/empty_op/worker_hot", latency_worker, false))
            ->UseManualTime();
    // Each iteration sleeps 200 us untimed: a fixed count keeps the row short.
    bench::with_min(benchmark::RegisterBenchmark("stream_latency/t2/empty_op/worker_idle", latency_worker, true))
            ->UseManualTime()
            ->Iterations(2000);

    const std::string lstm = "lstm_t100_mb1_c128/";
    add(lstm + "t1/x1/sequential", lstm_requests, 1, 1, lstm_mode::sequential);
    add(lstm + "t2/x1/sequential", lstm_requests, 2, 1, lstm_mode::sequential);
    add(lstm + "t2/x1/budget1", lstm_requests, 2, 1, lstm_mode::budget1);
    add(lstm + "t2/x8/sequential", lstm_requests, 2, 8, lstm_mode::sequential);
    add(lstm + "t2/x8/two_streams", lstm_requests, 2, 8, lstm_mode::two_streams);
    add(lstm + "t2/x8/two_streams_nobudget", lstm_requests, 2, 8, lstm_mode::two_streams_nobudget);
}

} // namespace

int main(int argc, char **argv) { return bench::bench_main(argc, argv, register_all); }
