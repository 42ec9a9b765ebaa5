// SPDX-License-Identifier: Apache-2.0
// A mutex for short critical sections that two threads take at a high rate (a stream's
// submitter and the thread running its ops). std::mutex puts a thread that finds it taken to
// sleep in the kernel at once, and the futex wait and wake then cost far more than the
// section; this one spins first, then yields the core, and sleeps only when the holder seems
// to have lost its core for longer (oversubscription), so a waiter never burns a whole slice.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "sched/atomic_utils.hpp"

namespace blockdnn::impl::sched {

class spin_mutex_t {
public:
    void lock() {
        // acquire: sees what the previous holder wrote before its unlock.
        for (int round = 0; locked_.exchange(true, std::memory_order_acquire); ++round) {
            if (round < spin_rounds) {
                cpu_relax();
            } else if (round < spin_rounds + yield_rounds) {
                std::this_thread::yield();
            } else {
                // seq_cst with unlock's store and load (store-buffering): either unlock sees
                // the sleeper, or the wait sees the lock free and returns at once.
                sleepers_.fetch_add(1, std::memory_order_seq_cst);
                locked_.wait(true, std::memory_order_seq_cst);
                sleepers_.fetch_sub(1, std::memory_order_relaxed);
            }
        }
    }
    void unlock() {
        locked_.store(false, std::memory_order_seq_cst); // publishes the section's writes
        if (sleepers_.load(std::memory_order_seq_cst) != 0) locked_.notify_one();
    }

private:
    static constexpr int spin_rounds = 64;  // pauses: several times a short section's length
    static constexpr int yield_rounds = 16; // then yields, in case the holder was preempted
    std::atomic<bool> locked_ {false};
    std::atomic<std::uint32_t> sleepers_ {0};
};

} // namespace blockdnn::impl::sched
