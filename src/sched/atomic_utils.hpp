// SPDX-License-Identifier: Apache-2.0
// Small concurrency helpers shared by the scheduler: cache-line size, a spin-loop hint and a
// sequentially consistent fence that ThreadSanitizer can follow.
#pragma once

#include <atomic>
#include <cstddef>

namespace blockdnn::impl::sched {

/// Bytes per cache line on x86-64; hot atomics written by different threads sit on separate lines.
inline constexpr std::size_t cache_line = 64;

/// Tells the core this is a spin-wait loop (x86 `pause`): saves power and lets the sibling
/// hyper-thread run.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

#if defined(__SANITIZE_THREAD__)
inline std::atomic<unsigned> tsan_fence_word {0};
#endif

/// A full (seq_cst) fence. ThreadSanitizer does not model std::atomic_thread_fence (g++ warns
/// -Wtsan), so under TSan the fence is a seq_cst read-modify-write of one shared word: all such
/// RMWs are totally ordered and each reads the previous one, which is at least as strong as the
/// fence and is something TSan understands.
inline void sc_fence() {
#if defined(__SANITIZE_THREAD__)
    tsan_fence_word.fetch_add(1, std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

/// A release fence; under TSan the same shared-word RMW as sc_fence (stronger, and visible to TSan).
inline void release_fence() {
#if defined(__SANITIZE_THREAD__)
    tsan_fence_word.fetch_add(1, std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(std::memory_order_release);
#endif
}

} // namespace blockdnn::impl::sched
