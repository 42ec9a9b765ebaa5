// SPDX-License-Identifier: Apache-2.0
// The one threading interface kernels see. Kernels split work through these calls and never
// touch threads or queues; the work-stealing pool behind them lives in src/sched/.
#pragma once

#include <cstdint>
#include <functional>

namespace blockdnn::impl {

using dim_t = std::int64_t;

/// Runs body(begin, end) over disjoint chunks that together cover [0, n) exactly once, on the
/// library's threads (the calling thread included). Chunks hold at least `grain` iterations
/// (the last may hold fewer). How the range is split depends only on n, grain and
/// parallel_max_threads(), never on timing (sched::chunk_count), so a reduction that combines
/// per-chunk results in chunk order is deterministic for a given thread count. The first
/// exception thrown by a body is rethrown to the caller after every chunk has finished or been
/// abandoned. Every chunk runs under the caller's MXCSR control bits (rounding, FTZ, DAZ) and
/// thread budget, on whichever thread takes it. Calls nest: a body may call parallel_for
/// again; a waiting thread runs other chunks meanwhile.
void parallel_for(dim_t n, dim_t grain, const std::function<void(dim_t begin, dim_t end)> &body);

/// body(i0, i1) for every point of the d0 x d1 space, points split over the threads as
/// parallel_for(d0 * d1, 1) splits their row-major index. For blocked iteration spaces
/// (mb x oc-blocks, say) where each point is a sizeable piece of work.
void parallel_for_2d(dim_t d0, dim_t d1, const std::function<void(dim_t i0, dim_t i1)> &body);

/// body(i0, i1, i2) for every point of d0 x d1 x d2 (mb x oc-blocks x oh, say), as parallel_for_2d.
void parallel_for_3d(dim_t d0, dim_t d1, dim_t d2, const std::function<void(dim_t i0, dim_t i1, dim_t i2)> &body);

/// Number of threads parallel_for splits work for (>= 1): the pool's size, or less inside an
/// op of a stream with a thread budget (blockdnn::stream_options).
int parallel_max_threads();

/// Splits n items over nthr workers as evenly as possible (the first n % nthr get one more)
/// and returns worker ithr's [begin, end). The classic balance211 of oneDNN's dnnl_thread.hpp.
inline void balance211(dim_t n, int nthr, int ithr, dim_t &begin, dim_t &end) {
    const dim_t base = n / nthr, rem = n % nthr;
    begin = ithr * base + (ithr < rem ? ithr : rem);
    end = begin + base + (ithr < rem ? 1 : 0);
}

} // namespace blockdnn::impl
