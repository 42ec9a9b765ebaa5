// SPDX-License-Identifier: Apache-2.0
// Forward softmax over one axis.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "blockdnn/primitive.hpp"
#include "blockdnn/tensor.hpp"

namespace blockdnn {

/// A forward softmax problem, benchdnn's softmax descriptor (`2x1000` with `--axis=1`): the
/// dims of src and dst, and the dim the softmax runs along.
struct softmax_desc {
    dims_t dims;  ///< src's and dst's dims: 1 to max_ndims, each positive
    int axis = 0; ///< the logical dim of the lines, in [0, dims.size())

    /// Throws `blockdnn::error` (invalid_arguments) naming the field, value and rule: dims
    /// empty or longer than max_ndims, a dim not positive, axis outside [0, dims.size()).
    void validate() const;
    /// "--axis=1 2x1000" (benchdnn's softmax driver: its --axis and its descriptor).
    std::string str() const;

    dims_t src_dims() const { return dims; }
    dims_t dst_dims() const { return dims; }
};

/// Parses benchdnn's softmax problem: "[--axis=N] DIMS", DIMS as "AxBxC..." with an optional
/// "_nNAME" (quotes optional) stored in `name` when given. The axis is --axis when given, else
/// `axis` (benchdnn's default is 1), so parse_softmax_desc(d.str()) == d. Throws
/// `blockdnn::error` (invalid_arguments) naming the bad token, or a rule of
/// softmax_desc::validate.
softmax_desc parse_softmax_desc(std::string_view text, int axis = 1, std::string *name = nullptr);

/// Tensors of one softmax_fwd execution: src (src_desc(): desc.dims in src_tag) and dst
/// (dst_desc(): desc.dims in dst_tag), both with memory. dst may be src itself (same memory
/// and descriptor: in place); otherwise they must not overlap.
struct softmax_fwd_args {
    tensor src {};
    tensor dst {};
};

/// dst = exp(src - max) / sum(exp(src - max)) along logical dim `axis`, for every index of
/// the other dims (ONNX Softmax opset 13, PyTorch softmax(dim=axis)). Subtracting the
/// line's max first keeps exp from overflowing (the stable form). A line holding NaN or +inf,
/// or only -inf, comes out NaN throughout. Any layout; src and dst have the same dims.
///
/// Implementations (impl_name()):
/// - "jit:avx512_core", "jit:avx2": the kernel runs in a layout whose `axis` is not a blocked
///   dim: dst's or src's, else the plain activation layout of their rank (softmax over the
///   channels of nChw16c); src and dst not in it are reordered into it and out of it on each
///   execute, as impl_info() says. exp in float as eltwise_fwd's exp, max in float, the sum in
///   float compensated (Kahan), so its error stays near one rounding whatever the line's
///   length; dst = exp * (1 / sum). The tests hold every result within 1e-6 of the exact value,
///   on lines of up to 100000 elements. Results below FLT_MIN are 0. The same bits on any
///   thread count.
/// - "ref": the others (a blocked axis in other layouts than activations). exp and the sum in
///   double, each result rounded once.
///
/// @code
///   softmax_desc d;  d.dims = {64, 1000};  d.axis = 1;
///   softmax_fwd softmax(d, format_tag::nc, format_tag::nc);
///   softmax.execute(logits, logits);   // in place
/// @endcode
class softmax_fwd : public primitive {
public:
    /// Throws `blockdnn::error` (invalid_arguments) if desc.validate() fails or a tag does not
    /// describe desc.dims.size() dims.
    softmax_fwd(const softmax_desc &desc, format_tag src_tag, format_tag dst_tag);

    /// The same op from the two tensor descriptors: desc {src.dims(), axis} and their tags.
    /// Throws `blockdnn::error` (invalid_arguments) as the constructor above, and if dst's dims
    /// differ from src's.
    softmax_fwd(const tensor_desc &src, const tensor_desc &dst, int axis);

    /// dst may be src itself (same memory and descriptor); otherwise they must not overlap.
    /// Throws `blockdnn::error` (invalid_arguments), before writing anything, on a tensor
    /// that differs from the descriptors given at creation.
    void execute(const softmax_fwd_args &args) const;
    /// execute({src, dst}).
    void execute(const tensor &src, const tensor &dst) const { execute(softmax_fwd_args {src, dst}); }

    const softmax_desc &desc() const;
    int axis() const;
    const tensor_desc &src_desc() const;
    const tensor_desc &dst_desc() const;
};

} // namespace blockdnn
