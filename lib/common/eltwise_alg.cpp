// SPDX-License-Identifier: Apache-2.0
// The scalar reference of every element-wise function (see include/blockdnn/eltwise_alg.hpp).
#include <cmath>

#include "blockdnn/eltwise_alg.hpp"

namespace blockdnn {

const char *to_string(eltwise_alg alg) {
    switch (alg) {
    case eltwise_alg::relu: return "relu";
    case eltwise_alg::tanh: return "tanh";
    case eltwise_alg::sigmoid: return "sigmoid";
    case eltwise_alg::exp: return "exp";
    case eltwise_alg::log: return "log";
    case eltwise_alg::elu: return "elu";
    case eltwise_alg::gelu_tanh: return "gelu_tanh";
    case eltwise_alg::gelu_erf: return "gelu_erf";
    case eltwise_alg::swish: return "swish";
    case eltwise_alg::clip: return "clip";
    case eltwise_alg::linear: return "linear";
    }
    return "unknown";
}

float eltwise_ref(eltwise_alg alg, float xf, float alpha_f, float beta_f) {
    const double x = xf, alpha = alpha_f, beta = beta_f;
    if (std::isnan(x)) return xf;
    auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
    double y = 0;
    switch (alg) {
    case eltwise_alg::relu: y = x > 0 ? x : alpha * x; break;
    case eltwise_alg::tanh: y = std::tanh(x); break;
    case eltwise_alg::sigmoid: y = sigmoid(x); break;
    case eltwise_alg::exp: y = std::exp(x); break;
    case eltwise_alg::log: y = std::log(x); break;
    case eltwise_alg::elu: y = x > 0 ? x : alpha * std::expm1(x); break;
    case eltwise_alg::gelu_tanh: {
        const double k = std::sqrt(2.0 / M_PI);
        y = 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
        break;
    }
    case eltwise_alg::gelu_erf: y = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); break;
    case eltwise_alg::swish: y = x * sigmoid(alpha * x); break;
    case eltwise_alg::clip: y = std::fmin(std::fmax(x, alpha), beta); break;
    case eltwise_alg::linear: y = alpha * x + beta; break;
    }
    return static_cast<float>(y);
}

} // namespace blockdnn
