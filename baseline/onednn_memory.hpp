// SPDX-License-Identifier: Apache-2.0
// oneDNN memory objects on buffers from blockdnn's allocator, so that a oneDNN row and its
// blockdnn row run on memory placed the same way (large buffers on huge pages, see
// src/core/memory.hpp) and their ratio compares kernels, not allocators; and the values the
// baselines fill them with.
#pragma once

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

#include <dnnl.hpp>

#include "core/memory.hpp"

namespace bench {

class onednn_buffers_t {
public:
    onednn_buffers_t() = default;
    onednn_buffers_t(const onednn_buffers_t &) = delete;
    onednn_buffers_t &operator=(const onednn_buffers_t &) = delete;
    ~onednn_buffers_t() {
        for (const auto &[p, n] : held_) blockdnn::impl::free_memory(p, n);
    }

    /// A memory object for `md` on a buffer this object owns (freed with it).
    dnnl::memory make(const dnnl::memory::desc &md, const dnnl::engine &eng) {
        const std::size_t n = md.get_size();
        void *p = blockdnn::impl::alloc_memory(n);
        if (!p) throw std::bad_alloc();
        held_.emplace_back(p, n);
        return dnnl::memory(md, eng, p);
    }

private:
    std::vector<std::pair<void *, std::size_t>> held_;
};

/// Fills m's buffer with the pattern (i * 13 % 17) / 8 - 1 (mean 0, variance 0.375, in
/// [-1, 1]): fixed values for a baseline whose time does not depend on them.
inline void fill_pattern(const dnnl::memory &m) {
    float *f = static_cast<float *>(m.get_data_handle());
    const std::size_t n = m.get_desc().get_size() / 4;
    for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<float>((i * 13) % 17) * 0.125f - 1.f;
}

} // namespace bench
