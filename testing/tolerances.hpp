// SPDX-License-Identifier: Apache-2.0
// The one place where tests and the blockdnn-bench driver state how close results must be, per
// op. Every bound is on
//   err = max over elements |got - want| / max(1, |want|)
// (absolute near zero, relative for large values), and no test loosens it case by case.
// Plain and blocked layouts of one op must agree bit for bit (the references compute each
// element in one fixed order whatever the layout), so that compare uses no tolerance at all.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace tol {

/// Batch normalization output against another implementation (PyTorch, ONNX data, a test
/// oracle). Each output is (x - mean) * rsqrt(var + eps) * gamma + beta from f32 inputs; a
/// float framework's mean/variance carry a few ulp of summation error over mb * spatial
/// values, and |normalized| reaches ~sqrt(N), hence a few 1e-6.
constexpr double bnorm = 1e-5;
/// Batch mean and variance (training) against an f32 framework, same measure.
constexpr double bnorm_stats = 1e-5;

/// Batch normalization backward's diff_scale and diff_shift from float accumulation (the JIT
/// kernels) against a double one: each is a sum over the N = mb * spatial values of a channel
/// whose terms cancel, so |sum| ~ sqrt(N) while the rounding error grows with N. Bound:
/// |got - want| <= bnorm_sum_per_value * N + bnorm * |want| (test_bnorm_jit's bound; measured
/// up to 1e-4 for N = 1568 in nhwc on avx2, where the bound is 1.6e-3).
constexpr double bnorm_sum_per_value = 1e-6;

/// RNN outputs and final states against another implementation. Each gate sums slc + dhc
/// products in float in the frameworks; states pass through T steps and l layers of
/// tanh / sigmoid, which contract errors, so float rounding stays near 1e-6.
constexpr double rnn = 2e-5;

/// Convolution against another implementation (PyTorch, ONNX data, a test oracle). The
/// reference sums ic/g * kd * kh * kw products in double and rounds once; a float framework
/// carries about sqrt(terms) ulp of summation error on outputs of magnitude ~1, so ~1e-6.
constexpr double conv = 1e-5;
/// Inner product (ONNX Gemm, nn.Linear): sums of ic * spatial products, as conv.
constexpr double inner_product = 1e-5;
/// Pooling: max is a selection (exact); an average divides a double sum once, so the result
/// is within an ulp or two of any float framework's.
constexpr double pool = 1e-6;
/// Softmax: probabilities <= 1 from exp and one division; float frameworks' exp is within a
/// few ulp, so ~1e-7 absolute.
constexpr double softmax = 1e-6;
/// Binary add / mul: one IEEE operation per element is correctly rounded in every
/// implementation, so results must be exact.
constexpr double binary = 0;
/// eltwise_ref (relu, sigmoid, tanh, ...) against float frameworks: double evaluation rounded
/// once versus a float libm within a few ulp.
constexpr double eltwise = 1e-6;
/// The JIT eltwise kernels against eltwise_ref: their polynomial and range-reduction
/// approximations of exp, log, tanh, erf stay within 2e-5 of the exact value relative to
/// |value| over the tested ranges (test_eltwise_op's bound); relu, clip and linear are exact.
constexpr double eltwise_jit = 2e-5;

/// A whole network against PyTorch's float64 run of it (ResNet-18: 20 conv + batch-norm
/// layers, pools, residual adds, fc). Each layer rounds its output to f32 (2^-24 relative) and
/// every later layer carries that error on, scaled by its gain, so errors compound with depth:
/// with the seeded ResNet-18 of tests/torch/gen_resnet18.py they grow from 1e-7 after the stem
/// to 5e-6 after layer4 (activations up to |x| ~ 10). PyTorch's own float32 logits are 2e-6 from
/// its float64 ones. 5e-5 leaves a factor 10 over the worst stage seen.
constexpr double network = 5e-5;
/// The same network when its convolutions accumulate in float (the JIT kernels, as PyTorch's
/// and oneDNN's float32 paths do): summation error of up to 4608 products per output joins the
/// per-layer rounding. Measured on the same ResNet-18: PyTorch float32 2.9e-5 after layer4
/// against its float64 run, blockdnn nChw16c 5.2e-5; 2e-4 leaves a factor 4 over the worst.
constexpr double network_f32 = 2e-4;

/// err as defined above over n elements: NaN if a value is NaN in one array and not the other;
/// an infinity must be matched by the same infinity (+inf otherwise).
inline double rel_err(const float *got, const float *want, std::size_t n) {
    double e = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(got[i]) != std::isnan(want[i])) return std::numeric_limits<double>::quiet_NaN();
        if (std::isnan(got[i])) continue;
        if (std::isinf(got[i]) || std::isinf(want[i])) {
            if (got[i] != want[i]) return std::numeric_limits<double>::infinity();
            continue;
        }
        const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
        e = std::max(e, d / std::max(1.0, std::fabs(static_cast<double>(want[i]))));
    }
    return e;
}

/// rel_err over two vectors; +inf if their sizes differ.
inline double rel_err(const std::vector<float> &got, const std::vector<float> &want) {
    if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
    return rel_err(got.data(), want.data(), got.size());
}

} // namespace tol
