// SPDX-License-Identifier: Apache-2.0
// The scheduler beside OpenMP (libgomp) and oneTBB in one binary. Rows differ from their
// baselines in the last path element only:
//   forkjoin/t<T>/empty/<impl>      one parallel_for over 64 iterations with an empty body
//   forkjoin/t<T>/64x1us/<impl>     64 iterations of ~1 us of arithmetic each
//   spawn/t<T>/flat/<impl>          one thread spawns 1024 empty tasks, then waits (ns_per_task)
//   spawn/t<T>/tree/<impl>          binary tree of 1023 empty tasks, each spawning two (ns_per_task)
//   steal/thieves1/blockdnn         one thief draining a deque the owner filled (steals/s)
//   streams/t2/<work>/{serial,two_streams,two_streams_budget1}/blockdnn   two independent
//                                   workloads, one after the other on the caller vs on two
//                                   streams without a budget (each op split for both threads)
//                                   vs on make_streams(2) (one thread each)
// <impl> is blockdnn, omp or tbb; omp and tbb rows exist when the build found them
// (-Donednn_baseline, default auto). Times are wall-clock (UseRealTime).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "blockdnn/blockdnn.hpp"
#include "sched/task_group.hpp"
#include "sched/thread_pool.hpp"

#if BLOCKDNN_BENCH_OMP
#include <omp.h>
#endif
#if BLOCKDNN_BENCH_TBB
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#endif

using namespace blockdnn;
using namespace blockdnn::impl::sched;

