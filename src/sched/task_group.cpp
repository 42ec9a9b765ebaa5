// SPDX-License-Identifier: Apache-2.0
// Task groups: waiting, errors, and the recycled task records (see task_group.hpp).
#include "sched/task_group.hpp"

namespace blockdnn::impl::sched {

task_group_t::task_group_t(thread_pool_t &pool) : pool_(pool), scope_(pool) {
    for (record_t &r : inline_) {
        r.next = free_;
        free_ = &r;
    }
}

task_group_t::~task_group_t() {
    try {
        wait();
    } catch (...) { // the caller did not wait(); nobody is left to report the error to
    }
}

void *task_group_t::get_record() {
    if (!free_) // take back what tasks returned; acquire: their last use of the records is done
        free_ = returned_.exchange(nullptr, std::memory_order_acquire);
    if (!free_) {
        slabs_.push_back(std::make_unique<record_t[]>(slab_records));
        for (int i = 0; i < slab_records; ++i) {
            slabs_.back()[i].next = free_;
            free_ = &slabs_.back()[i];
        }
    }
    record_t *r = free_;
    free_ = r->next;
    return r;
}

void task_group_t::put_record(void *rec) {
    auto *r = static_cast<record_t *>(rec);
    r->next = returned_.load(std::memory_order_relaxed); // a guess; the CAS checks it
    // release: the task's use of the record happens before the owner reuses it. The owner takes
    // the whole list with one exchange, so there is no ABA.
    while (!returned_.compare_exchange_weak(r->next, r, std::memory_order_release, std::memory_order_relaxed)) {}
}

void task_group_t::wait() {
    // acquire: pairs with the tasks' acq_rel increments, so their writes are visible.
    auto finished = [&] { return finished_.load(std::memory_order_acquire) == spawned_; };
    pool_.help_until(finished, [&] { pool_.join_.sleep_until(finished); });
    // relaxed: the flag and error_ were published by the increments the wait above acquired.
    if (failed_.load(std::memory_order_relaxed)) {
        std::exception_ptr e = std::exchange(error_, nullptr);
        failed_.store(false, std::memory_order_relaxed); // no task of this group is running now
        std::rethrow_exception(e);
    }
}

void task_group_t::record_error() {
    // acq_rel: exactly one task writes error_; the write is published by finish_one's increment.
    if (!failed_.exchange(true, std::memory_order_acq_rel)) error_ = std::current_exception();
}

void task_group_t::finish_one() {
    thread_pool_t *pool = &pool_; // the group may be gone once the last task is counted
    // acq_rel: the task's writes are visible to the waiter that sees the count complete.
    finished_.fetch_add(1, std::memory_order_acq_rel);
    pool->join_.wake_all(); // only a fence and a load unless the owner sleeps in wait()
}

} // namespace blockdnn::impl::sched
