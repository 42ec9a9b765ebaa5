// SPDX-License-Identifier: Apache-2.0
// The forward element-wise op: dst = f(src) for the functions of eltwise_alg.hpp.
#pragma once

#include <memory>
#include <string>

#include "blockdnn/eltwise_alg.hpp"
#include "blockdnn/tensor.hpp"

namespace blockdnn {

/// Forward element-wise op, y = f(x; alpha, beta) for every element (see eltwise_alg for the
/// functions and the meaning of alpha and beta). Throws `blockdnn::error` (invalid_arguments)
/// at construction if alpha or beta is not finite or, for clip, alpha > beta.
///
/// Works on every layout: src and dst share one descriptor `desc` (any tag, any dims), and
/// the op runs over the whole memory, so blocked layouts cost nothing extra. The padding of
/// blocked layouts (channels past the logical size) is zero in dst afterwards, even for
/// functions with f(0) != 0 (sigmoid, exp, log, linear, clip). In place (src and dst the same
/// memory) is allowed.
///
/// Implementations, best first: "jit:avx512_core", "jit:avx2" (Xbyak kernels, generated once
/// at construction and shared through the kernel cache), "ref" (eltwise_ref per element). The
/// ISA cap (set_max_isa, BLOCKDNN_MAX_ISA) decides which may run.
///
/// Accuracy of the JIT kernels (both ISAs give identical results) against double-precision
/// std:: math, as measured by tests/test_eltwise.cpp on fine sweeps plus random values:
/// maximum relative error where the exact result is at least 2^-120 in magnitude (below, the
/// absolute error is at most 2^-120):
/// | alg | range tested | max rel. error |
/// |---|---|---|
/// | relu, linear, clip | [-1000, 1000] | correctly rounded (<= 2^-24) |
/// | exp | [-87.3, 88.7] | 1.2e-7 (2 ulp) |
/// | sigmoid | [-87, 88] | 2e-7 |
/// | tanh | [-20, 20] and +-[1e-30, 1] | 2.5e-7 |
/// | elu | [-90, 90] | 1.5e-7 |
/// | swish | [-150, 150] | 2.5e-7 |
/// | log | every binade of (0, FLT_MAX], denormals included | 2.5e-7 |
/// | gelu_erf | [-13.5, 13.5] | 6e-7 |
/// | gelu_tanh | [-5, 5] / [-10.5, 10.5] | 2.5e-6 / 1.5e-5 (the exp argument, up to 60 in the tail, carries its own rounding) |
///
/// Results below FLT_MIN (2^-126) may flush to zero (exp(-100) = 0, sigmoid(-100) = 0);
/// overflow gives inf (exp(100) = inf); tanh(+-inf) = +-1, sigmoid(+-inf) = 1 or 0;
/// log(0) = -inf, log(x < 0) = NaN; NaN in gives NaN out.
///
/// @code
///   tensor x(tensor_desc({8, 16, 56, 56}, format_tag::nChw16c));
///   eltwise_fwd gelu(eltwise_alg::gelu_tanh, 0.f, 0.f, x.desc());
///   gelu.execute(x, x);   // in place
/// @endcode
class eltwise_fwd {
public:
    /// Validates the problem, picks the implementation and generates its kernels.
    /// Throws `blockdnn::error` (invalid_arguments) if `desc` is empty, `alg` is not an
    /// eltwise_alg value, or alpha or beta is not finite (each message names the field and its
    /// value); (invalid_arguments) if BLOCKDNN_MAX_ISA or BLOCKDNN_KERNEL_CACHE_CAPACITY holds
    /// a bad value; (runtime_error / out_of_memory) if kernel generation fails.
    eltwise_fwd(eltwise_alg alg, float alpha, float beta, const tensor_desc &desc);

    /// dst = f(src). Both must have the op's descriptor and memory; they may be the same memory
    /// but must not overlap otherwise. Throws `blockdnn::error` (invalid_arguments) naming the
    /// tensor and the mismatch, before writing anything.
    void execute(const tensor &src, const tensor &dst) const;

    /// "jit:avx512_core", "jit:avx2" or "ref".
    const char *impl_name() const;

    const tensor_desc &desc() const;
    eltwise_alg alg() const;
    float alpha() const;
    float beta() const;

    struct state; ///< implementation detail

private:
    std::shared_ptr<const state> s_;
};

} // namespace blockdnn
