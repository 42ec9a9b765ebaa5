// SPDX-License-Identifier: Apache-2.0
// Streams and events on the process-wide pool. A stream keeps its operations in a FIFO; only
// its head is ever in the pool, and finishing it schedules the next one, so a stream costs no
// thread while idle and streams never block workers. A wait on an event parks the stream (not
// a thread) on the event until it completes.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "blockdnn/status.hpp"
#include "blockdnn/stream.hpp"
#include "sched/budget.hpp"
#include "sched/global_pool.hpp"
#include "core/mxcsr.hpp"
#include "sched/spin_mutex.hpp"

namespace blockdnn::impl {

struct event_state_t {
    /// Marks the event complete and resumes the streams waiting for it.
    void complete() {
        std::vector<std::function<void()>> resume;
        {
            std::lock_guard<std::mutex> lock(m);
            done = true;
            resume.swap(waiters);
        }
        flag.store(1, std::memory_order_release); // pairs with the acquire loads in query/synchronize
        flag.notify_all();
        for (auto &f : resume) f();
    }
    /// Queues f to run when the event completes; false (and f not kept) if it already has.
    bool on_complete(std::function<void()> f) {
        std::lock_guard<std::mutex> lock(m);
        if (done) return false;
        waiters.push_back(std::move(f));
        return true;
    }
    bool query() const { return flag.load(std::memory_order_acquire) != 0; } // sees the work before it

