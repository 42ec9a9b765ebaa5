// SPDX-License-Identifier: Apache-2.0
// CPU streams and events: order within a stream, overlap across streams, events, errors at
// synchronize, the stream scope, the default stream and tensor lifetime. Nothing here measures
// time; waits that depend on another thread give up after a generous timeout and fail the
// test instead of hanging.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "sched/parallel.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;

namespace {

constexpr auto patience = std::chrono::seconds(30);

// Spins until flag is true; false if that took longer than `patience` (the test then fails).
bool await(const std::atomic<bool> &flag) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (!flag.load(std::memory_order_acquire))
        if (std::chrono::steady_clock::now() > deadline) return false;
        else std::this_thread::yield();
    return true;
}

// Each test runs with a fixed thread count (more than the 2 cores, so two blocked ops
// cannot starve a third), restored afterwards.
class Streams : public ::testing::Test {
protected:
    void SetUp() override { set_num_threads(3); }
    void TearDown() override { reset_num_threads(); }
};

} // namespace

TEST_F(Streams, OpsOfOneStreamRunInSubmissionOrder) {
    stream s;
    std::vector<int> seen; // no lock: the stream orders the ops
    const int n = 2000;
    for (int i = 0; i < n; ++i)
        s.submit([&seen, i] {
            if (i % 100 == 0) impl::parallel_for(1000, 1, [](dim_t, dim_t) {}); // ops may use the pool
            seen.push_back(i);
        });
    s.synchronize();
    ASSERT_EQ(seen.size(), std::size_t(n));
    for (int i = 0; i < n; ++i) ASSERT_EQ(seen[i], i);
    EXPECT_TRUE(s.query());
}

// Each op waits for the other to start: they finish only if they run at the same time.
TEST_F(Streams, TwoStreamsRunConcurrently) {
    stream s1, s2;
    std::atomic<bool> a_started {false}, b_started {false}, a_saw_b {false}, b_saw_a {false};
    s1.submit([&] {
        a_started.store(true, std::memory_order_release);
        a_saw_b.store(await(b_started));
    });
    s2.submit([&] {
        b_started.store(true, std::memory_order_release);
        b_saw_a.store(await(a_started));
    });
    s1.synchronize();
    s2.synchronize();
    EXPECT_TRUE(a_saw_b.load());
    EXPECT_TRUE(b_saw_a.load());
}

// s2.wait(e) returns at once; s2's later work starts only after s1's work before e.
TEST_F(Streams, EventOrdersWorkAcrossStreamsWithoutBlockingTheCaller) {
    stream s1, s2;
    std::atomic<bool> go {false}, s1_done {false}, s2_ran {false}, s2_saw_s1 {false}, s1_waited {false};
    s1.submit([&] {
        s1_waited.store(await(go));
        s1_done.store(true, std::memory_order_release);
    });
    event e = s1.record();
    s2.wait(e);
    s2.submit([&] {
        s2_saw_s1.store(s1_done.load(std::memory_order_acquire));
        s2_ran.store(true, std::memory_order_release);
    });
    // The caller got here while s1 is still blocked on `go`: nothing above blocked it.
    EXPECT_FALSE(e.query());
    EXPECT_FALSE(s2_ran.load());
    EXPECT_FALSE(s2.query());
    go.store(true, std::memory_order_release);
    s2.synchronize();
    EXPECT_TRUE(s1_waited.load());
    EXPECT_TRUE(s2_ran.load());
    EXPECT_TRUE(s2_saw_s1.load());
    EXPECT_TRUE(e.query());
}

TEST_F(Streams, EventSynchronizeAndQuery) {
    EXPECT_TRUE(event().query()); // never recorded: complete
    event().synchronize();
    stream s;
    std::atomic<bool> go {false};
    int value = 0;
    s.submit([&] {
        await(go);
        value = 42;
    });
    event e = s.record();
    event copy = e;
    EXPECT_FALSE(copy.query());
    go.store(true, std::memory_order_release);
    e.synchronize();
    EXPECT_TRUE(copy.query());
    EXPECT_EQ(value, 42); // the event makes the op's writes visible
}

