// SPDX-License-Identifier: Apache-2.0
// The work-stealing thread pool: one Chase-Lev deque per worker (wsq.hpp) plus a few deques that
// threads from outside the pool borrow while they wait, a lock-free inbox for submissions from
// threads without a deque, fork-join parallel_for (helpers claiming chunks), task groups, detached
// tasks (what streams run on), and waits that run other tasks instead of blocking. Task
// groups (task_group.hpp) build on it.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "sched/fn_ref.hpp"
#include "sched/inbox.hpp"
#include "sched/park.hpp"
#include "sched/task.hpp"
#include "sched/wsq.hpp"

namespace blockdnn::impl::sched {

using dim_t = std::int64_t;

/// Chunks parallel_for splits [0, n) into with `nthreads` threads: 1 if nthreads == 1 or
/// n < 2 * grain, else min(n / grain, chunks_per_thread * nthreads). It depends on nothing else,
/// so a reduction that combines per-chunk results in chunk order is deterministic for a given
/// thread count. A grain below 1 counts as 1.
int chunk_count(dim_t n, dim_t grain, int nthreads);

/// Chunks per thread: more than one so stealing can even out uneven chunks or a descheduled
/// thread, few enough that fork-join overhead stays small.
inline constexpr int chunks_per_thread = 4;

/// Chunk c of nchunks over [0, n): balance211 (the first n % nchunks chunks get one more).
inline void chunk_bounds(dim_t n, int nchunks, int c, dim_t &begin, dim_t &end) {
    const dim_t base = n / nchunks, rem = n % nchunks;
    begin = c * base + (c < rem ? c : rem);
    end = begin + base + (c < rem ? 1 : 0);
}

class task_group_t;

class thread_pool_t {
public:
    /// Largest thread count a pool accepts.
    static constexpr int max_threads = 1024;
    /// Deques lent to threads from outside the pool while they run parallel_for or wait; a
    /// thread that finds none free pushes through the inbox instead.
    static constexpr int external_slots = 4;

    /// A pool of `nthreads` threads: nthreads - 1 workers plus the thread that waits. With
    /// nthreads == 1 there are no workers and everything runs inline on the calling thread.
    /// nthreads must be in [1, max_threads] (the public API checks it).
    explicit thread_pool_t(int nthreads);
    /// Finishes every detached task (the destructing thread helps), then stops the workers.
    /// Must not be called from a task of this pool, nor while other threads still call into it.
    ~thread_pool_t();
    thread_pool_t(const thread_pool_t &) = delete;
    thread_pool_t &operator=(const thread_pool_t &) = delete;

    int num_threads() const { return nthreads_; }
    /// True when there are no workers, so work runs inline on the thread that submits it.
    bool runs_inline() const { return nthreads_ == 1; }

    /// Runs body(begin, end) over chunk_count(n, grain, nthreads) chunks covering [0, n)
    /// (chunk_bounds), the calling thread included; returns when all have finished. At most
    /// min(nthreads, num_threads()) threads run its chunks at once (a stream's budget may ask
    /// for fewer than num_threads()); which threads they are depends on who is idle. The first exception a body throws is rethrown here;
    /// chunks not yet started are then skipped.
    void parallel_for(dim_t n, dim_t grain, int nthreads, fn_ref_t<void(dim_t, dim_t)> body);
    /// As above, split for num_threads().
    void parallel_for(dim_t n, dim_t grain, fn_ref_t<void(dim_t, dim_t)> body) {
        parallel_for(n, grain, nthreads_, body);
    }

    /// Queues f to run once on the pool and returns; inline if runs_inline(). f must not throw
    /// (an exception escaping it terminates the program). The destructor waits for it.
    template <typename F>
    void submit(F &&f) {
        struct detached_t final : task_t {
            explicit detached_t(F &&fn, thread_pool_t *p) : fn(std::forward<F>(fn)), pool(p) {}
            std::decay_t<F> fn;
            thread_pool_t *pool;
        };
        auto *t = new detached_t(std::forward<F>(f), this);
        t->run = [](task_t *self) noexcept {
            auto *d = static_cast<detached_t *>(self);
            thread_pool_t *pool = d->pool;
            d->fn();
            delete d;
            pool->detached_done();
        };
        submit_task(t);
    }