namespace {

constexpr int forkjoin_n = 64;
constexpr int flat_tasks = 1024;
constexpr int tree_depth = 9; // 2^10 - 1 = 1023 tasks

// About `iters` dependent multiply-adds: the same arithmetic for every implementation.
void spin(std::uint64_t iters) {
    std::uint64_t x = 1;
    for (std::uint64_t i = 0; i < iters; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    benchmark::DoNotOptimize(x);
}

// Iterations of spin() per microsecond on this machine (the fastest of a few tries).
std::uint64_t iters_per_us() {
    static const std::uint64_t v = [] {
        double best = 1e30;
        const std::uint64_t n = 2000000;
        for (int r = 0; r < 5; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            spin(n);
            best = std::min(
                    best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        return static_cast<std::uint64_t>(n / best);
    }();
    return v;
}

// Runs the benchmark loop around body() and reports wall-clock nanoseconds per task (the
// loop's time over iterations x tasks) beside the usual time per iteration.
template <typename F>
void timed_tasks(benchmark::State &state, double tasks, F &&body) {
    const auto t0 = std::chrono::steady_clock::now();
    for (auto _ : state) body();
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    state.counters["ns_per_task"] = ns / (static_cast<double>(state.iterations()) * tasks);
}

// ---- blockdnn ----

void forkjoin_blockdnn(benchmark::State &state, int nthr, bool work) {
    thread_pool_t pool(nthr);
    const std::uint64_t w = work ? iters_per_us() : 0;
    for (auto _ : state)
        pool.parallel_for(forkjoin_n, 1, [&](dim_t b, dim_t e) {
            for (dim_t i = b; i < e; ++i) work ? spin(w) : benchmark::DoNotOptimize(i);
        });
}

void spawn_flat_blockdnn(benchmark::State &state, int nthr) {
    thread_pool_t pool(nthr);
    timed_tasks(state, flat_tasks, [&] {
        task_group_t g(pool);
        for (int i = 0; i < flat_tasks; ++i) g.run([] {});
        g.wait();
    });
}

void spawn_tree_blockdnn(benchmark::State &state, int nthr) {
    thread_pool_t pool(nthr);
    // Each task runs a group of two children and waits for it (nested fork-join).
    struct node {
        static void run(thread_pool_t &p, int depth) {
            if (depth == 0) return;
            task_group_t g(p);
            g.run([&p, depth] { run(p, depth - 1); });
            g.run([&p, depth] { run(p, depth - 1); });
            g.wait();
        }
    };
    timed_tasks(state, (1 << (tree_depth + 1)) - 2, [&] { node::run(pool, tree_depth + 1); });
}

// One owner fills its deque, a thief thread drains it; the owner waits for the last steal.
void steal_blockdnn(benchmark::State &state) {
    constexpr int n = 4096;
    wsq_t<int> q(n);
    std::atomic<int> round {0}, taken_round {0};
    std::atomic<bool> quit {false};
    std::thread thief([&] {
        int seen = 0;
        for (;;) {
            while (round.load(std::memory_order_acquire) == seen) { // yield: the machine may be shared
                if (quit.load(std::memory_order_acquire)) return;
                std::this_thread::yield();
            }
            ++seen;
            int x, got = 0;
            while (got < n)
                if (q.steal(x) == steal_result::success) ++got;
            taken_round.store(seen, std::memory_order_release);
        }
    });
    int r = 0;
    for (auto _ : state) {
        for (int i = 0; i < n; ++i) q.push(i);
        round.store(++r, std::memory_order_release);
        while (taken_round.load(std::memory_order_acquire) != r) std::this_thread::yield();
    }
    quit.store(true, std::memory_order_release);
    thief.join();
    state.counters["steals"] = benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate);
}

// Two independent workloads: run one after the other, or each on its own stream.
enum class streams_mode { serial, two_streams, two_streams_budget1 };

void streams_blockdnn(benchmark::State &state, bool reorders, streams_mode mode) {
    set_num_threads(2);
    {
        const std::uint64_t w = 200 * iters_per_us();
        const tensor_desc plain({1, 64, 56, 56}, format_tag::nchw), blocked({1, 64, 56, 56}, format_tag::nChw16c);
        tensor a(plain), b(plain), ab(blocked), bb(blocked);
        auto work_a = [&] { reorders ? reorder(a, ab) : spin(w); };
        auto work_b = [&] { reorders ? reorder(b, bb) : spin(w); };
        std::vector<std::unique_ptr<stream>> ss;
        if (mode == streams_mode::two_streams_budget1) ss = make_streams(2);
        else if (mode == streams_mode::two_streams)
            for (int k = 0; k < 2; ++k) ss.push_back(std::make_unique<stream>());
        for (auto _ : state) {
            if (ss.empty()) {
                work_a();
                work_b();
                continue;
            }
            ss[0]->submit(work_a);
            ss[1]->submit(work_b);
            ss[0]->synchronize();
            ss[1]->synchronize();
        }
    } // the streams finish before the thread count changes
    reset_num_threads();
}

// ---- OpenMP (libgomp) ----
#if BLOCKDNN_BENCH_OMP
void forkjoin_omp(benchmark::State &state, int nthr, bool work) {
    const std::uint64_t w = work ? iters_per_us() : 0;
    for (auto _ : state) {
#pragma omp parallel for num_threads(nthr) schedule(static)
        for (int i = 0; i < forkjoin_n; ++i) work ? spin(w) : benchmark::DoNotOptimize(i);
    }
}

void spawn_flat_omp(benchmark::State &state, int nthr) {
    timed_tasks(state, flat_tasks, [&] {
#pragma omp parallel num_threads(nthr)
#pragma omp single
        for (int i = 0; i < flat_tasks; ++i) {
#pragma omp task
            {}
        }
    });
}

void tree_omp(int depth) {
    if (depth == 0) return;
#pragma omp task
    tree_omp(depth - 1);
#pragma omp task
    tree_omp(depth - 1);
#pragma omp taskwait
}

void spawn_tree_omp(benchmark::State &state, int nthr) {
    timed_tasks(state, (1 << (tree_depth + 1)) - 2, [&] {
#pragma omp parallel num_threads(nthr)
#pragma omp single
        tree_omp(tree_depth + 1);
    });
}
#endif

// ---- oneTBB ----
#if BLOCKDNN_BENCH_TBB
void forkjoin_tbb(benchmark::State &state, int nthr, bool work) {
    const std::uint64_t w = work ? iters_per_us() : 0;
    tbb::task_arena arena(nthr);
    arena.execute([&] {
        for (auto _ : state)
            tbb::parallel_for(tbb::blocked_range<int>(0, forkjoin_n), [&](const tbb::blocked_range<int> &r) {
                for (int i = r.begin(); i < r.end(); ++i) work ? spin(w) : benchmark::DoNotOptimize(i);
            });
    });
}

void spawn_flat_tbb(benchmark::State &state, int nthr) {
    tbb::task_arena arena(nthr);
    arena.execute([&] {
        timed_tasks(state, flat_tasks, [&] {
            tbb::task_group g;
            for (int i = 0; i < flat_tasks; ++i) g.run([] {});
            g.wait();
        });
    });
}

void tree_tbb(int depth) {
    if (depth == 0) return;
    tbb::task_group g;
    g.run([depth] { tree_tbb(depth - 1); });
    g.run([depth] { tree_tbb(depth - 1); });
    g.wait();
}

void spawn_tree_tbb(benchmark::State &state, int nthr) {
    tbb::task_arena arena(nthr);
    arena.execute([&] { timed_tasks(state, (1 << (tree_depth + 1)) - 2, [&] { tree_tbb(tree_depth + 1); }); });
}
#endif

void add(const std::string &name, void (*fn)(benchmark::State &, int, bool), int nthr, bool work) {
    benchmark::RegisterBenchmark(name.c_str(), fn, nthr, work)->UseRealTime();
}
void add(const std::string &name, void (*fn)(benchmark::State &, int), int nthr) {
    benchmark::RegisterBenchmark(name.c_str(), fn, nthr)->UseRealTime();
}

void register_all() {
    for (int t : {1, 2}) {
        const std::string ts = "/t" + std::to_string(t) + "/";
        for (bool work : {false, true}) {
            const std::string base = "forkjoin" + ts + (work ? "64x1us/" : "empty/");
            add(base + "blockdnn", forkjoin_blockdnn, t, work);
#if BLOCKDNN_BENCH_OMP
            add(base + "omp", forkjoin_omp, t, work);
#endif
#if BLOCKDNN_BENCH_TBB
            add(base + "tbb", forkjoin_tbb, t, work);
#endif
        }
        add("spawn" + ts + "flat/blockdnn", spawn_flat_blockdnn, t);
        add("spawn" + ts + "tree/blockdnn", spawn_tree_blockdnn, t);
#if BLOCKDNN_BENCH_OMP
        add("spawn" + ts + "flat/omp", spawn_flat_omp, t);
        add("spawn" + ts + "tree/omp", spawn_tree_omp, t);
#endif
#if BLOCKDNN_BENCH_TBB
        add("spawn" + ts + "flat/tbb", spawn_flat_tbb, t);
        add("spawn" + ts + "tree/tbb", spawn_tree_tbb, t);
#endif
    }
    benchmark::RegisterBenchmark("steal/thieves1/blockdnn", steal_blockdnn)->UseRealTime();
    for (bool reorders : {false, true}) {
        const std::string base = std::string("streams/t2/") + (reorders ? "reorder_1x64x56x56" : "spin200us") + "/";
        const std::pair<streams_mode, const char *> modes[] = {{streams_mode::serial, "serial"},
                {streams_mode::two_streams, "two_streams"}, {streams_mode::two_streams_budget1, "two_streams_budget1"}};
        for (const auto &[mode, name] : modes)
            benchmark::RegisterBenchmark((base + name + "/blockdnn").c_str(), streams_blockdnn, reorders, mode)
                    ->UseRealTime();
    }
}

} // namespace

int main(int argc, char **argv) {
    return bench::bench_main(argc, argv, register_all,
            [] { benchmark::AddCustomContext("spin_iters_per_us", std::to_string(iters_per_us())); });
}