// A chain of events through three streams keeps one global order.
TEST_F(Streams, EventChainAcrossThreeStreams) {
    stream s[3];
    std::atomic<int> step {0};
    std::vector<int> order(30, -1);
    event last;
    for (int k = 0; k < 30; ++k) {
        stream &cur = s[k % 3];
        cur.wait(last);
        cur.submit([&, k] { order[k] = step.fetch_add(1); });
        last = cur.record();
    }
    last.synchronize();
    for (int k = 0; k < 30; ++k) EXPECT_EQ(order[k], k);
}

TEST_F(Streams, ErrorSurfacesAtSynchronizeThenStreamWorksAgain) {
    stream s;
    std::atomic<bool> skipped_ran {false}, after_ran {false};
    s.submit([] { throw error(status::runtime_error, "op 1 failed"); });
    s.submit([] { throw std::runtime_error("op 2 failed"); }); // skipped: not the first error
    s.submit([&] { skipped_ran.store(true); });
    event e = s.record();
    expect_error(status::runtime_error, {"op 1 failed"}, [&] { s.synchronize(); });
    EXPECT_TRUE(e.query()); // events recorded after the error still complete
    EXPECT_FALSE(skipped_ran.load());
    s.synchronize(); // reported once
    s.submit([&] { after_ran.store(true); });
    s.synchronize();
    EXPECT_TRUE(after_ran.load());
}

TEST_F(Streams, ErrorStaysOnItsStream) {
    stream bad, good;
    bad.submit([] { throw std::runtime_error("bad stream"); });
    int value = 0;
    good.submit([&] { value = 7; });
    good.synchronize(); // does not throw
    EXPECT_EQ(value, 7);
    EXPECT_THROW(bad.synchronize(), std::runtime_error);
}

TEST_F(Streams, DestructorWaitsForPendingWork) {
    std::atomic<int> done {0};
    {
        stream s;
        for (int i = 0; i < 50; ++i)
            s.submit([&] {
                impl::parallel_for(20000, 1, [](dim_t, dim_t) {});
                done.fetch_add(1);
            });
    }
    EXPECT_EQ(done.load(), 50);
}

