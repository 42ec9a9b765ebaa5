// SPDX-License-Identifier: Apache-2.0
// The work-stealing pool: workers' loop, stealing, sleeping and waking, fork-join parallel_for
// by helpers claiming chunks. See thread_pool.hpp for the contract.
#include "sched/thread_pool.hpp"

#include <algorithm>
#include <chrono>

#include "core/mxcsr.hpp"

namespace blockdnn::impl::sched {

namespace {

// The pool the calling thread works in, if any (a worker's, or one entered through scope_t).
thread_local void *tls_ctx = nullptr;

// How long a thread with nothing to do keeps looking before it sleeps. Long enough that
// back-to-back parallel_for calls find the workers awake (waking one costs a futex call and a
// few microseconds), short enough that an idle pool soon uses no CPU.
constexpr auto spin_budget = std::chrono::microseconds(50);
// Look at the clock only every this many empty rounds; a round is one scan of the queues.
constexpr int rounds_per_clock_check = 32;

std::uint64_t xorshift(std::uint64_t &s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

} // namespace

int chunk_count(dim_t n, dim_t grain, int nthreads) {
    if (n <= 0) return 0;
    grain = std::max<dim_t>(grain, 1);
    if (nthreads <= 1 || n < 2 * grain) return 1;
    return static_cast<int>(std::min<dim_t>(n / grain, dim_t(chunks_per_thread) * nthreads));
}

// ---- contexts ----

thread_pool_t *thread_pool_t::of_this_thread() { return tls_ctx ? static_cast<ctx_t *>(tls_ctx)->pool : nullptr; }

thread_pool_t::scope_t::scope_t(thread_pool_t &pool) {
    auto *cur = static_cast<ctx_t *>(tls_ctx);
    if (cur && cur->pool == &pool) return; // already working in this pool
    entered_ = true;
    ctx_.pool = &pool;
    ctx_.slot = pool.claim_external_slot();
    ctx_.rng = reinterpret_cast<std::uintptr_t>(this) | 1;
    ctx_.prev = cur;
    tls_ctx = &ctx_;
}

thread_pool_t::scope_t::~scope_t() {
    if (!entered_) return;
    // release: the next thread to claim this slot sees our owner-side deque state (acquire in
    // claim_external_slot). Tasks we left in it stay stealable meanwhile.
    if (ctx_.slot) ctx_.slot->taken.store(false, std::memory_order_release);
    tls_ctx = ctx_.prev;
}

thread_pool_t::slot_t *thread_pool_t::claim_external_slot() {
    if (runs_inline()) return nullptr; // nothing is ever pushed
    for (std::size_t i = slots_.size() - external_slots; i < slots_.size(); ++i) {
        slot_t &s = *slots_[i];
        // relaxed look first: skip taken slots without writing their line.
        // acquire on the exchange: pairs with the previous holder's release in ~scope_t.
        if (!s.taken.load(std::memory_order_relaxed) && !s.taken.exchange(true, std::memory_order_acquire)) return &s;
    }
    return nullptr;
}

// ---- the pool ----

thread_pool_t::thread_pool_t(int nthreads)
    : nthreads_(std::clamp(nthreads, 1, max_threads)),
      oversubscribed_(static_cast<unsigned>(nthreads_) > std::max(1u, std::thread::hardware_concurrency())) {
    const int workers = nthreads_ - 1;
    for (int i = 0; i < workers + external_slots; ++i) slots_.push_back(std::make_unique<slot_t>());
    threads_.reserve(workers);
    try {
        for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { worker_main(i); });
    } catch (...) { // the system refused a thread: stop the ones started, then report
        stop_.store(true, std::memory_order_release);
        idle_.wake_all();
        for (std::thread &t : threads_) t.join();
        throw;
    }
}

thread_pool_t::~thread_pool_t() {
    auto drained = [this] { return detached_.load(std::memory_order_acquire) == 0; }; // sees the tasks' effects
    help_until(drained, [&] { join_.sleep_until(drained); });
    stop_.store(true, std::memory_order_release); // the workers' acquire load sees it after waking
    idle_.wake_all();
    for (std::thread &t : threads_) t.join();
}

void thread_pool_t::detached_done() noexcept {
    // acq_rel: the task's effects are visible to the thread that sees the count reach 0.
    if (detached_.fetch_sub(1, std::memory_order_acq_rel) == 1) join_.wake_all();
}

void thread_pool_t::push(task_t *t) noexcept {
    auto *c = static_cast<ctx_t *>(tls_ctx);
    if (c && c->pool == this && c->slot) c->slot->q.push(t);
    else inbox_.push(t);
    idle_.wake_one();
}

task_t *thread_pool_t::find_task(ctx_t &c) {
    task_t *t = nullptr;
    // empty() is exact for the owner (only it moves bottom; a stale top only looks fuller), and
    // it skips pop()'s fence when there is nothing to pop.
    if (c.slot && !c.slot->q.empty() && c.slot->q.pop(t)) return t;
    if (task_t *batch = inbox_.take_all()) {
        // Run the oldest; the rest go where other threads can steal them.
        if (task_t *rest = batch->next) {
            while (rest) {
                task_t *next = rest->next;
                if (c.slot) c.slot->q.push(rest);
                else inbox_.push(rest);
                rest = next;
            }
            idle_.wake_one();
        }
        return batch;
    }
    // Steal: start at a random victim, then try the others in turn.
    const std::size_t n = slots_.size();
    const std::size_t start = xorshift(c.rng) % n;
    for (std::size_t k = 0; k < n; ++k) {
        slot_t &s = *slots_[(start + k) % n];
        if (&s == c.slot || s.q.empty()) continue;
        if (s.q.steal(t) == steal_result::success) return t;
    }
    return nullptr;
}

task_t *thread_pool_t::wait_for_task(ctx_t &c) {
    if (task_t *t = find_task(c)) return t;
    const auto deadline = std::chrono::steady_clock::now() + spin_budget;
    for (int round = 1;; ++round) {
        if (oversubscribed_) std::this_thread::yield(); // let a thread with work have the core
        else cpu_relax();
        if (task_t *t = find_task(c)) return t;
        if (round % rounds_per_clock_check == 0 && std::chrono::steady_clock::now() > deadline) return nullptr;
    }
}

void thread_pool_t::worker_main(int index) {
    ctx_t c;
    c.pool = this;
    c.slot = slots_[index].get();
    c.rng = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(index + 1);
    tls_ctx = &c;
    // A thread starts with its creator's MXCSR, which may be inside an op's denormals scope;
    // start from the processor's reset value instead, so no task inherits that by accident
    // (chunks and stream ops also set their own control bits around what they run).
    _mm_setcsr(mxcsr_reset);
    for (;;) {
        task_t *t = wait_for_task(c);
        if (!t) {
            // acquire on stop_: pairs with the destructor's release store.
            idle_.sleep_until([&] { return (t = find_task(c)) != nullptr || stop_.load(std::memory_order_acquire); });
            if (!t) break; // stopping, and nothing is left
            // Woken for work and more is queued: wake the next sleeper (a chain, so a burst
            // wakes as many workers as it needs while the submitter makes one futex call).
            if (work_visible()) idle_.wake_one();
        }
        t->run(t);
    }
    tls_ctx = nullptr;
}

bool thread_pool_t::work_visible() const {
    if (!inbox_.empty()) return true;
    for (const auto &s : slots_)
        if (!s->q.empty()) return true;
    return false;
}

void thread_pool_t::help_until(fn_ref_t<bool()> done, fn_ref_t<void()> sleep) {
    if (done()) return;
    scope_t scope(*this);
    ctx_t &c = *static_cast<ctx_t *>(tls_ctx);
    while (!done()) {
        task_t *t = find_task(c);
        if (!t) {
            // Spin a little for the last chunks (they usually finish within microseconds), then sleep.
            const auto deadline = std::chrono::steady_clock::now() + spin_budget;
            for (int round = 1; !t && !done(); ++round) {
                if (oversubscribed_) std::this_thread::yield();
                else cpu_relax();
                t = find_task(c);
                if (!t && round % rounds_per_clock_check == 0 && std::chrono::steady_clock::now() > deadline) {
                    sleep();
                    break;
                }
            }
            if (!t) continue;
        }
        t->run(t);
    }
}

// ---- parallel_for: helpers that claim chunks from a shared counter ----

// The caller queues one helper task per other thread the split is for and claims chunks in
// index order with them, so no task is made per chunk, and a loop whose chunks all finish
// before any helper starts costs a push and a pop per helper. Which chunks a thread runs depends on
// timing; what a chunk covers never does.

namespace {

struct helper_task_t : task_t {
    void *job;
};

// Jobs with up to this many helpers keep their task records on the caller's stack.
constexpr int stack_helpers = 15;

} // namespace

struct thread_pool_t::pf_job_t {
    thread_pool_t *pool;
    fn_ref_t<void(dim_t, dim_t)> body;
    dim_t n;
    int nchunks;
    alignas(cache_line) std::atomic<int> next {0}; // the next chunk to claim
    alignas(cache_line) std::atomic<int> helpers;  // helper tasks not finished
    std::atomic<bool> failed {false};
    std::exception_ptr error;
};

void thread_pool_t::claim_chunks(pf_job_t &j) {
    // relaxed: the counter only hands out indices; the chunks' writes reach the caller through
    // `helpers` (helpers) or are its own.
    for (int c; (c = j.next.fetch_add(1, std::memory_order_relaxed)) < j.nchunks;) {
        // relaxed: skipping after a failure is an optimisation; the error travels through `helpers`.
        if (j.failed.load(std::memory_order_relaxed)) continue;
        try {
            dim_t begin, end;
            chunk_bounds(j.n, j.nchunks, c, begin, end);
            j.body(begin, end);
        } catch (...) {
            // acq_rel: exactly one thread wins the right to write error.
            if (!j.failed.exchange(true, std::memory_order_acq_rel)) j.error = std::current_exception();
        }
    }
}

void thread_pool_t::run_helper(task_t *self) noexcept {
    pf_job_t &j = *static_cast<pf_job_t *>(static_cast<helper_task_t *>(self)->job);
    claim_chunks(j);
    thread_pool_t *pool = j.pool; // j may be gone once helpers reaches 0
    // acq_rel: the chunks' writes (and error) are visible to the caller that sees 0.
    if (j.helpers.fetch_sub(1, std::memory_order_acq_rel) == 1) pool->join_.wake_all();
}

void thread_pool_t::parallel_for(dim_t n, dim_t grain, int nthreads, fn_ref_t<void(dim_t, dim_t)> body) {
    const int nchunks = chunk_count(n, grain, std::min(nthreads, nthreads_));
    if (nchunks == 0) return;
    if (nchunks == 1) {
        body(0, n);
        return;
    }
    const int nhelpers = std::min(std::min(nthreads, nthreads_), nchunks) - 1;
    helper_task_t local[stack_helpers];
    std::unique_ptr<helper_task_t[]> heap;
    if (nhelpers > stack_helpers) heap.reset(new helper_task_t[nhelpers]);
    helper_task_t *tasks = heap ? heap.get() : local;
    pf_job_t j {this, body, n, nchunks, {0}, {nhelpers}, {false}, nullptr};
    {
        scope_t scope(*this); // the caller owns a deque, so its helpers can be stolen
        for (int h = 0; h < nhelpers; ++h) {
            tasks[h].run = run_helper;
            tasks[h].job = &j;
            push(&tasks[h]);
        }
        claim_chunks(j);
        // acquire: pairs with the helpers' acq_rel decrements. Helpers still queued are popped
        // here and find nothing left to claim.
        auto finished = [&] { return j.helpers.load(std::memory_order_acquire) == 0; };
        help_until(finished, [&] { join_.sleep_until(finished); });
    }
    if (j.error) std::rethrow_exception(j.error);
}

} // namespace blockdnn::impl::sched
