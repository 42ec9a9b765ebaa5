// SPDX-License-Identifier: Apache-2.0
// One source, compiled four times with different flags; AUTOVEC_FN names each copy.
#include <algorithm>
#include <cmath>

#include "eltwise_autovec.hpp"

namespace bench_autovec {

void AUTOVEC_FN(blockdnn::eltwise_alg alg, float alpha, float beta, const float *__restrict src, float *__restrict dst,
        long n) {
    using blockdnn::eltwise_alg;
    const float k = 0.7978845608f; // sqrt(2 / pi)
    switch (alg) {
    case eltwise_alg::relu:
        for (long i = 0; i < n; ++i) dst[i] = src[i] > 0 ? src[i] : alpha * src[i];
        break;
    case eltwise_alg::tanh:
        for (long i = 0; i < n; ++i) dst[i] = std::tanh(src[i]);
        break;
    case eltwise_alg::sigmoid:
        for (long i = 0; i < n; ++i) dst[i] = 1.f / (1.f + std::exp(-src[i]));
        break;
    case eltwise_alg::exp:
        for (long i = 0; i < n; ++i) dst[i] = std::exp(src[i]);
        break;
    case eltwise_alg::log:
        for (long i = 0; i < n; ++i) dst[i] = std::log(src[i]);
        break;
    case eltwise_alg::elu:
        for (long i = 0; i < n; ++i) dst[i] = src[i] > 0 ? src[i] : alpha * std::expm1(src[i]);
        break;
    case eltwise_alg::gelu_tanh:
        for (long i = 0; i < n; ++i) {
            const float x = src[i];
            dst[i] = 0.5f * x * (1.f + std::tanh(k * (x + 0.044715f * x * x * x)));
        }
        break;
    case eltwise_alg::gelu_erf:
        for (long i = 0; i < n; ++i) dst[i] = 0.5f * src[i] * (1.f + std::erf(src[i] * 0.70710678f));
        break;
    case eltwise_alg::swish:
        for (long i = 0; i < n; ++i) dst[i] = src[i] / (1.f + std::exp(-alpha * src[i]));
        break;
    case eltwise_alg::clip:
        for (long i = 0; i < n; ++i) dst[i] = std::min(std::max(src[i], alpha), beta);
        break;
    case eltwise_alg::linear:
        for (long i = 0; i < n; ++i) dst[i] = alpha * src[i] + beta;
        break;
    }
}

} // namespace bench_autovec
