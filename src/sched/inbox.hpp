// SPDX-License-Identifier: Apache-2.0
// The pool's injection queue: a lock-free intrusive stack that any thread pushes onto with one
// CAS and any thread empties with one exchange (taking every task at once). Taking the whole
// list, never one node, is what makes it safe without hazard pointers: no thread ever reads a
// node another thread may be removing, and there is no ABA.
#pragma once

#include <atomic>

#include "sched/atomic_utils.hpp"
#include "sched/task.hpp"

namespace blockdnn::impl::sched {

class inbox_t {
public:
    /// Any thread: adds t (t->next is overwritten). Lock-free: a failed CAS means another push
    /// or a take succeeded.
    void push(task_t *t) {
        t->next = head_.load(std::memory_order_relaxed); // only a guess; the CAS checks it
        // release: the consumer that takes this node sees the task's fields and t->next. Later
        // pushes are RMWs, so they continue this release sequence.
        while (!head_.compare_exchange_weak(t->next, t, std::memory_order_release, std::memory_order_relaxed)) {}
    }

    /// Any thread: removes every task and returns them oldest first (nullptr if none).
    task_t *take_all() {
        // relaxed: a cheap look first, so idle threads polling an empty inbox do not write its line.
        if (head_.load(std::memory_order_relaxed) == nullptr) return nullptr;
        // acquire: pairs with the pushes' release CAS (the whole release sequence).
        task_t *newest_first = head_.exchange(nullptr, std::memory_order_acquire);
        task_t *oldest_first = nullptr;
        while (newest_first) { // reverse the private list
            task_t *next = newest_first->next;
            newest_first->next = oldest_first;
            oldest_first = newest_first;
            newest_first = next;
        }
        return oldest_first;
    }

    /// A hint: true if the inbox looked empty.
    bool empty() const { return head_.load(std::memory_order_relaxed) == nullptr; } // hint only

private:
    alignas(cache_line) std::atomic<task_t *> head_ {nullptr};
};

} // namespace blockdnn::impl::sched
