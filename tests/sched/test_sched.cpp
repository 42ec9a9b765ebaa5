// SPDX-License-Identifier: Apache-2.0
// The work-stealing scheduler: the Chase-Lev deque alone, then pools of 1, 2 and 8 threads
// (more than this machine's cores): exact coverage, nesting, errors, destruction, the
// deterministic split, and the thread-count API. No test measures time.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sched/parallel.hpp"
#include "sched/global_pool.hpp"
#include "sched/spin_mutex.hpp"
#include "sched/task_group.hpp"
#include "sched/thread_pool.hpp"
#include "sched/wsq.hpp"
#include "common/test_util.hpp"

using namespace blockdnn::impl::sched;

namespace {

// Sanitizers slow atomics down 5-20x; keep their runs short with smaller counts.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif

const int thread_counts[] = {1, 2, 8};

// Unsets an environment variable for the test's lifetime.
class env_unset_guard {
public:
    explicit env_unset_guard(const char *name) : name_(name) {
        if (const char *old = std::getenv(name)) old_ = old;
        unsetenv(name);
    }
    ~env_unset_guard() {
        if (old_) setenv(name_, old_->c_str(), 1);
    }

private:
    const char *name_;
    std::optional<std::string> old_;
};

// Restores the library's default thread count when the test ends.
struct threads_guard {
    ~threads_guard() { blockdnn::reset_num_threads(); }
};

} // namespace

// ---- the deque alone ----

TEST(Wsq, OwnerTakesNewestThiefTakesOldest) {
    wsq_t<int> q(4);
    for (int i = 1; i <= 5; ++i) q.push(i);
    int x = 0;
    ASSERT_TRUE(q.pop(x));
    EXPECT_EQ(x, 5);
    ASSERT_EQ(q.steal(x), steal_result::success);
    EXPECT_EQ(x, 1);
    ASSERT_TRUE(q.pop(x));
    EXPECT_EQ(x, 4);
    ASSERT_EQ(q.steal(x), steal_result::success);
    EXPECT_EQ(x, 2);
    ASSERT_TRUE(q.pop(x));
    EXPECT_EQ(x, 3);
    EXPECT_FALSE(q.pop(x));
    EXPECT_EQ(q.steal(x), steal_result::empty);
    EXPECT_TRUE(q.empty());
}

TEST(Wsq, WrapsAroundAndGrows) {
    wsq_t<int> q(2);
    EXPECT_EQ(q.capacity(), 2);
    // Many push/pop rounds move the indices far past the ring size (wrap-around).
    int x = 0;
    for (int round = 0; round < 1000; ++round) {
        q.push(round);
        q.push(round + 1);
        ASSERT_TRUE(q.pop(x));
        EXPECT_EQ(x, round + 1);
        ASSERT_EQ(q.steal(x), steal_result::success);
        EXPECT_EQ(x, round);
    }
    EXPECT_EQ(q.capacity(), 2);
    // 1000 items at once grow the ring; order is kept across growth.
    for (int i = 0; i < 1000; ++i) q.push(i);
    EXPECT_GE(q.capacity(), 1000);
    for (int i = 0; i < 500; ++i) {
        ASSERT_EQ(q.steal(x), steal_result::success);
        EXPECT_EQ(x, i);
    }
    for (int i = 999; i >= 500; --i) {
        ASSERT_TRUE(q.pop(x));
        EXPECT_EQ(x, i);
    }
    EXPECT_FALSE(q.pop(x));
}

