// SPDX-License-Identifier: Apache-2.0
// Forward inner product (fully connected layer, PyTorch nn.Linear, ONNX Gemm with transB = 1).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "blockdnn/post_ops.hpp"
#include "blockdnn/primitive.hpp"
#include "blockdnn/tensor.hpp"

namespace blockdnn {

/// A forward inner-product problem, benchdnn's ip fields (`mb2ic64ih7oc1000`).
/// src {mb, ic, [id,] [ih,] [iw]} (`ndims` = 2 for nc, 3, 4 or 5 with spatial dims);
/// weights {oc, ic, [kd = id,] [kh = ih,] [kw = iw]} (oi / oihw family, same spatial dims as src);
/// bias {oc} (layout x); dst {mb, oc} (layout nc).
///
/// Math: dst[n, o] = post_ops(bias[o] + sum over c, spatial s of src[n, c, s] * wei[o, c, s]),
/// i.e. src flattened to (mb, ic * spatial) times the flattened weights transposed.
struct inner_product_desc {
    int ndims = 2; ///< src dims: 2 (nc), 3, 4 or 5
    dim_t mb = 1, ic = 0, oc = 0;
    dim_t id = 1, ih = 1, iw = 1; ///< src spatial sizes (unused ones stay 1)
    bool with_bias = false;

    /// Throws `blockdnn::error` (invalid_arguments) naming the field: ndims in 2..5; mb, ic,
    /// oc and used spatial sizes > 0 and below 2^31; unused spatial sizes 1.
    void validate() const;
    /// "mb2ic64ih7oc1000" (parse_ip_desc reads it back).
    std::string str() const;

    dims_t src_dims() const; ///< {mb, ic, [id,] [ih,] [iw]}
    dims_t wei_dims() const; ///< {oc, ic, [id,] [ih,] [iw]}
    dims_t bia_dims() const { return {oc}; }
    dims_t dst_dims() const { return {mb, oc}; }
};

/// Parses a benchdnn inner-product descriptor: keys mb ic oc id ih iw (and a name, as
/// parse_conv_desc); mb = 2 unless given; spatial sizes are copied like conv's; no spatial key
/// gives a 2-D (nc) problem. Throws `blockdnn::error` (invalid_arguments) quoting the
/// descriptor and what is wrong.
inner_product_desc parse_ip_desc(std::string_view text, std::string *name = nullptr);

/// Tensors of one inner_product_fwd execution. src (src_desc(): desc.src_dims() in src_tag)
/// and dst (dst_desc(): {mb, oc} in dst_tag) always have memory; dst must not overlap an input
/// and is read first when the post-ops hold a sum. For an op created without weights, wei
/// (wei_desc(): desc.wei_dims() in wei_tag) is required and bia (bia_desc(): {oc}, layout x)
/// is required with desc.with_bias and empty otherwise. For an op holding weights given at
/// creation, wei and bia stay empty.
struct inner_product_fwd_args {
    tensor src {};
    tensor wei {};
    tensor bia {};
    tensor dst {};
};

/// Forward inner product with optional bias and post-ops (post_ops.hpp). Create once, execute
/// many times (const, thread-safe). src: every activation layout with desc.ndims dims (nc for
/// 2); wei: every weights layout with desc.ndims dims (oi, io, oihw, hwio, OIhw16i16o, ...);
/// dst: nc; format_tag::any is refused. The reference sums in double in the order (c, d, h, w)
/// and rounds once. Implementations (impl_name()): "gemm:avx512_core", "gemm:avx2", "ref"
/// (under a scalar ISA cap, or where the GEMM's byte offsets pass int32: a row of ic x spatial
/// floats, or a blocked src's padded row, of 2^31 bytes or more). The GEMM takes every layout:
/// src in a plain layout (or one with the same memory, as nhwc of 1x1 spatial size) or in a
/// channel-blocked one of 1x1 spatial size is read in place, any other src is reordered into
/// the plain layout on each execute, as are weights given per call in a layout other than the
/// plain one (oi, oihw...). impl_info() names those reorders and adds the GEMM's plan (M = mb,
/// N = oc, K = ic x spatial; its cache blocking, and stream_c where dst, larger than the
/// last-level cache, may be stored past the cache).
class inner_product_fwd : public primitive {
public:
    /// Throws `blockdnn::error` (invalid_arguments) if desc.validate() fails or a tag has the
    /// wrong family or number of dims.
    inner_product_fwd(const inner_product_desc &desc, format_tag src_tag, format_tag wei_tag,
            format_tag dst_tag = format_tag::nc, const post_ops &po = post_ops());

    /// As the constructor above, and takes the weights (in any weights layout) and the bias (an
    /// empty tensor without one) now, as oneDNN users do: the op keeps its own copy, in the
    /// layout its implementation reads (the GEMM's: oi / oiw / oihw / oidhw; the reference's:
    /// wei.desc()'s), which wei_desc() then gives, prepared once for its kernel (the GEMM's
    /// packed B panels), so execute(src, dst) does no weight work. Later changes to `wei` and
    /// `bia` are not seen.
    /// Throws `blockdnn::error` (invalid_arguments) as the constructor above, if wei has no
    /// memory or its dims differ from desc.wei_dims() (naming the dim and field), and if a
    /// bias is missing or unexpected. Inside a stream_scope it first waits for the work queued
    /// on the current stream (blockdnn/stream.hpp).
    inner_product_fwd(const inner_product_desc &desc, format_tag src_tag, const tensor &wei, const tensor &bia,
            format_tag dst_tag = format_tag::nc, const post_ops &po = post_ops());
    /// True if the op holds weights given at creation.
    bool holds_weights() const;

    /// Runs the op (see inner_product_fwd_args). Throws `blockdnn::error` (invalid_arguments),
    /// before writing anything: for an op holding weights, if args.wei or args.bia is not
    /// empty; for an op without, if args.wei is empty ("execute(src, dst) needs weights given at
    /// creation" when bia is empty too);
    /// if a tensor differs from its *_desc(), a bias is missing or unexpected, or dst overlaps
    /// an input.
    void execute(const inner_product_fwd_args &args) const;
    /// Runs with the weights and bias taken at creation: execute({src, {}, {}, dst}).
    void execute(const tensor &src, const tensor &dst) const { execute(inner_product_fwd_args {src, {}, {}, dst}); }
    /// execute({src, wei, bia, dst}); `bia` empty (`tensor()`) without bias.
    void execute(const tensor &src, const tensor &wei, const tensor &bia, const tensor &dst) const {
        execute(inner_product_fwd_args {src, wei, bia, dst});
    }
    void execute(const tensor &src, const tensor &wei, const tensor &dst) const { execute(src, wei, tensor(), dst); }

    const inner_product_desc &desc() const;
    const post_ops &attr_post_ops() const;
    const tensor_desc &src_desc() const;
    const tensor_desc &wei_desc() const;
    const tensor_desc &bia_desc() const; ///< empty without bias
    const tensor_desc &dst_desc() const;
};

} // namespace blockdnn