// synchronize() spins for a while, then sleeps until the stream's next op ends. An op that
// ends just as the caller decides to sleep must still end the wait: the ops' lengths sweep
// across the spin's length so that some end inside that window. A lost wake-up would hang, so
// a watchdog ends the process with a message instead.
TEST_F(Streams, SynchronizeWakesWhenTheLastOpEndsAsItFallsAsleep) {
    std::atomic<bool> finished {false};
    std::thread watchdog([&] {
        const auto deadline = std::chrono::steady_clock::now() + patience;
        while (!finished.load(std::memory_order_acquire))
            if (std::chrono::steady_clock::now() > deadline) {
                std::fprintf(stderr, "synchronize() slept through the end of its stream's last op\n");
                std::abort();
            } else {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
    });
    stream s;
    int ran = 0;
    for (int ns = 20000; ns <= 120000; ns += 25) {
        // The gate keeps the stream's head on a worker, so the caller waits instead of
        // running the timed op itself.
        std::atomic<bool> go {false};
        s.submit([&go] { await(go); });
        s.submit([&ran, ns] {
            const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
            while (std::chrono::steady_clock::now() < end) {}
            ++ran;
        });
        go.store(true, std::memory_order_release);
        s.synchronize();
    }
    finished.store(true, std::memory_order_release);
    watchdog.join();
    EXPECT_EQ(ran, 4001);
}

TEST_F(Streams, SynchronizeInsideAnOpOfAnotherStream) {
    stream s1, s2;
    std::atomic<int> n {0};
    for (int i = 0; i < 20; ++i) s2.submit([&] { n.fetch_add(1); });
    int seen = -1;
    s1.submit([&] {
        s2.synchronize(); // helps instead of blocking a worker
        seen = n.load();
    });
    s1.synchronize();
    EXPECT_EQ(seen, 20);
}

// Waiting on its own stream from inside an op would never end (a new user's hang): it throws
// there, the error surfaces at the caller's synchronize, and the stream goes on working.
TEST_F(Streams, SynchronizeInsideAnOpOfTheSameStreamIsAnError) {
    for (int threads : {3, 1}) {
        set_num_threads(threads);
        stream s;
        s.submit([&] { s.synchronize(); });
        expect_error(status::invalid_arguments, {"stream::synchronize", "inside an operation of this same stream"},
                [&] { s.synchronize(); });
        std::atomic<int> n {0};
        s.submit([&] { n.fetch_add(1); });
        s.synchronize();
        EXPECT_EQ(n.load(), 1) << threads << " threads";
    }
    // An event recorded on the stream after the running op: the same wait on itself.
    set_num_threads(3);
    stream s;
    std::atomic<bool> recorded {false};
    event later;
    s.submit([&] {
        ASSERT_TRUE(await(recorded));
        later.synchronize();
    });
    later = s.record();
    recorded.store(true, std::memory_order_release);
    expect_error(status::invalid_arguments, {"event::synchronize", "would wait forever"}, [&] { s.synchronize(); });
}

// With 1 thread an op submitted from inside another stream's op runs inline, nested in it: a
// wait there on the outer stream (its synchronize, or an event recorded on it after the running
// op) could never end, and used to hang. It throws, and the error surfaces on the inner stream.
// With more threads the inner op runs on its own and the same waits simply finish.
TEST_F(Streams, WaitOnAnOuterStreamFromANestedOp) {
    for (int threads : {1, 3}) {
        set_num_threads(threads);
        stream a, b;
        a.submit([&] { b.submit([&] { a.synchronize(); }); });
        a.synchronize();
        if (threads == 1)
            expect_error(status::invalid_arguments, {"stream::synchronize", "nested"}, [&] { b.synchronize(); });
        else b.synchronize();
        a.submit([&] {
            const event e = a.record();
            b.submit([e] { e.synchronize(); });
        });
        a.synchronize();
        if (threads == 1)
            expect_error(
                    status::invalid_arguments, {"event::synchronize", "would wait forever"}, [&] { b.synchronize(); });
        else b.synchronize();
    }
}

// Changing the thread count from inside a stream's op would tear down the pool that runs it
// (with 1 thread the op runs inline, and this used to hang): it throws there, the error
// surfaces at synchronize, and the count stays.
TEST_F(Streams, SetNumThreadsInsideAnOpIsAnError) {
    for (int threads : {3, 1}) {
        set_num_threads(threads);
        stream s;
        s.submit([] { set_num_threads(2); });
        expect_error(status::invalid_arguments, {"set_num_threads", "called from a task"}, [&] { s.synchronize(); });
        s.submit([] { reset_num_threads(); });
        expect_error(status::invalid_arguments, {"reset_num_threads", "called from a task"}, [&] { s.synchronize(); });
        EXPECT_EQ(get_num_threads(), threads);
    }
}

// Many streams, each op waiting on an event of another stream: each stream keeps its order
// and nothing deadlocks.
TEST_F(Streams, ManyStreamsWithCrossEvents) {
    constexpr int nstreams = 6, nops = 60;
    std::vector<std::unique_ptr<stream>> s;
    for (int i = 0; i < nstreams; ++i) s.push_back(std::make_unique<stream>());
    std::vector<std::vector<int>> seen(nstreams);
    std::vector<event> last(nstreams);
    for (int k = 0; k < nops; ++k)
        for (int i = 0; i < nstreams; ++i) {
            s[i]->wait(last[(i + 1) % nstreams]);
            s[i]->submit([&seen, i, k] {
                impl::parallel_for(64, 1, [](dim_t, dim_t) {});
                seen[i].push_back(k);
            });
            last[i] = s[i]->record();
        }
    for (auto &st : s) st->synchronize();
    for (int i = 0; i < nstreams; ++i) {
        ASSERT_EQ(seen[i].size(), std::size_t(nops));
        for (int k = 0; k < nops; ++k) EXPECT_EQ(seen[i][k], k);
    }
}

TEST_F(Streams, DefaultStreamRunsInline) {
    EXPECT_TRUE(current_stream().is_default());
    EXPECT_EQ(&current_stream(), &default_stream());
    stream &d = default_stream();
    std::thread::id ran_on;
    d.submit([&] { ran_on = std::this_thread::get_id(); });
    EXPECT_EQ(ran_on, std::this_thread::get_id());
    EXPECT_THROW(d.submit([] { throw std::runtime_error("inline"); }), std::runtime_error);
    EXPECT_TRUE(d.record().query());
    EXPECT_TRUE(d.query());
    d.synchronize();
    // wait() on the default stream waits for the event before the next inline op.
    stream s;
    std::atomic<bool> other_done {false};
    s.submit([&] { other_done.store(true, std::memory_order_release); });
    d.wait(s.record());
    EXPECT_TRUE(other_done.load(std::memory_order_acquire));
    expect_error(status::invalid_arguments, {"stream::submit", "empty"}, [&] { d.submit(nullptr); });
    expect_error(status::invalid_arguments, {"stream::submit", "empty"}, [&] { s.submit({}); });
}

TEST_F(Streams, ScopeMakesOpsQueueOnItsStream) {
    stream s, inner;
    {
        stream_scope on(s);
        EXPECT_EQ(&current_stream(), &s);
        {
            stream_scope nested(inner);
            EXPECT_EQ(&current_stream(), &inner);
        }
        EXPECT_EQ(&current_stream(), &s);
        // Inside an op, the current stream is the default one (nested ops run inline).
        bool inside_default = false;
        s.submit([&] { inside_default = current_stream().is_default(); });
        s.synchronize();
        EXPECT_TRUE(inside_default);
    }
    EXPECT_TRUE(current_stream().is_default());
}

// reorder() inside a scope is queued behind earlier work and runs later; bad input still
// throws at the call.
TEST_F(Streams, ReorderInsideScopeIsQueued) {
    const tensor_desc plain({2, 19, 5, 3}, format_tag::nchw), blocked({2, 19, 5, 3}, format_tag::nChw16c);
    tensor src(plain), dst(blocked), want(blocked);
    fill_random(src, 7);
    reorder(src, want); // default stream: done on return
    stream s;
    std::atomic<bool> go {false};
    s.submit([&] { await(go); });
    {
        stream_scope on(s);
        reorder(src, dst);
        expect_error(status::invalid_arguments, {"reorder", "dims"}, [&] {
            reorder(src, tensor(tensor_desc({2, 18, 5, 3}, format_tag::nChw16c)));
        });
    }
    // Still blocked behind the first op: dst is untouched (zero-filled).
    for (dim_t i = 0; i < blocked.nelems_padded(); ++i) ASSERT_EQ(dst.f32()[i], 0.f);
    go.store(true, std::memory_order_release);
    s.synchronize();
    for (dim_t i = 0; i < blocked.nelems_padded(); ++i) ASSERT_EQ(dst.f32()[i], want.f32()[i]) << i;
}

// A queued op holds tensor copies, which share ownership: the memory outlives the caller's
// handles. (Under ASan a use-after-free here would fail the run.)
TEST_F(Streams, QueuedWorkKeepsTensorsAlive) {
    const tensor_desc plain({1, 16, 4, 4}, format_tag::nchw), blocked({1, 16, 4, 4}, format_tag::nChw16c);
    tensor keep(blocked);
    tensor want(blocked);
    stream s;
    std::atomic<bool> go {false};
    s.submit([&] { await(go); });
    {
        tensor src(plain), dst(blocked); // the only handles the caller has
        fill_random(src, 11);
        reorder(src, want);
        {
            stream_scope on(s);
            reorder(src, dst);
        }
        s.submit([dst, keep] { std::copy(dst.f32(), dst.f32() + dst.desc().nelems_padded(), keep.f32()); });
    } // src and dst go out of scope while the reorder is still queued
    go.store(true, std::memory_order_release);
    s.synchronize();
    for (dim_t i = 0; i < blocked.nelems_padded(); ++i) ASSERT_EQ(keep.f32()[i], want.f32()[i]) << i;
}

// With one thread there are no workers: submit runs the op inline, in order, and errors still
// wait for synchronize.
TEST_F(Streams, OneThreadRunsInline) {
    set_num_threads(1);
    stream s1, s2;
    std::vector<int> seen;
    std::thread::id ran_on;
    s1.submit([&] {
        ran_on = std::this_thread::get_id();
        seen.push_back(1);
    });
    EXPECT_EQ(ran_on, std::this_thread::get_id());
    event e = s1.record();
    EXPECT_TRUE(e.query());
    s2.wait(e);
    s2.submit([&] { seen.push_back(2); });
    s1.submit([] { throw std::runtime_error("inline error"); });
    EXPECT_EQ(seen, (std::vector<int> {1, 2}));
    EXPECT_THROW(s1.synchronize(), std::runtime_error);
    s2.synchronize();
}
