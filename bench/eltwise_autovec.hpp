// SPDX-License-Identifier: Apache-2.0
// The baseline beside the JIT eltwise kernels: a plain loop of std:: functions per alg,
// compiled (bench/meson.build) at -O3 four times: for AVX2 and for AVX-512, each strict
// (libm called per element) and with -ffast-math (GCC vectorizes through glibc's libmvec).
#pragma once

#include "blockdnn/eltwise_alg.hpp"

namespace bench_autovec {

using loop_fn_t = void (*)(blockdnn::eltwise_alg alg, float alpha, float beta, const float *src, float *dst, long n);

void loop_avx2(blockdnn::eltwise_alg, float, float, const float *, float *, long);
void loop_avx512(blockdnn::eltwise_alg, float, float, const float *, float *, long);
void loop_avx2_fastmath(blockdnn::eltwise_alg, float, float, const float *, float *, long);
void loop_avx512_fastmath(blockdnn::eltwise_alg, float, float, const float *, float *, long);

} // namespace bench_autovec
