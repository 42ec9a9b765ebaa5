// SPDX-License-Identifier: Apache-2.0
// The element-wise functions in double precision, unrounded: eltwise_ref is this rounded once
// to float; accuracy tests measure the JIT kernels against it.
#pragma once

#include "blockdnn/eltwise_alg.hpp"

namespace blockdnn::impl {

/// f(x; alpha, beta) in double precision with std:: math (NaN in gives NaN out).
double eltwise_ref_f64(eltwise_alg alg, double x, double alpha, double beta);

} // namespace blockdnn::impl
