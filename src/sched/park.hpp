// SPDX-License-Identifier: Apache-2.0
// A place for threads to sleep until a condition they can re-check becomes true, without a
// lost wake-up: a two-phase wait (announce, re-check, sleep) on an epoch word with
// std::atomic::wait (a futex on Linux), as Taskflow's notifier and Eigen's EventCount do.
// wake_one() issues at most one futex wake at a time: while a woken thread has not yet
// re-checked, further wake_one() calls return at once (that thread's re-check sees their work).
#pragma once

#include <atomic>
#include <cstdint>

#include "sched/atomic_utils.hpp"

namespace blockdnn::impl::sched {

class park_t {
public:
    /// Sleeps until cond() is true. cond() is evaluated after announcing the sleeper, so a
    /// signaler that makes it true and then calls wake_one/wake_all is never missed.
    template <typename Cond>
    void sleep_until(Cond &&cond) {
        sleepers_.fetch_add(1, std::memory_order_relaxed); // ordered by the fence below
        for (;;) {
            // Re-checking now: a wake_one that sees `waking_` false from here on wakes someone.
            waking_.store(false, std::memory_order_relaxed); // ordered by the fence below
            // seq_cst fence: the sleeper count and the cleared flag are visible before cond()
            // reads the state; pairs with the fence in wake() (store-buffering: one side sees
            // the other's store).
            sc_fence();
            // acquire: a wake's epoch increment publishes the state update made before it.
            const std::uint32_t e = epoch_.load(std::memory_order_acquire);
            if (cond()) break;
            epoch_.wait(e, std::memory_order_acquire); // returns once the epoch moved
        }
        waking_.store(false, std::memory_order_relaxed);   // a hint: lets the next wake_one through
        sleepers_.fetch_sub(1, std::memory_order_relaxed); // a hint for signalers
    }

    /// Call after making some sleeper's condition true: wakes one sleeper, if any.
    void wake_one() { wake(false); }
    /// Call after making every sleeper's condition true (or to let all re-check).
    void wake_all() { wake(true); }

    /// Threads currently inside sleep_until (a hint).
    std::uint32_t sleepers() const { return sleepers_.load(std::memory_order_relaxed); } // hint only

private:
    void wake(bool all) {
        // seq_cst fence: the state update before this call is ordered before the loads below;
        // pairs with the fence in sleep_until().
        sc_fence();
        if (sleepers_.load(std::memory_order_relaxed) == 0) return; // ordered by the fence above
        // A thread woken earlier has not re-checked yet; its re-check (after clearing the flag
        // and a fence) sees our state update, because we saw the flag still set.
        if (!all && (waking_.load(std::memory_order_relaxed) || waking_.exchange(true, std::memory_order_relaxed)))
            return;
        // release: a sleeper that reads the new epoch sees the state update.
        epoch_.fetch_add(1, std::memory_order_release);
        if (all) epoch_.notify_all();
        else epoch_.notify_one();
    }

    alignas(cache_line) std::atomic<std::uint32_t> epoch_ {0};
    alignas(cache_line) std::atomic<std::uint32_t> sleepers_ {0};
    std::atomic<bool> waking_ {false}; // a wake_one is in flight (same line as sleepers_: read together)
};

} // namespace blockdnn::impl::sched
