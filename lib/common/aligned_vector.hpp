// SPDX-License-Identifier: Apache-2.0
// std::vector with 64-byte-aligned storage: cache-line and zmm aligned buffers for packed
// weights and kernel scratch.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace blockdnn::impl {

template <typename T>
struct aligned_allocator_t {
    using value_type = T;
    static constexpr std::align_val_t alignment {64};
    aligned_allocator_t() = default;
    template <typename U>
    aligned_allocator_t(const aligned_allocator_t<U> &) {}
    T *allocate(std::size_t n) { return static_cast<T *>(::operator new(n * sizeof(T), alignment)); }
    void deallocate(T *p, std::size_t) { ::operator delete(p, alignment); }
    template <typename U>
    bool operator==(const aligned_allocator_t<U> &) const { return true; }
};

template <typename T>
using aligned_vector = std::vector<T, aligned_allocator_t<T>>;

} // namespace blockdnn::impl
