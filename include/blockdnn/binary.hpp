// SPDX-License-Identifier: Apache-2.0
// Element-wise binary ops (add, mul) with broadcasting of the second source.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "blockdnn/post_ops.hpp"
#include "blockdnn/primitive.hpp"
#include "blockdnn/tensor.hpp"

namespace blockdnn {

enum class binary_alg { add, mul };

/// "add", "mul".
const char *to_string(binary_alg alg);

/// A binary problem, benchdnn's binary descriptor (`2x19x3x5:1x19x1x1`: src0's dims, then
/// src1's). dst has src0's dims. src1 is broadcast: each of its dims equals src0's or is 1, in
/// which case its single value serves every index of that dim (numpy's rule, with equal ranks:
/// a per-channel bias {1, C, 1, 1} against {N, C, H, W}, or full shape). ONNX Add / Mul with
/// ranks that differ: prepend 1s to the shorter shape first.
struct binary_desc {
    binary_alg alg = binary_alg::add;
    dims_t src0_dims; ///< 1 to max_ndims dims, each positive
    dims_t src1_dims; ///< src0's rank; each dim 1 (broadcast) or src0's

    /// Throws `blockdnn::error` (invalid_arguments) naming the field, value and rule: alg not a
    /// binary_alg; src0_dims empty, longer than max_ndims or with a dim not positive or not
    /// below 2^31; src1_dims of another rank than src0_dims (prepend 1s); a src1 dim neither 1
    /// nor src0's.
    void validate() const;
    /// "--alg=add 2x19x3x5:1x19x1x1" (benchdnn's binary driver: its --alg and its descriptor).
    std::string str() const;

    dims_t dst_dims() const { return src0_dims; }
};

/// Parses benchdnn's binary problem: "[--alg=ALG] SRC0DIMS:SRC1DIMS" (e.g. "2x16x7x7:2x16x1x1"),
/// ALG add or mul (else `alg`), with an optional "_nNAME" after SRC1DIMS stored in `name` when
/// given, so parse_binary_desc(d.str()) == d. Throws `blockdnn::error` (invalid_arguments)
/// naming the bad token, or a rule of binary_desc::validate.
binary_desc parse_binary_desc(std::string_view text, binary_alg alg = binary_alg::add, std::string *name = nullptr);

/// Tensors of one binary_fwd execution, all with memory: src0 (src0_desc(): desc.src0_dims),
/// src1 (src1_desc(): desc.src1_dims, broadcast) and dst (dst_desc(): desc.src0_dims), each
/// in the layout given at creation. dst may be src0 itself (in place); otherwise dst must not
/// overlap src0 or src1.
struct binary_fwd_args {
    tensor src0 {};
    tensor src1 {};
    tensor dst {};
};

/// dst = post_ops(src0 (+|*) src1), element by element, in f32 (each result correctly
/// rounded, as IEEE add/mul are), with src1 broadcast as binary_desc says. Any layouts (they
/// may differ between the three tensors).
///
/// Implementations (impl_name()):
/// - "jit:avx512_core", "jit:avx2": dst in a layout of at most one inner block (every
///   activation layout: plain, channels-last, nChw8c, nChw16c). src0 in dst's layout, or in
///   another of its family (activations, weights) reordered into dst first where no sum
///   post-op reads dst. src1 read in place in dst's layout, or in a plain one where dst pads
///   none of the dims src1 does not broadcast; else, of dst's family, reordered into dst's
///   layout on each execute. The add / mul and a sum post-op give the reference's bits;
///   eltwise post-ops run as eltwise_fwd's JIT computes them. impl_info() names the reorders.
/// - "ref": every other problem.
///
/// @code
///   binary_desc d;  d.alg = binary_alg::add;
///   d.src0_dims = {8, 64, 28, 28};  d.src1_dims = {1, 64, 1, 1};
///   binary_fwd add_bias(d, format_tag::nChw16c, format_tag::nchw, format_tag::nChw16c);
///   add_bias.execute(x, bias, x);   // in place
/// @endcode
class binary_fwd : public primitive {
public:
    /// Throws `blockdnn::error` (invalid_arguments) if desc.validate() fails or a tag does not
    /// describe its tensor's number of dims (src0 and dst: src0_dims, src1: src1_dims).
    binary_fwd(const binary_desc &desc, format_tag src0_tag, format_tag src1_tag, format_tag dst_tag,
            const post_ops &po = post_ops());

    /// The same op from the three tensor descriptors: desc {alg, src0.dims(), src1.dims()}
    /// and their tags. Throws `blockdnn::error` (invalid_arguments) as the constructor above,
    /// and if dst's dims differ from src0's.
    binary_fwd(binary_alg alg, const tensor_desc &src0, const tensor_desc &src1, const tensor_desc &dst,
            const post_ops &po = post_ops());

    /// dst may be src0 itself (same memory and descriptor: in place); otherwise dst must not
    /// overlap src0 or src1. Throws `blockdnn::error` (invalid_arguments), before writing
    /// anything, if a tensor differs from the descriptors given at creation or overlaps wrongly.
    void execute(const binary_fwd_args &args) const;
    /// execute({src0, src1, dst}).
    void execute(const tensor &src0, const tensor &src1, const tensor &dst) const {
        execute(binary_fwd_args {src0, src1, dst});
    }

    const binary_desc &desc() const;
    binary_alg alg() const;
    const post_ops &attr_post_ops() const;
    const tensor_desc &src0_desc() const;
    const tensor_desc &src1_desc() const;
    const tensor_desc &dst_desc() const;
};

} // namespace blockdnn
