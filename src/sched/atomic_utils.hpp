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

/// A fence of `order`. ThreadSanitizer does not model std::atomic_thread_fence (g++ warns
/// -Wtsan), so under TSan every fence is a seq_cst read-modify-write of one shared word: all
/// such RMWs are totally ordered and each reads the previous one, which is at least as strong
/// as any fence and is something TSan understands.
template <std::memory_order order>
inline void fence() {
#if defined(__SANITIZE_THREAD__)
    tsan_fence_word.fetch_add(1, std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(order);
#endif
}

/// A full (seq_cst) fence.
inline void sc_fence() { fence<std::memory_order_seq_cst>(); }

/// A release fence.
inline void release_fence() { fence<std::memory_order_release>(); }

} // namespace blockdnn::impl::sched
