// SPDX-License-Identifier: Apache-2.0
// std::vector with 64-byte-aligned storage (from alloc_memory, so large ones sit on huge
// pages): cache-line and zmm aligned buffers for packed weights and kernel scratch.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

#include "core/memory.hpp"

namespace blockdnn::impl {

template <typename T>
struct aligned_allocator_t {
    using value_type = T;
    aligned_allocator_t() = default;
    template <typename U>
    aligned_allocator_t(const aligned_allocator_t<U> &) {}
    T *allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        void *p = alloc_memory(n * sizeof(T));
        if (!p) throw std::bad_alloc();
        return static_cast<T *>(p);
    }
    void deallocate(T *p, std::size_t n) { free_memory(p, n * sizeof(T)); }
    template <typename U>
    bool operator==(const aligned_allocator_t<U> &) const {
        return true;
    }
};

template <typename T>
using aligned_vector = std::vector<T, aligned_allocator_t<T>>;

} // namespace blockdnn::impl