// One owner pushing (and popping every third push), three thieves stealing: every item is
// taken exactly once, across ring growth.
TEST(Wsq, StressOwnerAndThievesTakeEachItemOnce) {
    const int n = sanitized ? 60000 : 400000;
    wsq_t<int> q(8);
    std::vector<std::atomic<int>> taken(n);
    std::atomic<bool> owner_done {false};
    auto take = [&](int item) { taken[item].fetch_add(1, std::memory_order_relaxed); };
    std::vector<std::thread> thieves;
    for (int t = 0; t < 3; ++t)
        thieves.emplace_back([&] {
            int x;
            for (;;) {
                const steal_result r = q.steal(x);
                if (r == steal_result::success) take(x);
                else if (r == steal_result::empty && owner_done.load(std::memory_order_acquire) && q.empty()) return;
            }
        });
    int x;
    for (int i = 0; i < n; ++i) {
        q.push(i);
        if (i % 3 == 2 && q.pop(x)) take(x);
    }
    while (q.pop(x)) take(x);
    owner_done.store(true, std::memory_order_release);
    for (std::thread &t : thieves) t.join();
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += taken[i].load() != 1;
    EXPECT_EQ(bad, 0) << "items not taken exactly once";
}

// ---- the split ----

TEST(Split, ChunkCountFollowsTheRule) {
    EXPECT_EQ(chunk_count(0, 1, 4), 0);
    EXPECT_EQ(chunk_count(-5, 1, 4), 0);
    EXPECT_EQ(chunk_count(1000, 1, 1), 1); // one thread: one chunk
    EXPECT_EQ(chunk_count(7, 4, 8), 1);    // n < 2 * grain
    EXPECT_EQ(chunk_count(10, 4, 8), 2);   // n / grain
    EXPECT_EQ(chunk_count(10, 0, 2), 8);   // grain < 1 counts as 1; capped at 4 per thread
    EXPECT_EQ(chunk_count(1 << 20, 1, 2), chunks_per_thread * 2);
    EXPECT_EQ(chunk_count(1 << 20, 1, 8), chunks_per_thread * 8);
    dim_t b, e;
    chunk_bounds(10, 4, 0, b, e);
    EXPECT_EQ(std::make_pair(b, e), std::make_pair(dim_t(0), dim_t(3)));
    chunk_bounds(10, 4, 3, b, e);
    EXPECT_EQ(std::make_pair(b, e), std::make_pair(dim_t(8), dim_t(10)));
}

// The chunks a parallel_for hands out are the same on every run and are exactly the rule's,
// whoever runs them; each holds at least `grain` iterations.
TEST(Split, ChunksDependOnlyOnSizeGrainAndThreads) {
    for (int nthr : thread_counts) {
        thread_pool_t pool(nthr);
        const dim_t n = 100003, grain = 7;
        const int nchunks = chunk_count(n, grain, nthr);
        std::set<std::pair<dim_t, dim_t>> expected;
        for (int c = 0; c < nchunks; ++c) {
            dim_t b, e;
            chunk_bounds(n, nchunks, c, b, e);
            EXPECT_GE(e - b, grain);
            expected.insert({b, e});
        }
        for (int run = 0; run < 5; ++run) {
            std::mutex m;
            std::set<std::pair<dim_t, dim_t>> seen;
            pool.parallel_for(n, grain, [&](dim_t b, dim_t e) {
                std::lock_guard<std::mutex> lock(m);
                EXPECT_TRUE(seen.insert({b, e}).second) << "chunk run twice";
            });
            EXPECT_EQ(seen, expected) << "threads " << nthr << " run " << run;
        }
    }
}

// ---- pools ----

// Millions of iterations in grain-1 chunks: every index exactly once, for 1, 2 and 8 threads.
TEST(Pool, ParallelForVisitsEveryIndexOnce) {
    const dim_t n = sanitized ? (1 << 18) : (3 << 20);
    for (int nthr : thread_counts) {
        thread_pool_t pool(nthr);
        for (dim_t grain : {dim_t(1), dim_t(1000)}) {
            std::vector<std::uint8_t> hits(n, 0);
            pool.parallel_for(n, grain, [&](dim_t b, dim_t e) {
                for (dim_t i = b; i < e; ++i) ++hits[i]; // plain writes: chunks must not overlap
            });
            EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), n) << "threads " << nthr << " grain " << grain;
        }
    }
}