    const struct stream_state_t *owner = nullptr; // the stream it was recorded on (null: default)
    std::mutex m;
    bool done = false;                          // under m
    std::vector<std::function<void()>> waiters; // under m
    std::atomic<std::uint32_t> flag {0};        // 1 once done; for lock-free query and sleeping
};

struct stream_item_t {
    enum class kind_t { op, record, wait } kind;
    std::function<void()> op;             // kind op
    std::shared_ptr<event_state_t> event; // kind record (to complete) or wait (to wait for)
    unsigned mxcsr_control = 0;           // kind op: the submitter's MXCSR control bits
};

struct stream_state_t {
    explicit stream_state_t(int budget) : threads(budget) {}
    const int threads;               // thread budget of its ops; 0: the whole pool
    sched::spin_mutex_t m;           // short sections, taken by submitters and the runner
    std::deque<stream_item_t> queue; // submitted, not started (under m)
    bool scheduled = false;          // head is in the pool, running, or parked on an event (under m)
    std::uint64_t submitted = 0;     // under m
    std::exception_ptr error;        // first error not yet reported; ops are skipped meanwhile (under m)
    std::atomic<std::uint64_t> finished {0};
    sched::park_t park; // synchronize() sleeps here
    // The pool task that runs the stream's items. At most one is queued or running at a time
    // (scheduled), so the stream owns its record and scheduling never allocates or fails.
    struct head_task_t : sched::task_t {
        std::shared_ptr<stream_state_t> s; // the stream, alive while its task is queued
        sched::thread_pool_t *pool = nullptr;
    } head;
};

namespace {

thread_local stream *tls_current = nullptr;
// The streams whose operations this thread is running, innermost first: an op can run another
// stream's op nested inside it (inline with 1 thread, or while it helps in a wait). A wait on
// any of them from in there could never end, so it is refused.
struct running_frame_t {
    const stream_state_t *s;
    const running_frame_t *outer;
};
thread_local const running_frame_t *tls_running = nullptr;

bool running_here(const stream_state_t *s) {
    for (const running_frame_t *f = tls_running; f; f = f->outer)
        if (f->s == s) return true;
    return false;
}

void schedule(const std::shared_ptr<stream_state_t> &s, sched::thread_pool_t &pool) noexcept;

// Takes the stream's head item off its queue (the caller holds s.m); skip: an op failed since
// the last synchronize, so ops are skipped.
stream_item_t pop_head(stream_state_t &s, bool &skip) {
    stream_item_t item = std::move(s.queue.front());
    s.queue.pop_front();
    skip = s.error != nullptr;
    return item;
}

// Counts the head item finished. True if another item is waiting to run (scheduled stays set);
// with `next` given it is moved there, taken under the same lock.
bool finish_item(stream_state_t &s, stream_item_t *next = nullptr, bool *skip = nullptr) {
    // release: pairs with synchronize's acquire load.
    s.finished.fetch_add(1, std::memory_order_release);
    // A sleeping synchronize wakes after every item, not only at its target, to help with the
    // next op; it sleeps again only after spinning with nothing to do, so wakes are rare
    // when items are short.
    s.park.wake_all();
    std::lock_guard lock(s.m);
    if (s.queue.empty()) {
        s.scheduled = false;
        return false;
    }
    if (next) *next = pop_head(s, *skip);
    return true;
}

// How long run_head keeps running a stream's items on one pool task before it hands the
// stream back to the pool, so that a thread only helping while it waits can soon return.
constexpr auto stream_batch_budget = std::chrono::microseconds(50);

// Runs the stream's items on the calling pool thread, one after another, for up to
// stream_batch_budget, then hands the stream back to the pool as a new task. Running the next
// item on the same thread keeps its data in that core's caches and costs no task; on a pool
// without workers everything runs inline anyway, so it runs to the end of the queue.
void run_head(const std::shared_ptr<stream_state_t> &s, sched::thread_pool_t &pool) {
    stream_item_t item;
    bool skip;
    {
        std::lock_guard lock(s->m);
        item = pop_head(*s, skip);
    }
    const bool batch = !pool.runs_inline();
    const auto deadline = batch ? std::chrono::steady_clock::now() + stream_batch_budget
                                : std::chrono::steady_clock::time_point::max();
    for (;;) {
        switch (item.kind) {
        case stream_item_t::kind_t::wait: {
            // Park the stream, not the thread: whoever completes the event resumes it.
            auto resume = [s] {
                if (finish_item(*s)) schedule(s, sched::current_pool());
            };
            if (item.event->on_complete(resume)) return;
            break;
        }
        case stream_item_t::kind_t::record: item.event->complete(); break;
        case stream_item_t::kind_t::op:
            if (!skip) {
                stream *outer = std::exchange(tls_current, nullptr); // ops inside an op run inline
                const running_frame_t frame {s.get(), tls_running};
                const running_frame_t *outer_running = std::exchange(tls_running, &frame);
                try {
                    // The op runs as it would have on the submitting thread: under its MXCSR
                    // control bits, not whatever the thread that took the stream's head holds,
                    // and split for the stream's thread budget.
                    const sched::mxcsr_guard fp(item.mxcsr_control);
                    const sched::budget_scope_t share(s->threads);
                    item.op();
                } catch (...) {
                    std::lock_guard lock(s->m);
                    if (!s->error) s->error = std::current_exception();
                }
                tls_running = outer_running;
                tls_current = outer;
            }
            break;
        }
        item = {}; // release the op's captures before the stream reports it finished
        if (batch && std::chrono::steady_clock::now() >= deadline) {
            if (finish_item(*s)) schedule(s, pool);
            return;
        }
        if (!finish_item(*s, &item, &skip)) return;
    }
}

void schedule(const std::shared_ptr<stream_state_t> &s, sched::thread_pool_t &pool) noexcept {
    stream_state_t::head_task_t &h = s->head;
    h.s = s;
    h.pool = &pool;
    h.run = [](sched::task_t *t) noexcept {
        auto &task = *static_cast<stream_state_t::head_task_t *>(t);
        // Out of the record first: run_head may queue it again, and another thread run it.
        const std::shared_ptr<stream_state_t> st = std::move(task.s);
        sched::thread_pool_t *p = task.pool;
        run_head(st, *p);
        p->detached_done();
    };
    pool.submit_task(&h);
}

void enqueue(const std::shared_ptr<stream_state_t> &s, stream_item_t item) {
    sched::thread_pool_t &pool = sched::current_pool(); // may throw; do it before changing state
    bool start;
    {
        std::lock_guard lock(s->m);
        s->queue.push_back(std::move(item)); // may throw: before anything else changes
        ++s->submitted;
        start = !s->scheduled;
        s->scheduled = true;
    }
    if (start) schedule(s, pool);
}

} // namespace

} // namespace blockdnn::impl

