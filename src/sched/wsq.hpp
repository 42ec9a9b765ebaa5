// SPDX-License-Identifier: Apache-2.0
// Chase-Lev work-stealing deque with the C11 memory orderings of N. M. Le, A. Pop, A. Cohen and
// F. Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory Models", PPoPP 2013
// (Fig. 1; their take() is pop() here). One owner pushes and pops at the bottom; any thread
// steals from the top with one CAS. The ring grows when full; old rings are kept until the
// deque is destroyed because a thief may still be reading one.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "sched/atomic_utils.hpp"

namespace blockdnn::impl::sched {

/// Outcome of wsq_t::steal.
enum class steal_result {
    success, ///< an item was taken
    empty,   ///< the deque was empty
    abort,   ///< lost a race with the owner or another thief; the deque may still hold items
};

/// A work-stealing deque of T (a pointer or small integer). push/pop: owner thread only;
/// steal: any thread. Capacity starts at `capacity` (rounded up to a power of two) and doubles
/// when full.
template <typename T>
class wsq_t {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "items are stored in lock-free atomics");

public:
    explicit wsq_t(std::int64_t capacity = 256) {
        std::int64_t cap = 2;
        while (cap < capacity) cap *= 2;
        rings_.push_back(std::make_unique<ring_t>(cap));
        ring_.store(rings_.back().get(), std::memory_order_relaxed); // not shared yet
    }
    wsq_t(const wsq_t &) = delete;
    wsq_t &operator=(const wsq_t &) = delete;

    /// Owner: adds x at the bottom.
    void push(T x) {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed); // only the owner writes bottom
        // acquire: pairs with a thief's CAS on top, so a slot a thief has read is not reused early.
        const std::int64_t t = top_.load(std::memory_order_acquire);
        ring_t *r = ring_.load(std::memory_order_relaxed); // only the owner writes ring_
        if (b - t > r->mask) r = grow(r, t, b);
        r->put(b, x);
        // release fence (the paper's): the slot write is visible to any thread that sees this or a
        // later bottom, including the relaxed stores of bottom in pop().
        release_fence();
        bottom_.store(b + 1, std::memory_order_relaxed); // ordered by the fence above
    }

    /// Owner: takes the item at the bottom (the newest). False if the deque is empty.
    bool pop(T &out) {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1; // only the owner writes bottom
        ring_t *r = ring_.load(std::memory_order_relaxed);                  // only the owner writes ring_
        bottom_.store(b, std::memory_order_relaxed); // reserve slot b; published by the fence below
        // seq_cst fence: orders the bottom store before the top load, against the fence in steal()
        // (store-buffering); without it owner and thief could both take the last item.
        sc_fence();
        std::int64_t t = top_.load(std::memory_order_relaxed); // ordered by the fence above
        if (t > b) {                                           // empty: undo the reservation
            bottom_.store(b + 1, std::memory_order_relaxed);   // owner-private until the next fence
            return false;
        }
        out = r->get(b);
        if (t == b) { // last item: race the thieves for it through top
            // seq_cst CAS: the one total order decides between the owner and a thief; relaxed on
            // failure since nothing is read after losing.
            const bool won =
                    top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
            bottom_.store(b + 1, std::memory_order_relaxed); // deque is empty either way
            return won;
        }
        return true;
    }

    /// Any thread: takes the item at the top (the oldest).
    steal_result steal(T &out) {
        // acquire: pairs with other thieves' CAS, so the top we read is not older than their reads.
        std::int64_t t = top_.load(std::memory_order_acquire);
        // seq_cst fence: orders the top load before the bottom load, against the fence in pop().
        sc_fence();
        // acquire: pairs with the owner's release fence in push(), so the slot at t is written.
        const std::int64_t b = bottom_.load(std::memory_order_acquire);
        if (t >= b) return steal_result::empty;
        // acquire (the paper's consume): a grown ring's contents are visible with its pointer.
        ring_t *r = ring_.load(std::memory_order_acquire);
        const T x = r->get(t);
        // seq_cst CAS: claims slot t against the owner's CAS in pop() and other thieves; relaxed on
        // failure since x is then discarded.
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
            return steal_result::abort;
        out = x;
        return steal_result::success;
    }

    /// Any thread: true if the deque looked empty at some instant (a hint only).
    bool empty() const {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed); // a hint: no ordering needed
        const std::int64_t t = top_.load(std::memory_order_relaxed);
        return t >= b;
    }

    /// Current ring capacity (owner; for tests).
    std::int64_t capacity() const { return ring_.load(std::memory_order_relaxed)->mask + 1; }

private:
    struct ring_t {
        explicit ring_t(std::int64_t cap) : mask(cap - 1), slots(new std::atomic<T>[cap]) {}
        // release/acquire on the slot itself: a thief that reads the item also sees what the owner
        // wrote before pushing it (the task's fields), whichever bottom store it synchronized with.
        // On x86 both are plain moves; they also make the hand-over visible to ThreadSanitizer.
        void put(std::int64_t i, T x) { slots[i & mask].store(x, std::memory_order_release); }
        T get(std::int64_t i) const { return slots[i & mask].load(std::memory_order_acquire); }
        std::int64_t mask;
        std::unique_ptr<std::atomic<T>[]> slots;
    };

    // Owner: copies [t, b) into a ring twice as big and publishes it; the old ring stays alive.
    ring_t *grow(ring_t *old, std::int64_t t, std::int64_t b) {
        rings_.push_back(std::make_unique<ring_t>(2 * (old->mask + 1)));
        ring_t *r = rings_.back().get();
        for (std::int64_t i = t; i < b; ++i) r->put(i, old->get(i));
        // release: a thief that loads the new pointer (acquire) sees the copied slots.
        ring_.store(r, std::memory_order_release);
        return r;
    }

    alignas(cache_line) std::atomic<std::int64_t> top_ {0};    // thieves' end, written by CAS
    alignas(cache_line) std::atomic<std::int64_t> bottom_ {0}; // owner's end
    alignas(cache_line) std::atomic<ring_t *> ring_ {nullptr};
    std::vector<std::unique_ptr<ring_t>> rings_; // owner only: every ring ever used, newest last
};

} // namespace blockdnn::impl::sched
