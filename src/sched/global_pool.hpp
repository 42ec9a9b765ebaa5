// SPDX-License-Identifier: Apache-2.0
// The process-wide pool behind parallel_for and streams, and its thread count
// (set_num_threads, BLOCKDNN_NUM_THREADS, else the physical core count from cpuinfo).
#pragma once

#include "sched/thread_pool.hpp"

namespace blockdnn::impl::sched {

/// The process-wide pool, started on first use. Throws blockdnn::error (invalid_arguments) if
/// BLOCKDNN_NUM_THREADS is needed and bad.
thread_pool_t &global_pool();

/// Where work started on the calling thread goes: the pool the thread works in (a worker, or a
/// thread inside a wait or parallel_for), else the process-wide pool.
inline thread_pool_t &current_pool() {
    if (thread_pool_t *p = thread_pool_t::of_this_thread()) return *p;
    return global_pool();
}

/// The thread count a new process-wide pool gets without set_num_threads: BLOCKDNN_NUM_THREADS
/// if set, else cpuinfo's physical core count. Throws as global_pool().
int default_num_threads();

} // namespace blockdnn::impl::sched
