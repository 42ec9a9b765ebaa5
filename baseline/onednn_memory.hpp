// SPDX-License-Identifier: Apache-2.0
// oneDNN memory objects on buffers from blockdnn's allocator, so that a oneDNN row and its
// blockdnn row run on memory placed the same way (large buffers on huge pages, see
// src/core/memory.hpp) and their ratio compares kernels, not allocators.
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

} // namespace bench