// A million tiny tasks through a task group: each runs exactly once.
TEST(Pool, MillionTinyTasksRunOnce) {
    const int n = sanitized ? (1 << 16) : (1 << 20);
    for (int nthr : thread_counts) {
        thread_pool_t pool(nthr);
        std::vector<std::uint8_t> hits(n, 0);
        task_group_t g(pool);
        for (int i = 0; i < n; ++i) g.run([&hits, i] { ++hits[i]; });
        g.wait();
        EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), n) << "threads " << nthr;
    }
}

TEST(Pool, NestedParallelForThreeDeep) {
    for (int nthr : thread_counts) {
        thread_pool_t pool(nthr);
        const dim_t a = 9, b = 13, c = 257;
        std::vector<std::uint8_t> hits(a * b * c, 0);
        pool.parallel_for(a, 1, [&](dim_t i0, dim_t i1) {
            for (dim_t i = i0; i < i1; ++i)
                pool.parallel_for(b, 1, [&](dim_t j0, dim_t j1) {
                    for (dim_t j = j0; j < j1; ++j)
                        pool.parallel_for(c, 1, [&](dim_t k0, dim_t k1) {
                            for (dim_t k = k0; k < k1; ++k) ++hits[(i * b + j) * c + k];
                        });
                });
        });
        EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), a * b * c) << "threads " << nthr;
    }
}

TEST(Pool, TaskGroupsNestInsideParallelFor) {
    for (int nthr : thread_counts) {
        thread_pool_t pool(nthr);
        std::atomic<int> count {0};
        pool.parallel_for(16, 1, [&](dim_t b, dim_t e) {
            for (dim_t i = b; i < e; ++i) {
                task_group_t g(pool);
                for (int t = 0; t < 50; ++t) g.run([&] { count.fetch_add(1, std::memory_order_relaxed); });
                g.wait();
            }
        });
        EXPECT_EQ(count.load(), 16 * 50) << "threads " << nthr;
    }
}

// The first exception reaches the caller; the pool stays usable.
TEST(Pool, ExceptionReachesCallerAndPoolStaysUsable) {
    for (int nthr : thread_counts) {
        thread_pool_t pool(nthr);
        for (int round = 0; round < 3; ++round) {
            try {
                pool.parallel_for(100000, 1, [&](dim_t b, dim_t e) {
                    for (dim_t i = b; i < e; ++i)
                        if (i % 20000 == 12345) throw std::runtime_error("boom at " + std::to_string(i));
                });
                ADD_FAILURE() << "no exception";
            } catch (const std::runtime_error &e) {
                EXPECT_EQ(std::string(e.what()).rfind("boom at ", 0), 0u) << e.what();
            }
            std::atomic<dim_t> sum {0};
            pool.parallel_for(1000, 1, [&](dim_t b, dim_t e) {
                for (dim_t i = b; i < e; ++i) sum.fetch_add(i, std::memory_order_relaxed);
            });
            EXPECT_EQ(sum.load(), 999 * 1000 / 2);
        }
        // A task group rethrows at wait(), then works again.
        task_group_t g(pool);
        g.run([] { throw std::logic_error("group boom"); });
        g.run([] {});
        EXPECT_THROW(g.wait(), std::logic_error);
        std::atomic<int> ran {0};
        g.run([&] { ran.fetch_add(1); });
        g.wait();
        EXPECT_EQ(ran.load(), 1);
    }
}

TEST(Pool, DestroyedWhileIdle) {
    for (int nthr : thread_counts) {
        { thread_pool_t pool(nthr); } // never used
        thread_pool_t pool(nthr);
        std::atomic<int> n {0};
        pool.parallel_for(64, 1, [&](dim_t b, dim_t e) { n.fetch_add(int(e - b)); });
        EXPECT_EQ(n.load(), 64);
    } // destroyed after its work finished
}

