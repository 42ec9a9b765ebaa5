// SPDX-License-Identifier: Apache-2.0
// The one threading interface kernels see. Kernels split work through these calls and never
// touch threads or queues; the implementation behind them lives in parallel.cpp.
#pragma once

#include <cstdint>
#include <functional>

namespace blockdnn::impl {

using dim_t = std::int64_t;

/// Runs body(begin, end) over disjoint chunks that together cover [0, n) exactly once.
/// Chunks hold at least `grain` iterations (the last may hold fewer). How the range is split
/// depends only on n, grain and the thread count, never on timing, so a reduction that combines
/// per-chunk results in chunk order is deterministic. The first exception thrown by a body is
/// rethrown to the caller after every chunk has finished or been abandoned.
void parallel_for(dim_t n, dim_t grain, const std::function<void(dim_t begin, dim_t end)> &body);

/// Number of threads parallel_for may use (>= 1).
int parallel_max_threads();

/// Splits n items over nthr workers as evenly as possible (the first n % nthr get one more)
/// and returns worker ithr's [begin, end). The classic balance211 of oneDNN's dnnl_thread.hpp.
inline void balance211(dim_t n, int nthr, int ithr, dim_t &begin, dim_t &end) {
    const dim_t base = n / nthr, rem = n % nthr;
    begin = ithr * base + (ithr < rem ? ithr : rem);
    end = begin + base + (ithr < rem ? 1 : 0);
}

} // namespace blockdnn::impl
