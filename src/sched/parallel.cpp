// SPDX-License-Identifier: Apache-2.0
// The kernels' threading interface, on the work-stealing pool of this folder.
#include "sched/parallel.hpp"

#include "core/fp_env.hpp"
#include "core/utils.hpp"
#include "sched/budget.hpp"
#include "sched/global_pool.hpp"

namespace blockdnn::impl {

void parallel_for(dim_t n, dim_t grain, const std::function<void(dim_t, dim_t)> &body) {
    if (n <= 0) return;
    sched::thread_pool_t &pool = sched::current_pool();
    // Chunks may run on any of the pool's threads: each runs under the caller's MXCSR control
    // bits (the denormals mode of the op that split its work) and thread budget (its stream's
    // share of the threads, for the loops nested in it).
    const unsigned control = mxcsr_control();
    const int budget = sched::thread_budget();
    pool.parallel_for(n, grain, sched::budget_threads(pool), [&](dim_t begin, dim_t end) {
        mxcsr_scope fp(control);
        const sched::budget_scope_t share(budget);
        body(begin, end);
    });
}

void parallel_for_2d(dim_t d0, dim_t d1, const std::function<void(dim_t, dim_t)> &body) {
    if (d0 <= 0 || d1 <= 0) return;
    dim_t n;
    if (!mul_no_overflow(d0, d1, n)) fail(status::invalid_arguments, "parallel_for_2d: ", d0, " x ", d1, " overflows");
    parallel_for(n, 1, [&](dim_t begin, dim_t end) {
        dim_t i0 = begin / d1, i1 = begin % d1;
        for (dim_t k = begin; k < end; ++k) {
            body(i0, i1);
            if (++i1 == d1) i1 = 0, ++i0;
        }
    });
}

void parallel_for_3d(dim_t d0, dim_t d1, dim_t d2, const std::function<void(dim_t, dim_t, dim_t)> &body) {
    if (d0 <= 0 || d1 <= 0 || d2 <= 0) return;
    dim_t n12, n;
    if (!mul_no_overflow(d1, d2, n12) || !mul_no_overflow(d0, n12, n))
        fail(status::invalid_arguments, "parallel_for_3d: ", d0, " x ", d1, " x ", d2, " overflows");
    parallel_for(n, 1, [&](dim_t begin, dim_t end) {
        dim_t i0 = begin / n12, i1 = begin % n12 / d2, i2 = begin % d2;
        for (dim_t k = begin; k < end; ++k) {
            body(i0, i1, i2);
            if (++i2 == d2) {
                i2 = 0;
                if (++i1 == d1) i1 = 0, ++i0;
            }
        }
    });
}

int parallel_max_threads() { return sched::budget_threads(sched::current_pool()); }

} // namespace blockdnn::impl
