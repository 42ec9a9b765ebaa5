// SPDX-License-Identifier: Apache-2.0
// Serial implementation of the parallel_for interface. The scheduler issue replaces the body
// of these functions with the work-stealing pool; callers do not change.
#include "common/parallel.hpp"

namespace blockdnn::impl {

void parallel_for(dim_t n, dim_t grain, const std::function<void(dim_t, dim_t)> &body) {
    if (n <= 0) return;
    (void)grain;
    body(0, n);
}

int parallel_max_threads() { return 1; }

} // namespace blockdnn::impl
