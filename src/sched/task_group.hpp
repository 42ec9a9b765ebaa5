// SPDX-License-Identifier: Apache-2.0
// Task groups: tasks spawned on a pool and waited for together (fork-join for irregular work).
// Task records come from storage the group owns and recycles (a few inline, then slabs), so a
// spawn allocates nothing in steady state: with malloc, the thread that frees a record is
// usually not the one that allocated it, which is glibc's slow path.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "sched/thread_pool.hpp"

namespace blockdnn::impl::sched {

/// Create, use and destroy a group on one thread, which works in the pool meanwhile. Only that
/// thread calls run() and wait(); tasks may not add to their own group (they may make groups
/// of their own).
class task_group_t {
public:
    explicit task_group_t(thread_pool_t &pool);
    /// Waits for the tasks; an error wait() did not rethrow is dropped.
    ~task_group_t();
    task_group_t(const task_group_t &) = delete;
    task_group_t &operator=(const task_group_t &) = delete;

    /// Queues f (runs it inline if the pool has no workers).
    template <typename F>
    void run(F &&f) {
        if (pool_.runs_inline()) {
            try {
                f();
            } catch (...) {
                record_error();
            }
            return;
        }
        using fn_t = std::decay_t<F>;
        struct group_task_t final : task_t {
            group_task_t(F &&fn, task_group_t *g) : fn(std::forward<F>(fn)), group(g) {}
            fn_t fn;
            task_group_t *group;
        };
        constexpr bool fits = sizeof(group_task_t) <= sizeof(record_t) && alignof(group_task_t) <= alignof(record_t);
        group_task_t *t = fits ? new (get_record()) group_task_t(std::forward<F>(f), this)
                               : new group_task_t(std::forward<F>(f), this);
        t->run = [](task_t *self) noexcept {
            auto *gt = static_cast<group_task_t *>(self);
            task_group_t *g = gt->group;
            try {
                gt->fn();
            } catch (...) {
                g->record_error();
            }
            if constexpr (fits) {
                gt->~group_task_t();
                g->put_record(gt);
            } else {
                delete gt;
            }
            g->finish_one(); // last: the group may be gone after this
        };
        ++spawned_;
        pool_.push(t);
    }

    /// Helps until every task queued so far has finished; rethrows the first exception one threw.
    void wait();

private:
    // Storage for one task: holds tasks whose callable is up to ~100 bytes; bigger ones use new.
    union record_t {
        record_t *next;
        alignas(std::max_align_t) std::byte bytes[128];
    };
    static constexpr int inline_records = 4; // enough for small fork-join nodes without a slab
    static constexpr int slab_records = 64;

    void *get_record();         // owner thread
    void put_record(void *rec); // any thread, after the task's callable is destroyed
    void record_error();
    void finish_one();

    thread_pool_t &pool_;
    thread_pool_t::scope_t scope_;
    std::int64_t spawned_ = 0; // owner thread only
    record_t *free_ = nullptr; // owner thread only
    record_t inline_[inline_records];
    std::vector<std::unique_ptr<record_t[]>> slabs_;
    alignas(cache_line) std::atomic<record_t *> returned_ {nullptr}; // records freed by tasks
    alignas(cache_line) std::atomic<std::int64_t> finished_ {0};     // tasks done (any thread)
    std::atomic<bool> failed_ {false};
    std::exception_ptr error_;
};

} // namespace blockdnn::impl::sched
