// SPDX-License-Identifier: Apache-2.0
// The scalar reference of every element-wise function (see include/blockdnn/eltwise_alg.hpp).
#include <cmath>

#include "blockdnn/eltwise_alg.hpp"
#include "core/eltwise_ref_f64.hpp"
#include "core/utils.hpp"

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

eltwise_alg eltwise_alg_from_string(std::string_view name) {
    std::string_view n = name;
    if (n.substr(0, 8) == "eltwise_") n.remove_prefix(8);
    if (n == "logistic") return eltwise_alg::sigmoid;
    if (n == "gelu") return eltwise_alg::gelu_tanh;
    for (int a = 0; a <= static_cast<int>(eltwise_alg::linear); ++a)
        if (n == to_string(static_cast<eltwise_alg>(a))) return static_cast<eltwise_alg>(a);
    impl::fail(status::invalid_arguments, "eltwise_alg: unknown alg '", name,
            "'; expected relu, tanh, sigmoid (logistic), exp, log, elu, gelu_tanh (gelu), gelu_erf, swish, clip or linear");
}

double impl::eltwise_ref_f64(eltwise_alg alg, double x, double alpha, double beta) {
    if (std::isnan(x)) return x;
    auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
    switch (alg) {
    // alpha = 0 gives 0 for every x <= 0, -inf included (0 * -inf would be NaN).
    case eltwise_alg::relu: return x > 0 ? x : alpha == 0 ? 0.0 : alpha * x;
    case eltwise_alg::tanh: return std::tanh(x);
    case eltwise_alg::sigmoid: return sigmoid(x);
    case eltwise_alg::exp: return std::exp(x);
    case eltwise_alg::log: return std::log(x);
    case eltwise_alg::elu: return x > 0 ? x : alpha * std::expm1(x);
    case eltwise_alg::gelu_tanh: {
        // 0.5 x (1 + tanh(z)) = x sigmoid(2 z): the same function without the cancellation of
        // 1 + tanh(z) for z << 0, so the tail keeps its relative accuracy.
        const double k = std::sqrt(2.0 / M_PI);
        return x * sigmoid(2.0 * k * (x + 0.044715 * x * x * x));
    }
    // 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2), likewise.
    case eltwise_alg::gelu_erf: return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case eltwise_alg::swish: return x * sigmoid(alpha * x);
    case eltwise_alg::clip: return std::fmin(std::fmax(x, alpha), beta);
    case eltwise_alg::linear: return alpha * x + beta;
    }
    return 0;
}

float eltwise_ref(eltwise_alg alg, float x, float alpha, float beta) {
    if (const int a = static_cast<int>(alg);
            a < static_cast<int>(eltwise_alg::relu) || a > static_cast<int>(eltwise_alg::linear))
        impl::fail(status::invalid_arguments, "eltwise_ref: alg = ", a, " is not an eltwise_alg");
    if (std::isnan(x)) return x;
    return static_cast<float>(impl::eltwise_ref_f64(alg, x, alpha, beta));
}

} // namespace blockdnn