// Destruction while detached tasks are queued and running (some nesting parallel_for, some
// submitting more work) finishes all of them first.
TEST(Pool, DestroyedWhileBusyFinishesQueuedWork) {
    for (int nthr : thread_counts) {
        std::atomic<int> leaves {0};
        const int tasks = sanitized ? 200 : 2000;
        {
            thread_pool_t pool(nthr);
            for (int t = 0; t < tasks; ++t) {
                pool.submit([&pool, &leaves, t]() noexcept {
                    if (t % 2 == 0) {
                        pool.parallel_for(8, 1, [&](dim_t b, dim_t e) { leaves.fetch_add(int(e - b)); });
                    } else {
                        pool.submit([&leaves]() noexcept { leaves.fetch_add(8); });
                    }
                });
            }
        }
        EXPECT_EQ(leaves.load(), tasks * 8) << "threads " << nthr;
    }
}

// More threads calling in from outside than the pool has external slots: the extra ones go
// through the inbox and still get every index exactly once.
TEST(Pool, ManyOutsideCallersAtOnce) {
    thread_pool_t pool(3);
    const int callers = thread_pool_t::external_slots + 3;
    const dim_t n = sanitized ? 20000 : 200000;
    std::vector<std::vector<std::uint8_t>> hits(callers, std::vector<std::uint8_t>(n, 0));
    std::vector<std::thread> threads;
    for (int c = 0; c < callers; ++c)
        threads.emplace_back([&, c] {
            for (int round = 0; round < 4; ++round)
                pool.parallel_for(n, 1, [&](dim_t b, dim_t e) {
                    for (dim_t i = b; i < e; ++i) ++hits[c][i];
                });
        });
    for (std::thread &t : threads) t.join();
    for (int c = 0; c < callers; ++c) EXPECT_EQ(std::count(hits[c].begin(), hits[c].end(), 4), n);
}

// A task of one pool running a parallel_for on another.
TEST(Pool, WorkerOfOnePoolCallsAnother) {
    thread_pool_t a(2), b(3);
    std::atomic<int> n {0};
    a.parallel_for(8, 1, [&](dim_t i0, dim_t i1) {
        for (dim_t i = i0; i < i1; ++i) b.parallel_for(100, 1, [&](dim_t j0, dim_t j1) { n.fetch_add(int(j1 - j0)); });
    });
    EXPECT_EQ(n.load(), 800);
}

// ---- the kernels' interface on the process-wide pool ----

TEST(Parallel, TwoAndThreeDimensionalSpaces) {
    threads_guard restore;
    for (int nthr : thread_counts) {
        blockdnn::set_num_threads(nthr);
        const dim_t d0 = 3, d1 = 5, d2 = 7;
        std::vector<std::uint8_t> h2(d0 * d1, 0), h3(d0 * d1 * d2, 0);
        blockdnn::impl::parallel_for_2d(d0, d1, [&](dim_t i0, dim_t i1) { ++h2[i0 * d1 + i1]; });
        blockdnn::impl::parallel_for_3d(
                d0, d1, d2, [&](dim_t i0, dim_t i1, dim_t i2) { ++h3[(i0 * d1 + i1) * d2 + i2]; });
        EXPECT_EQ(std::count(h2.begin(), h2.end(), 1), d0 * d1);
        EXPECT_EQ(std::count(h3.begin(), h3.end(), 1), d0 * d1 * d2);
        EXPECT_EQ(blockdnn::impl::parallel_max_threads(), nthr);
    }
    expect_error(blockdnn::status::invalid_arguments, {"parallel_for_2d", "overflows"},
            [] { blockdnn::impl::parallel_for_2d(dim_t(1) << 40, dim_t(1) << 40, [](dim_t, dim_t) {}); });
}

// ---- thread count ----

TEST(Threads, DefaultIsPhysicalCores) {
    threads_guard restore;
    env_unset_guard no_env("BLOCKDNN_NUM_THREADS");
    blockdnn::reset_num_threads();
    EXPECT_EQ(blockdnn::get_num_threads(), blockdnn::cpu().physical_cores);
}

