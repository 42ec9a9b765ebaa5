// SPDX-License-Identifier: Apache-2.0
// lru_map_t: a bounded map that drops its least recently used entries, for the library's caches.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <unordered_map>
#include <utility>

namespace blockdnn::impl {

/// A map of at most capacity() entries ordered by use: find() and insert() make an entry the
/// most recently used, and an insert beyond the capacity evicts from the least recently used
/// end. The caches of generated kernels and of conv confs are bounded this way, so a stream of
/// ever new problems does not hold memory for each while the problems in use stay found; this
/// is the one copy of that bookkeeping (a hash map into a list ordered by use). Capacity 0
/// keeps nothing. No locking: a map shared by threads is guarded by its owner, which usually
/// also counts hits and misses under the same lock. Pointers and references to values stay
/// valid until their entry is erased or evicted (list nodes never move).
template <typename Key, typename Value, typename Hash = std::hash<Key>, typename Equal = std::equal_to<Key>>
class lru_map_t {
public:
    using entry_t = std::pair<const Key, Value>;

    explicit lru_map_t(std::size_t capacity) : capacity_(capacity) {}
    // The index points into the list: a copy would point into the original's.
    lru_map_t(const lru_map_t &) = delete;
    lru_map_t &operator=(const lru_map_t &) = delete;

    /// The value of `key`, now the most recently used entry; null if absent.
    Value *find(const Key &key) {
        const auto it = index_.find(key);
        if (it == index_.end()) return nullptr;
        entries_.splice(entries_.begin(), entries_, it->second);
        return &it->second->second;
    }

    /// True if `key` is held; its place in the order is unchanged.
    bool contains(const Key &key) const { return index_.count(key) != 0; }

    /// Puts (key, value) first, as the most recently used entry (replacing the value of a key
    /// already held), then evicts least recently used entries beyond the capacity; returns how
    /// many it evicted. At capacity 0 that is the new entry itself.
    std::size_t insert(Key key, Value value) {
        if (Value *held = find(key)) {
            *held = std::move(value);
            return 0;
        }
        entries_.emplace_front(std::move(key), std::move(value));
        index_.emplace(entries_.front().first, entries_.begin());
        return evict();
    }

    /// Removes `key`; returns false if it was absent.
    bool erase(const Key &key) {
        const auto it = index_.find(key);
        if (it == index_.end()) return false;
        const auto pos = it->second;
        index_.erase(it); // before the list node its key lives in
        entries_.erase(pos);
        return true;
    }

    /// Changes the capacity, evicting least recently used entries beyond it; returns how many.
    std::size_t set_capacity(std::size_t capacity) {
        capacity_ = capacity;
        return evict();
    }
    std::size_t capacity() const { return capacity_; }
    std::size_t size() const { return entries_.size(); }
    void clear() {
        index_.clear();
        entries_.clear();
    }

    /// The entries, most recently used first.
    auto begin() const { return entries_.cbegin(); }
    auto end() const { return entries_.cend(); }

private:
    // The index's keys are the list nodes' own keys, held once.
    using key_ref = std::reference_wrapper<const Key>;
    struct ref_hash {
        std::size_t operator()(key_ref k) const { return Hash {}(k.get()); }
    };
    struct ref_equal {
        bool operator()(key_ref a, key_ref b) const { return Equal {}(a.get(), b.get()); }
    };

    std::size_t evict() {
        std::size_t n = 0;
        for (; entries_.size() > capacity_; ++n) {
            index_.erase(entries_.back().first);
            entries_.pop_back();
        }
        return n;
    }

    std::size_t capacity_;
    std::list<entry_t> entries_; // most recently used first
    std::unordered_map<key_ref, typename std::list<entry_t>::iterator, ref_hash, ref_equal> index_;
};

} // namespace blockdnn::impl
