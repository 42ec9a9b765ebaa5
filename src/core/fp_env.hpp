// SPDX-License-Identifier: Apache-2.0
// The floating-point environment kernels run in: MXCSR's control bits under the denormals mode
// (blockdnn/denormals.hpp). An op's execution enters it through run_impl on the thread that runs
// the op, and parallel_for hands the same control bits to every chunk, so kernels on the pool's
// threads see what the op's thread sees. Each scope puts the whole register back as it found it.
#pragma once

#include <xmmintrin.h>

#include <utility>

#include "blockdnn/denormals.hpp"
#include "core/utils.hpp"
#include "core/mxcsr.hpp"

namespace blockdnn::impl {

using sched::mxcsr_flags;
using sched::mxcsr_reset;
constexpr unsigned mxcsr_daz = 1u << 6;
constexpr unsigned mxcsr_ftz = 1u << 15;

/// The calling thread's MXCSR control bits.
inline unsigned mxcsr_control() { return _mm_getcsr() & ~mxcsr_flags; }

/// Sets MXCSR's control bits for its lifetime and then restores the whole register, flags
/// included, also when an exception leaves the scope.
class mxcsr_scope : sched::mxcsr_guard {
public:
    /// The reset value's control bits with FTZ and DAZ both set (flush) or both clear (keep):
    /// kernels round to nearest with every exception masked whatever the caller's MXCSR
    /// holds, so their results and speed never depend on it.
    explicit mxcsr_scope(denormals_mode m)
        : mxcsr_guard(mxcsr_reset | (m == denormals_mode::flush ? mxcsr_ftz | mxcsr_daz : 0u)) {}
    /// Exactly `control` (read with mxcsr_control() on another thread).
    explicit mxcsr_scope(unsigned control) : mxcsr_guard(control) {}
};

/// Runs an op's implementation f() in denormals mode m, on whichever thread runs the op (the
/// caller's, or a stream's for a queued op); a std::bad_alloc out of it becomes
/// blockdnn::error(out_of_memory) naming op.
template <typename F>
decltype(auto) run_impl(const char *op, denormals_mode m, F &&f) {
    mxcsr_scope fp(m);
    return oom_as_error(op, "running", std::forward<F>(f));
}

/// As above, in the mode in force now (get_denormals_mode(): may throw for a bad BLOCKDNN_DENORMALS).
template <typename F>
decltype(auto) run_impl(const char *op, F &&f) {
    return run_impl(op, get_denormals_mode(), std::forward<F>(f));
}

} // namespace blockdnn::impl
