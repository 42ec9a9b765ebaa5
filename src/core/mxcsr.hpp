// SPDX-License-Identifier: Apache-2.0
// MXCSR, the SSE/AVX floating-point control and status register, as the scheduler's threads
// treat it: a worker starts from the reset value, and a stream op runs under the control bits
// its submitter had. src/core/fp_env.hpp builds the denormals mode on the same names.
#pragma once

#include <xmmintrin.h>

namespace blockdnn::impl::sched {

/// Intel SDM vol. 1, 10.2.3: bits 0-5 are the sticky exception flags (status), the rest
/// control. The reset value rounds to nearest with every exception masked.
constexpr unsigned mxcsr_flags = 0x3f;
constexpr unsigned mxcsr_reset = 0x1f80;

/// Sets MXCSR to `value` for its lifetime, then restores the whole register as it found it,
/// also when an exception leaves the scope.
class mxcsr_guard {
public:
    explicit mxcsr_guard(unsigned value) : saved_(_mm_getcsr()) { _mm_setcsr(value); }
    ~mxcsr_guard() { _mm_setcsr(saved_); }
    mxcsr_guard(const mxcsr_guard &) = delete;
    mxcsr_guard &operator=(const mxcsr_guard &) = delete;

private:
    unsigned saved_;
};

} // namespace blockdnn::impl::sched
