// SPDX-License-Identifier: Apache-2.0
// The forward element-wise op: dst = f(src) for the functions of eltwise_alg.hpp.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "blockdnn/eltwise_alg.hpp"
#include "blockdnn/primitive.hpp"
#include "blockdnn/tensor.hpp"

namespace blockdnn {

/// A forward element-wise problem, benchdnn's eltwise descriptor (`--alg=gelu_tanh
/// --alpha=0 --beta=0 8x16x56x56`): the function, its parameters and src's (= dst's) dims.
struct eltwise_desc {
    eltwise_alg alg = eltwise_alg::relu;
    float alpha = 0.f; ///< see eltwise_alg; finite
    float beta = 0.f;  ///< see eltwise_alg; finite (for clip, alpha <= beta)
    dims_t dims;       ///< src's and dst's dims: 1 to max_ndims, each positive

    /// Throws `blockdnn::error` (invalid_arguments) naming the field, value and rule: alg not
    /// an eltwise_alg; dims empty ("desc is empty") or longer than max_ndims, a dim not
    /// positive; alpha or beta not finite; clip with alpha > beta.
    void validate() const;
    /// "--alg=clip --alpha=-1.5 --beta=6 2x17x5x5" (benchdnn's eltwise driver: its --alg,
    /// --alpha, --beta and its descriptor; alpha and beta as the shortest text that reads back
    /// to the same float).
    std::string str() const;

    dims_t src_dims() const { return dims; }
    dims_t dst_dims() const { return dims; }
};

/// Parses benchdnn's eltwise problem: "[--alg=ALG] [--alpha=F] [--beta=F] [--tag=TAG] DIMS",
/// e.g. "--alg=gelu_tanh 8x16x56x56" (alg relu, alpha and beta 0, tag abx by default; ALG as
/// eltwise_alg_from_string takes it, DIMS "AxBxC..." with an optional "_nNAME"), so
/// parse_eltwise_desc(d.str()) == d. `tag`, when given, gets --tag's layout for the dims
/// (benchdnn's abx, axb, aBx8b, aBx16b or a format_tag name). Throws `blockdnn::error`
/// (invalid_arguments) naming the bad token, or a rule of eltwise_desc::validate.
eltwise_desc parse_eltwise_desc(std::string_view text, format_tag *tag = nullptr);

/// Tensors of one eltwise_fwd execution: src and dst, both with the op's descriptor
/// (src_desc() = dst_desc(): desc.dims in the layout given at creation) and memory. dst may be
/// src itself (in place); otherwise they must not overlap. Neither may be empty.
struct eltwise_fwd_args {
    tensor src {};
    tensor dst {};
};

/// Forward element-wise op, y = f(x; alpha, beta) for every element (see eltwise_alg for the
/// functions and the meaning of alpha and beta). Throws `blockdnn::error` (invalid_arguments)
/// at construction if alpha or beta is not finite or, for clip, alpha > beta.
///
/// Works on every layout: src and dst share one descriptor `desc` of any layout (not
/// format_tag::any), any dims, and the op runs over the whole memory, padding included. The
/// padding of blocked layouts (channels past the logical size) is zero in dst afterwards, even
/// for functions with f(0) != 0 (sigmoid, exp, log, linear, clip): a layout with padding costs
/// one more pass, writing those lanes. In place (src and dst the same memory) is allowed.
///
/// Implementations, best first: "jit:avx512_core", "jit:avx2" (Xbyak kernels, generated once
/// at construction and shared through the kernel cache), "ref" (eltwise_ref per element). The
/// ISA cap (set_max_isa, BLOCKDNN_MAX_ISA) decides which may run.
///
/// Accuracy of the JIT kernels (both ISAs give identical results) against double-precision
/// std:: math, as measured by tests/ops/eltwise/test_eltwise.cpp on fine sweeps plus random values:
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
///   eltwise_desc d;  d.alg = eltwise_alg::gelu_tanh;  d.dims = {8, 16, 56, 56};
///   eltwise_fwd gelu(d, format_tag::nChw16c, format_tag::nChw16c);
///   tensor x(gelu.src_desc());
///   gelu.execute(x, x);   // in place
/// @endcode
class eltwise_fwd : public primitive {
public:
    /// Validates the problem, picks the implementation and generates its kernels. src and dst
    /// share one layout: dst_tag must equal src_tag. Throws `blockdnn::error`
    /// (invalid_arguments) if desc.validate() fails, src_tag does not describe desc.dims.size()
    /// dims or dst_tag differs from src_tag; (invalid_arguments) if BLOCKDNN_MAX_ISA or
    /// BLOCKDNN_KERNEL_CACHE_CAPACITY holds a bad value; (runtime_error / out_of_memory) if
    /// kernel generation fails.
    eltwise_fwd(const eltwise_desc &desc, format_tag src_tag, format_tag dst_tag);

    /// The same op from the tensor descriptor src and dst share: desc {alg, alpha, beta,
    /// desc.dims()} and desc's layout (and data type). Throws as the constructor above.
    eltwise_fwd(eltwise_alg alg, float alpha, float beta, const tensor_desc &desc);

    /// dst = f(src). Both must have the op's descriptor and memory; they may be the same memory
    /// but must not overlap otherwise. Throws `blockdnn::error` (invalid_arguments) naming the
    /// tensor and the mismatch, before writing anything.
    void execute(const eltwise_fwd_args &args) const;
    /// execute({src, dst}).
    void execute(const tensor &src, const tensor &dst) const { execute(eltwise_fwd_args {src, dst}); }

    /// The problem it was created for ({alg, alpha, beta, dims}).
    const eltwise_desc &desc() const;
    /// The tensor descriptor of src and dst: desc().dims in the layout given at creation.
    const tensor_desc &src_desc() const;
    const tensor_desc &dst_desc() const;
    eltwise_alg alg() const;
    float alpha() const;
    float beta() const;
};

} // namespace blockdnn
