// SPDX-License-Identifier: Apache-2.0
// Element-wise algorithms, shared by the eltwise op and by the post-ops of conv, bnorm and RNN.
#pragma once

#include <string_view>

namespace blockdnn {

/// Element-wise functions y = f(x; alpha, beta), with oneDNN's meaning of alpha and beta:
/// - relu:      x > 0 ? x : alpha * x            (alpha = negative slope, 0 for plain relu)
/// - tanh:      tanh(x)
/// - sigmoid:   1 / (1 + exp(-x))
/// - exp:       exp(x)
/// - log:       log(x)                           (NaN for x < 0, -inf at 0)
/// - elu:       x > 0 ? x : alpha * (exp(x) - 1)
/// - gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))   (Hendrycks & Gimpel 2016)
/// - gelu_erf:  0.5 x (1 + erf(x / sqrt(2)))
/// - swish:     x * sigmoid(alpha * x)          (alpha = 1 gives SiLU)
/// - clip:      min(max(x, alpha), beta)
/// - linear:    alpha * x + beta
enum class eltwise_alg { relu, tanh, sigmoid, exp, log, elu, gelu_tanh, gelu_erf, swish, clip, linear };

/// "relu", "tanh", ... as above.
const char *to_string(eltwise_alg alg);

/// Parses an alg name as to_string spells it, or one of oneDNN's aliases: "logistic"
/// (sigmoid), "gelu" (gelu_tanh), optionally prefixed "eltwise_". Throws `blockdnn::error`
/// (invalid_arguments) naming the string and the accepted names.
eltwise_alg eltwise_alg_from_string(std::string_view name);

/// The reference value of f(x), computed in double precision and rounded once to float.
/// NaN in gives NaN out (clip and relu included). Throws `blockdnn::error`
/// (invalid_arguments) if alg is not an eltwise_alg value.
float eltwise_ref(eltwise_alg alg, float x, float alpha = 0.f, float beta = 0.f);

} // namespace blockdnn
