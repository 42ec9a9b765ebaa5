// SPDX-License-Identifier: Apache-2.0
// Forward pooling (max, average with or without the padding in the count, global average).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "blockdnn/primitive.hpp"
#include "blockdnn/tensor.hpp"

namespace blockdnn {

/// Pooling algorithms (oneDNN's pooling_max, pooling_avg_include_padding,
/// pooling_avg_exclude_padding).
enum class pool_alg {
    max,             ///< the largest input element in the window; padding never wins
    avg_include_pad, ///< sum of the window's input elements / (kd * kh * kw): padding counts as 0
    avg_exclude_pad, ///< sum / (number of window taps inside the input)
};

/// "max", "avg_include_pad", "avg_exclude_pad".
const char *to_string(pool_alg alg);

/// A forward pooling problem, benchdnn's pool fields (`mb2ic16ih8kh3sh2ph1`; channels are
/// `ic`). src {mb, ic, [id,] [ih,] iw}, dst {mb, ic, [od,] [oh,] ow}; `ndims` counts src dims:
/// 3 (1-D), 4 (2-D), 5 (3-D).
///
/// Math, per spatial dim: the window of output o covers the taps o*s - p + k*(dl + 1),
/// k < K. Taps outside [0, i) are padding: they never win a max and count as 0 in an average.
/// Padding, dilation (0 = dense, PyTorch/ONNX dilation t is dl = t - 1) and the output size
/// o = (i + p + p_r - ext_k) / s + 1 follow conv_desc. ONNX/PyTorch `ceil_mode` is a larger
/// end pad: p_r = p + s - 1 turns the floor into a ceiling (PyTorch also drops a last window
/// that would start in the end padding; such a window is rejected here, see validate).
/// For avg_include_pad the divisor is always kd*kh*kw (oneDNN's rule).
struct pool_desc {
    pool_alg alg = pool_alg::max;
    int ndims = 4;                      ///< 3 (1-D), 4 (2-D) or 5 (3-D)
    dim_t mb = 1, ic = 0;               ///< minibatch, channels
    dim_t id = 1, ih = 1, iw = 1;       ///< src spatial sizes
    dim_t od = 1, oh = 1, ow = 1;       ///< dst spatial sizes
    dim_t kd = 1, kh = 1, kw = 1;       ///< window sizes
    dim_t sd = 1, sh = 1, sw = 1;       ///< strides (>= 1)
    dim_t pd = 0, ph = 0, pw = 0;       ///< front / top / left padding (>= 0)
    dim_t pd_r = 0, ph_r = 0, pw_r = 0; ///< back / bottom / right padding (any sign)
    dim_t dd = 0, dh = 0, dw = 0;       ///< dilation, 0 = dense

    /// Global pooling over src dims {mb, ic, spatial...}: the window is the whole input,
    /// stride 1, no padding, dst spatial 1. Throws `blockdnn::error` (invalid_arguments) if
    /// src_dims does not have 3 to 5 dims.
    static pool_desc global(pool_alg alg, const dims_t &src_dims);

    /// Sets od, oh, ow by the output-size formula; throws as conv_desc::infer_dst_dims.
    pool_desc &infer_dst_dims();

    /// The rules of conv_desc::validate (without groups), plus: every window covers at
    /// least one input element (otherwise its max or average is undefined). Throws
    /// `blockdnn::error` (invalid_arguments) naming the field, value and rule.
    void validate() const;

    /// The benchdnn descriptor (parse_pool_desc reads it back; alg is not part of it).
    std::string str() const;

    dims_t src_dims() const; ///< {mb, ic, [id,] [ih,] iw}
    dims_t dst_dims() const; ///< {mb, ic, [od,] [oh,] ow}
};

/// Parses a benchdnn pooling descriptor: the keys and rules of parse_conv_desc without g and oc
/// (channels are ic). The algorithm is not part of benchdnn's descriptor, hence the argument.
/// Throws `blockdnn::error` (invalid_arguments) as parse_conv_desc does.
pool_desc parse_pool_desc(std::string_view text, pool_alg alg = pool_alg::max, std::string *name = nullptr);

/// Tensors of one pool_fwd execution, both with memory: src (src_desc(): desc.src_dims() in
/// src_tag) and dst (dst_desc(): desc.dst_dims() in dst_tag). They must not overlap.
struct pool_fwd_args {
    tensor src {};
    tensor dst {};
};

/// Forward pooling. Create once, execute many times (const, thread-safe). src and dst take
/// every activation layout (plain or blocked; they may differ); format_tag::any is refused.
/// Max pooling is exact; averages sum in double and divide once.
///
/// Implementations (impl_name()): "simd:scalar:max_blocked" / "simd:scalar:avg_blocked" when
/// src and dst are the same channel-blocked layout (nCw8c, nChw16c, ...),
/// "simd:scalar:max_nxc" / "simd:scalar:avg_nxc" when they are the same channels-last layout
/// (nwc, nhwc, ndhwc), "simd:scalar:reordered" for other pairs (plain nchw, or src and dst in
/// different layouts): the blocked path between reorders of src and dst, a pass of images at
/// a time, with buffers of a pass's blocked src and dst. "ref" takes what is left: neither side
/// blocked and so few channels that blocks of them would be more than half padding (ic up to
/// 3). All give the reference's result bit for bit, whatever the thread count. The simd paths
/// are plain C++ the compiler vectorizes (hence their ISA level `scalar`), so
/// set_max_isa(isa::scalar) keeps them.
///
/// @code
///   pool_desc d;  d.alg = pool_alg::max;  d.mb = 2; d.ic = 64; d.ih = d.iw = 112;
///   d.kh = d.kw = 3;  d.sh = d.sw = 2;  d.ph = d.pw = d.ph_r = d.pw_r = 1;  d.infer_dst_dims();
///   pool_fwd pool(d, format_tag::nChw16c, format_tag::nChw16c);
///   pool.execute(src, dst);
/// @endcode
class pool_fwd : public primitive {
public:
    /// Throws `blockdnn::error` (invalid_arguments) if desc.validate() fails or a tag is not
    /// an activation layout with desc.ndims dims.
    pool_fwd(const pool_desc &desc, format_tag src_tag, format_tag dst_tag);

    /// Throws `blockdnn::error` (invalid_arguments), before writing anything, if src or dst
    /// differ from src_desc() / dst_desc() or overlap in memory. Blocked dst padding is zeroed.
    void execute(const pool_fwd_args &args) const;
    /// execute({src, dst}).
    void execute(const tensor &src, const tensor &dst) const { execute(pool_fwd_args {src, dst}); }

    const pool_desc &desc() const;
    const tensor_desc &src_desc() const;
    const tensor_desc &dst_desc() const;
};

} // namespace blockdnn
