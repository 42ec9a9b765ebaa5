// SPDX-License-Identifier: Apache-2.0
// Memory the library allocates for tensors and large buffers (packed weights, scratch).
#pragma once

#include <cstddef>

namespace blockdnn::impl {

/// Size of a transparent huge page on x86-64 (2 MiB).
constexpr std::size_t huge_page_bytes = std::size_t {2} << 20;

/// Where a huge-page buffer starts past its huge-page boundary: one cache line, where glibc
/// places a large block asked for with 64-byte alignment (posix_memalign, as the heap path here
/// and PyTorch's allocator ask). A stride-2 read of 64-byte pixels (a strided 1x1 convolution on
/// 16-channel blocks) whose rows are an even number of lines long then reads the odd line of
/// each 128-byte pair; on the boundary it reads the even ones, which ran slower
/// (docs/tuning.md, "Huge pages").
constexpr std::size_t huge_buffer_offset = 64;

/// `bytes` of memory aligned to 64 bytes, or null if none is left (bytes 0 asks for 1).
/// A buffer of huge_page_bytes or more is a mapping of its own (mmap(2)) starting
/// huge_buffer_offset past a huge-page boundary and advised MADV_HUGEPAGE (madvise(2)), so
/// that a kernel whose reads stride across it (a strided 1x1 convolution reads every other row
/// of a 50 MB tensor) misses the TLB once per 2 MiB instead of once per 4 KiB, and so that its
/// placement does not depend on earlier allocations. Linux grants the pages when THP is
/// `always` or `madvise` in /sys/kernel/mm/transparent_hugepage/enabled; otherwise the advice
/// does nothing. The mapping is rounded up to whole huge pages (and a small page for the last
/// bytes where the offset pushes them past those), so a buffer costs less than 2 MiB more memory.
/// BLOCKDNN_HUGE_PAGES=0 turns both off (read once): every buffer then comes from the heap.
/// Throws invalid_arguments if BLOCKDNN_HUGE_PAGES holds anything else (huge_pages_enabled).
void *alloc_memory(std::size_t bytes);

/// Frees what alloc_memory(bytes) returned; `bytes` must be the size asked for. Null is allowed.
void free_memory(void *p, std::size_t bytes);

/// Whether alloc_memory places large buffers for huge pages: BLOCKDNN_HUGE_PAGES unset, empty
/// or 1 -> true, 0 -> false. Any other value throws invalid_arguments naming it.
bool huge_pages_enabled();

} // namespace blockdnn::impl