    /// Queues t to run once on the pool, as submit(f) does, without allocating: the caller
    /// owns t's record and keeps it valid until t->run has returned; t->run must call
    /// detached_done() last, after which the record may be queued again. The destructor waits
    /// for it.
    void submit_task(task_t *t) noexcept {
        detached_.fetch_add(1, std::memory_order_relaxed); // made visible by the push's release
        if (runs_inline()) {
            // Inside the pool's scope, so that the task counts as one of this pool
            // (of_this_thread): set_num_threads from it must be refused here too, not delete
            // the pool under it.
            scope_t scope(*this);
            t->run(t);
            return;
        }
        push(t);
    }

    /// The end of a task queued with submit_task (its run's last call).
    void detached_done() noexcept;

    /// Runs pool tasks on the calling thread until done() is true. When there is nothing to run
    /// for a while it calls sleep(), which must return once done() may be true (spurious returns
    /// are fine); the loop re-checks.
    void help_until(fn_ref_t<bool()> done, fn_ref_t<void()> sleep);

    /// The pool the calling thread works for: its worker's pool, or the pool of the innermost
    /// parallel_for / wait it is inside; nullptr otherwise.
    static thread_pool_t *of_this_thread();

private:
    friend class task_group_t;
    struct slot_t {
        wsq_t<task_t *> q;
        alignas(cache_line) std::atomic<bool> taken {false}; // external slots: lent to a thread
    };
    // What a thread knows about the pool it is working in.
    struct ctx_t {
        thread_pool_t *pool = nullptr;
        slot_t *slot = nullptr; // the deque this thread owns now, or nullptr (use the inbox)
        std::uint64_t rng = 0;  // xorshift state for picking victims
        ctx_t *prev = nullptr;  // the context this one replaced (nesting across pools)
    };

public:
    /// While alive, the calling thread works in this pool: it owns a deque (a worker's, or an
    /// external slot if one is free) so its pushes can be stolen. Nested scopes on the same
    /// pool are free. Lives on the stack of the thread that made it.
    class scope_t {
    public:
        explicit scope_t(thread_pool_t &pool);
        ~scope_t();
        scope_t(const scope_t &) = delete;
        scope_t &operator=(const scope_t &) = delete;

    private:
        bool entered_ = false;
        ctx_t ctx_;
    };

private:
    struct pf_job_t;
    static void claim_chunks(pf_job_t &j);
    static void run_helper(task_t *self) noexcept;

    void worker_main(int index);
    // To this thread's deque if it owns one here, else the inbox. noexcept: a deque that
    // cannot grow ends the program, as a task lost there would leave its waiter waiting forever.
    void push(task_t *t) noexcept;
    task_t *find_task(ctx_t &c);     // own deque, inbox, then steal from a random victim on
    task_t *wait_for_task(ctx_t &c); // find_task with a short spin; nullptr after it
    bool work_visible() const;       // a hint: some queue looked non-empty
    slot_t *claim_external_slot();

    const int nthreads_;
    const bool oversubscribed_;                  // more threads than the hardware runs at once: yield, don't spin
    std::vector<std::unique_ptr<slot_t>> slots_; // workers' first, then external_slots
    inbox_t inbox_;
    park_t idle_; // workers with nothing to do sleep here
    park_t join_; // waiters sleep here (jobs and groups finishing)
    alignas(cache_line) std::atomic<std::int64_t> detached_ {0};
    std::atomic<bool> stop_ {false};
    std::vector<std::thread> threads_;
};

} // namespace blockdnn::impl::sched