namespace blockdnn {

using impl::event_state_t;
using impl::stream_item_t;
using impl::stream_state_t;

bool event::query() const { return !state_ || state_->query(); }

void event::synchronize() const {
    if (!state_ || state_->query()) return;
    event_state_t &e = *state_;
    // Not complete, so recorded after the operation running here: it would wait for itself.
    if (e.owner && impl::running_here(e.owner))
        throw error(status::invalid_arguments,
                "event::synchronize: called inside an operation of the stream the "
                "event was recorded on, after that operation; it would wait forever");
    impl::sched::current_pool().help_until([&] { return e.query(); },
            [&] { e.flag.wait(0, std::memory_order_acquire); }); // acquire: sees the work before the event
}

stream::stream() : state_(std::make_shared<stream_state_t>(0)) {}

namespace {

int checked_budget(const stream_options &o) {
    if (o.threads < 0 || o.threads > impl::sched::thread_pool_t::max_threads)
        throw error(status::invalid_arguments,
                "stream: stream_options::threads = " + std::to_string(o.threads) + " must be in [0, "
                        + std::to_string(impl::sched::thread_pool_t::max_threads) + "] (0: all the library's threads)");
    return o.threads;
}

} // namespace

stream::stream(const stream_options &options) : state_(std::make_shared<stream_state_t>(checked_budget(options))) {}

int stream::threads() const { return impl::sched::capped_budget(state_ ? state_->threads : 0, get_num_threads()); }

std::vector<std::unique_ptr<stream>> make_streams(int n) {
    if (n < 1 || n > impl::sched::thread_pool_t::max_threads)
        throw error(status::invalid_arguments,
                "make_streams: n = " + std::to_string(n) + " must be in [1, "
                        + std::to_string(impl::sched::thread_pool_t::max_threads) + "]");
    const int all = get_num_threads();
    std::vector<std::unique_ptr<stream>> v;
    v.reserve(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k)
        v.push_back(std::make_unique<stream>(stream_options {std::max(1, all / n + (k < all % n ? 1 : 0))}));
    return v;
}

stream::~stream() {
    try {
        synchronize();
    } catch (...) { // documented: an unreported error is dropped
    }
}

void stream::submit(std::function<void()> op) {
    if (!op) throw error(status::invalid_arguments, "stream::submit: op is an empty std::function");
    if (!state_) {
        op();
        return;
    }
    const unsigned control = _mm_getcsr() & ~impl::sched::mxcsr_flags;
    impl::enqueue(state_, {stream_item_t::kind_t::op, std::move(op), nullptr, control});
}

event stream::record() {
    auto e = std::make_shared<event_state_t>();
    if (!state_) e->complete();
    else {
        e->owner = state_.get();
        impl::enqueue(state_, {stream_item_t::kind_t::record, nullptr, e, 0});
    }
    return event(e);
}

void stream::wait(const event &e) {
    if (!e.state_) return;
    if (!state_) {
        e.synchronize();
        return;
    }
    impl::enqueue(state_, {stream_item_t::kind_t::wait, nullptr, e.state_, 0});
}

void stream::synchronize() {
    if (!state_) return;
    if (impl::running_here(state_.get()))
        throw error(status::invalid_arguments,
                "stream::synchronize: called inside an operation of this same "
                "stream (or of an op running nested in one), which would wait "
                "for itself forever");
    stream_state_t &s = *state_;
    std::uint64_t target;
    {
        std::lock_guard lock(s.m);
        target = s.submitted;
    }
    // acquire: pairs with finish_item's release, so the ops' effects are visible here.
    auto finished = [&] { return s.finished.load(std::memory_order_acquire) >= target; };
    // Asleep, it returns to helping after every item: the next op's parallel loops may need
    // this thread, as they would an idle worker. `seen` is read after help_until last found the
    // work unfinished, so the last item may already be counted in it: the target ends the sleep
    // too, or the sleep would wait for an item that never comes.
    auto next_item = [&] {
        const std::uint64_t seen = s.finished.load(std::memory_order_relaxed);
        s.park.sleep_until([&] {
            const std::uint64_t now = s.finished.load(std::memory_order_acquire);
            return now != seen || now >= target;
        });
    };
    if (!finished()) impl::sched::current_pool().help_until(finished, next_item);
    std::exception_ptr err;
    {
        std::lock_guard lock(s.m);
        err = std::exchange(s.error, nullptr);
    }
    if (err) std::rethrow_exception(err);
}

bool stream::query() const {
    if (!state_) return true;
    std::lock_guard lock(state_->m);
    // acquire: a true answer makes the ops' effects visible, as synchronize() does.
    return state_->finished.load(std::memory_order_acquire) >= state_->submitted;
}

stream &default_stream() {
    static stream s {stream::default_tag {}};
    return s;
}

stream &current_stream() { return impl::tls_current ? *impl::tls_current : default_stream(); }

stream_scope::stream_scope(stream &s) : prev_(impl::tls_current) { impl::tls_current = &s; }

stream_scope::~stream_scope() { impl::tls_current = prev_; }

} // namespace blockdnn
