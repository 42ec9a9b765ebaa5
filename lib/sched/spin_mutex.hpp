// SPDX-License-Identifier: Apache-2.0
// A mutex for critical sections of a few dozen instructions that two threads take at a high
// rate (a stream's submitter and the thread running its ops). std::mutex puts a thread that
// finds it taken to sleep in the kernel, and the futex wait and wake then cost far more than
// the section; this one spins, then yields the core so that a preempted holder can run.
#pragma once

#include <atomic>
#include <thread>

#include "sched/atomic_utils.hpp"

namespace blockdnn::impl::sched {

class spin_mutex_t {
public:
    void lock() {
        // acquire: sees what the previous holder wrote before its unlock.
        while (locked_.exchange(true, std::memory_order_acquire)) {
            for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
                if (spins < max_spins)
                    cpu_relax();
                else
                    std::this_thread::yield();
            }
        }
    }
    void unlock() { locked_.store(false, std::memory_order_release); } // publishes the section's writes

private:
    // Pauses before yielding: several times a short section's length.
    static constexpr int max_spins = 64;
    std::atomic<bool> locked_ {false};
};

} // namespace blockdnn::impl::sched