TEST(Threads, ApiAndEnvironment) {
    threads_guard restore;
    blockdnn::set_num_threads(3);
    EXPECT_EQ(blockdnn::get_num_threads(), 3);
    {
        env_guard env("BLOCKDNN_NUM_THREADS", "5");
        EXPECT_EQ(blockdnn::get_num_threads(), 3); // the API count takes precedence
        blockdnn::reset_num_threads();
        EXPECT_EQ(blockdnn::get_num_threads(), 5);
        blockdnn::set_num_threads(1);
        EXPECT_EQ(blockdnn::get_num_threads(), 1);
    }
}

TEST(Threads, BadCountsAreErrors) {
    threads_guard restore;
    for (int bad : {0, -3, 1025})
        expect_error(blockdnn::status::invalid_arguments, {"set_num_threads", std::to_string(bad).c_str(), "[1, 1024]"},
                [&] { blockdnn::set_num_threads(bad); });
    for (const char *bad : {"abc", "0", "4x", "-2", "99999", " 2", "+2"}) {
        env_guard env("BLOCKDNN_NUM_THREADS", bad);
        blockdnn::reset_num_threads();
        const std::string quoted = std::string("'") + bad + "'";
        expect_error(blockdnn::status::invalid_arguments, {"BLOCKDNN_NUM_THREADS", quoted.c_str()},
                [] { blockdnn::get_num_threads(); });
        // Ops that need the threads report it too.
        expect_error(blockdnn::status::invalid_arguments, {"BLOCKDNN_NUM_THREADS"},
                [] { blockdnn::impl::parallel_for(10, 1, [](dim_t, dim_t) {}); });
    }
}

TEST(Threads, ChangingTheCountFromATaskIsAnError) {
    threads_guard restore;
    blockdnn::set_num_threads(2);
    std::atomic<int> errors {0};
    blockdnn::impl::parallel_for(2, 1, [&](dim_t, dim_t) {
        if (thread_pool_t::of_this_thread() == nullptr) return;
        try {
            blockdnn::set_num_threads(4);
        } catch (const blockdnn::error &e) {
            if (std::string(e.what()).find("called from a task") != std::string::npos) errors.fetch_add(1);
        }
    });
    EXPECT_EQ(errors.load(), 2);
    EXPECT_EQ(blockdnn::get_num_threads(), 2);
}

// More threads than cores fight over the spin mutex, so waiters reach its yielding and
// sleeping paths; a plain counter under it must still count every increment exactly once.
TEST(SpinMutex, MutualExclusionWithMoreThreadsThanCores) {
    blockdnn::impl::sched::spin_mutex_t m;
    long counter = 0; // plain: a lost update or a torn section shows as a wrong total
    constexpr int threads = 6, per_thread = 20000;
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
        ts.emplace_back([&] {
            for (int i = 0; i < per_thread; ++i) {
                std::lock_guard lock(m);
                ++counter;
            }
        });
    for (std::thread &t : ts) t.join();
    EXPECT_EQ(counter, long(threads) * per_thread);
}

// A split for fewer threads than the pool has (a stream's budget) makes the chunks the rule
// gives for that count, and covers the range exactly once.
TEST(Sched, ParallelForSplitsForTheThreadsItIsGiven) {
    blockdnn::impl::sched::thread_pool_t pool(4);
    for (int nthr : {1, 2, 3, 4, 8})
        for (dim_t n : {dim_t(1), dim_t(7), dim_t(100), dim_t(1000)}) {
            std::mutex mu;
            std::set<std::pair<dim_t, dim_t>> seen;
            std::vector<int> hits(static_cast<std::size_t>(n), 0);
            pool.parallel_for(n, 1, nthr, [&](dim_t b, dim_t e) {
                std::lock_guard lock(mu);
                seen.insert({b, e});
                for (dim_t i = b; i < e; ++i) ++hits[static_cast<std::size_t>(i)];
            });
            const int nchunks = blockdnn::impl::sched::chunk_count(n, 1, std::min(nthr, 4));
            EXPECT_EQ(static_cast<int>(seen.size()), nchunks) << "n " << n << " nthr " << nthr;
            EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
        }
}
