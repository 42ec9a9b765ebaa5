// SPDX-License-Identifier: Apache-2.0
// The process-wide pool and the public thread-count controls.
#include "sched/global_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <cpuinfo.h>

#include "blockdnn/status.hpp"
#include "blockdnn/stream.hpp"

namespace blockdnn::impl::sched {

namespace {

std::mutex pool_mutex; // serialises creating and replacing the pool
std::atomic<thread_pool_t *> pool_ptr {nullptr};
int api_threads = 0; // from set_num_threads; 0: none (under pool_mutex)

[[noreturn]] void bad_count(const std::string &what) { throw error(status::invalid_arguments, what); }

int checked_count(const char *op, int n) {
    if (n < 1 || n > thread_pool_t::max_threads)
        bad_count(std::string(op) + ": n = " + std::to_string(n) + " must be in [1, "
                + std::to_string(thread_pool_t::max_threads) + "]");
    return n;
}

// Replaces the pool by none; the next use starts one with `n` threads (0: the default count).
// The old pool finishes its queued work first, outside the lock, so its tasks may start pools.
void check_not_in_task(const char *op) {
    if (thread_pool_t::of_this_thread())
        bad_count(std::string(op) + ": called from a task running on the library's threads");
}

void replace_pool(const char *op, int n) {
    check_not_in_task(op);
    thread_pool_t *old;
    {
        std::lock_guard<std::mutex> lock(pool_mutex);
        api_threads = n;
        // acq_rel: later readers see no pool; we see the pool's construction.
        old = pool_ptr.exchange(nullptr, std::memory_order_acq_rel);
    }
    delete old;
}

} // namespace

int default_num_threads() {
    if (const char *env = std::getenv("BLOCKDNN_NUM_THREADS"); env && *env) {
        // Digits only, as the other BLOCKDNN_ variables: strtol alone would take " 2" and "+2".
        const bool digits = std::all_of(env, env + std::strlen(env), [](char ch) { return ch >= '0' && ch <= '9'; });
        char *end = nullptr;
        errno = 0;
        const long v = std::strtol(env, &end, 10);
        if (!digits || errno != 0 || *end != '\0' || v < 1 || v > thread_pool_t::max_threads)
            bad_count(std::string("BLOCKDNN_NUM_THREADS: '") + env + "' is not an integer in [1, "
                    + std::to_string(thread_pool_t::max_threads) + "]");
        return static_cast<int>(v);
    }
    if (!cpuinfo_initialize()) return 1;
    return std::clamp(static_cast<int>(cpuinfo_get_cores_count()), 1, thread_pool_t::max_threads);
}

thread_pool_t &global_pool() {
    // acquire: pairs with the release store below, so the pool is fully built.
    if (thread_pool_t *p = pool_ptr.load(std::memory_order_acquire)) return *p;
    std::lock_guard<std::mutex> lock(pool_mutex);
    if (thread_pool_t *p = pool_ptr.load(std::memory_order_relaxed)) return *p; // under the lock
    const int n = api_threads > 0 ? api_threads : default_num_threads();
    // The pool lives until it is replaced; at exit it stays (reachable from pool_ptr) so that
    // streams destroyed late still find it.
    auto *p = new thread_pool_t(n);
    pool_ptr.store(p, std::memory_order_release); // publishes the built pool to the load above
    return *p;
}

} // namespace blockdnn::impl::sched

namespace blockdnn {

void set_num_threads(int n) {
    using namespace impl::sched;
    checked_count("set_num_threads", n);
    check_not_in_task("set_num_threads");
    // acquire: reads the pool's thread count safely (pairs with the store in global_pool).
    if (thread_pool_t *p = pool_ptr.load(std::memory_order_acquire); p && p->num_threads() == n) {
        std::lock_guard<std::mutex> lock(pool_mutex);
        api_threads = n; // same size: keep the running pool
        return;
    }
    replace_pool("set_num_threads", n);
}

int get_num_threads() { return impl::sched::global_pool().num_threads(); }

void reset_num_threads() { impl::sched::replace_pool("reset_num_threads", 0); }

} // namespace blockdnn
