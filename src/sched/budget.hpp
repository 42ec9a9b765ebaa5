// SPDX-License-Identifier: Apache-2.0
// Thread budgets: how many threads a parallel loop splits its work for and runs on at once. A
// stream with a budget sets it while one of its ops runs; a loop's chunks carry the budget of
// the code that started the loop, so nested loops keep it on whichever thread runs them (each
// nested loop splits for the budget again). Which threads join a loop is not fixed: any idle
// thread of the pool may take one of its helper tasks.
#pragma once

#include "sched/thread_pool.hpp"

namespace blockdnn::impl::sched {

namespace detail {
inline thread_local int tls_budget = 0;
} // namespace detail

/// The budget of the work running on this thread; 0: none (the whole pool).
inline int thread_budget() { return detail::tls_budget; }

/// The threads a budget allows in a pool of `threads`: the budget capped at the pool's size,
/// or the pool's size without a budget (0).
inline int capped_budget(int budget, int threads) { return budget > 0 && budget < threads ? budget : threads; }

/// The threads a loop started on this thread splits for in `pool`.
inline int budget_threads(const thread_pool_t &pool) { return capped_budget(detail::tls_budget, pool.num_threads()); }

/// Sets this thread's budget for its lifetime (0: none), then puts the previous one back.
class budget_scope_t {
public:
    explicit budget_scope_t(int budget) : saved_(detail::tls_budget) { detail::tls_budget = budget; }
    ~budget_scope_t() { detail::tls_budget = saved_; }
    budget_scope_t(const budget_scope_t &) = delete;
    budget_scope_t &operator=(const budget_scope_t &) = delete;

private:
    int saved_;
};

} // namespace blockdnn::impl::sched
