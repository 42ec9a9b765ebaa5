// SPDX-License-Identifier: Apache-2.0
// Forward convolution: the problem descriptor (benchdnn's field names) and the op object.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "blockdnn/post_ops.hpp"
#include "blockdnn/primitive.hpp"
#include "blockdnn/tensor.hpp"

namespace blockdnn {

/// A forward convolution problem, with the field names of oneDNN's benchdnn
/// (`mb2ic13ih7oc29oh7kh3ph1` sets mb, ic, ih, oc, oh, kh, ph).
///
/// Shapes (logical dims, canonical order; see format_tag):
/// - src {mb, ic, [id,] [ih,] iw};   dst {mb, oc, [od,] [oh,] ow};   bias {oc} (layout x);
/// - weights {oc, ic, [kd,] [kh,] kw} (oihw family) or, grouped, {g, oc/g, ic/g, [kd,] [kh,] kw}
///   (goihw family). Groups need a grouped weights layout; g = 1 may use either.
/// `ndims` counts dims of src: 3 for 1-D (ncw), 4 for 2-D (nchw), 5 for 3-D (ncdhw). Fields of
/// spatial dims the problem does not have (d for 1-D and 2-D, h for 1-D) keep their defaults.
///
/// Math (PyTorch's Conv{1,2,3}d / ONNX Conv, with separate begin and end pads), per spatial dim:
///   dst[n, g*OCG + oc, o] = bias[g*OCG + oc]
///       + sum_{ic < ICG, k < K} src[n, g*ICG + ic, o*s - p + k*(dl + 1)] * wei[g, oc, ic, k]
/// where OCG = oc/g, ICG = ic/g, and src outside [0, i) reads as zero (padding).
///
/// Padding: `pd ph pw` are the front/top/left pads; `pd_r ph_r pw_r` the back/bottom/right
/// pads (oneDNN's padding_r). End pads may differ from begin pads, be negative (the last input
/// rows are unused) or exceed the kernel (windows wholly in padding give the bias).
///
/// **Dilation follows oneDNN: 0 means dense.** Each tap is dl + 1 elements from the previous
/// one, so the kernel's extent is ext_k = (k - 1) * (dl + 1) + 1. PyTorch and ONNX count dense
/// as 1: their `dilation = t` is `dh = t - 1` here (see dilation_from_torch). A negative
/// dilation is rejected.
///
/// Output size, per spatial dim: o = (i + p + p_r - ext_k) / s + 1 (integer division, as
/// PyTorch's floor). With the end pad PyTorch/ONNX would use (p_r = p), this is their size.
struct conv_desc {
    int ndims = 4;                      ///< 3 (1-D), 4 (2-D) or 5 (3-D)
    dim_t mb = 1;                       ///< minibatch
    dim_t g = 1;                        ///< groups; g = ic = oc is depthwise, oc = m*ic a channel multiplier
    dim_t ic = 0, oc = 0;               ///< total input / output channels (not per group)
    dim_t id = 1, ih = 1, iw = 1;       ///< src spatial sizes
    dim_t od = 1, oh = 1, ow = 1;       ///< dst spatial sizes
    dim_t kd = 1, kh = 1, kw = 1;       ///< kernel sizes
    dim_t sd = 1, sh = 1, sw = 1;       ///< strides (>= 1)
    dim_t pd = 0, ph = 0, pw = 0;       ///< front / top / left padding (>= 0)
    dim_t pd_r = 0, ph_r = 0, pw_r = 0; ///< back / bottom / right padding (any sign)
    dim_t dd = 0, dh = 0, dw = 0;       ///< dilation, oneDNN convention: 0 = dense (>= 0)
    /// benchdnn's --dir=FWD_B (true) or FWD_D (false). The one place bias is set: the op then
    /// takes a bias tensor ({oc}, layout x) in execute() or at creation, and refuses one
    /// without, naming the tensor and with_bias.
    bool with_bias = false;

    /// Sets od, oh, ow from the other fields by the output-size formula. Throws
    /// `blockdnn::error` (invalid_arguments) if a kernel extent exceeds the padded input
    /// (i + p + p_r < ext_k), naming the dim.
    conv_desc &infer_dst_dims();

    /// Checks every rule below and throws `blockdnn::error` (invalid_arguments) at the first
    /// one broken, naming the field, its value and the rule, e.g.
    /// "conv_fwd: oh = 55 does not match (ih + ph + ph_r - ext_kh) / sh + 1 = 56 (...)".
    /// Rules: ndims is 3, 4 or 5; mb, g, ic, oc > 0; g divides ic and oc; each used spatial
    /// dim has i, o, k > 0, s >= 1, p >= 0, dilation >= 0, i + p + p_r >= ext_k (the kernel fits
    /// the padded input) and o equal to the formula; unused spatial fields keep their defaults;
    /// every field below 2^31.
    void validate() const;

    /// The benchdnn descriptor ("mb2ic13ih7oc29oh7kh3ph1"): parse_conv_desc (below) reads it
    /// back. End pads are implied by o (benchdnn has no key for them):
    /// a desc whose end pad exceeds the smallest one giving the same o (possible with strides)
    /// prints as that smallest pad, which reads the same input and computes the same dst.
    std::string str() const;

    /// The number of floating-point operations (not GFLOP) of one forward pass, counted as
    /// oneDNN's benchdnn counts them (conv's prb_t::count_ops): 2 * mb * oc * ic/g for every
    /// pair of an output position and a kernel tap that reads inside the input. Taps on padding
    /// are not counted, so the result is 0 when every tap falls on padding; without padding it
    /// is 2 * mb * oc * od * oh * ow * ic/g * kd * kh * kw. Bias and post-ops are not counted.
    /// Throws `blockdnn::error` (invalid_arguments) as validate() does.
    double flops() const;

    dims_t src_dims() const;                 ///< {mb, ic, [id,] [ih,] iw}
    dims_t wei_dims(bool grouped) const;     ///< {[g,] oc/g or oc, ic/g or ic, [kd,] [kh,] kw}
    dims_t bia_dims() const { return {oc}; } ///< {oc}
    dims_t dst_dims() const;                 ///< {mb, oc, [od,] [oh,] ow}
};

/// Parses a benchdnn convolution descriptor: keys g mb ic id ih iw oc od oh ow kd kh kw sd sh
/// sw pd ph pw dd dh dw, each followed by an integer, in any order, with optional '_'
/// separators, and an optional name after 'n' (to the end; quotes are dropped), stored in
/// `name` when given. Benchdnn's rules fill the rest: mb = 2, g = 1, s = 1, dilation 0 (dense)
/// unless given; a dim group (d, h or w) with any key needs its i and k; without o, p defaults
/// to 0 and o = (i + 2p - ext_k) / s + 1; with o but no p, p = ((o - 1) s - i + ext_k) / 2;
/// the end pad is p_r = (o - 1) s - i + ext_k - p. Any d key makes the problem 3-D (h and w
/// copied from d when neither is given), else any h key 2-D (w copied from h when not given),
/// else 1-D. with_bias is left false (benchdnn's --dir, not the descriptor, decides it). The
/// result is validated; parse_conv_desc(d.str()) == d for a valid d without bias.
/// Throws `blockdnn::error` (invalid_arguments) quoting the descriptor and what is wrong: an
/// unknown or repeated key, a key without a number, a missing required key, a 3-D descriptor
/// with h keys but no w keys, or a rule of conv_desc::validate.
conv_desc parse_conv_desc(std::string_view text, std::string *name = nullptr);

/// PyTorch / ONNX dilation (1 = dense) to this library's (0 = dense).
constexpr dim_t dilation_from_torch(dim_t torch_dilation) { return torch_dilation - 1; }

/// Tensors of one conv_fwd execution, in the layouts the op answers: src (src_desc(),
/// desc.src_dims()) and dst (dst_desc(), desc.dst_dims()) always have memory; dst must not
/// overlap an input, is read first when the post-ops hold a sum, and has the padding of a
/// blocked layout written with zeros. For an op created without weights, wei (wei_desc(),
/// desc.wei_dims()) is required, and bia (bia_desc(): {oc}, layout x) is required when
/// desc.with_bias is true and empty (`tensor()`) when it is false. For an op holding weights
/// given at creation, wei and bia stay empty.
struct conv_fwd_args {
    tensor src {};
    tensor wei {};
    tensor bia {};
    tensor dst {};
};

/// Forward convolution with optional bias and a post-op chain:
///   dst = post_ops(conv(src, wei) + bias)
/// (see conv_desc for the math, post_ops for the chain).
///
/// Create once (validates, picks an implementation, and does any one-time work such as JIT
/// code generation or weight packing), then execute as often as needed; execute() is const
/// and may run concurrently on different tensors. Any layout of the right family works:
/// src/dst ncw/nwc/nchw/nhwc/ncdhw/ndhwc or blocked nC*8c/nC*16c; weights oihw family
/// (oihw, hwio, OIhw16i16o, ...) or, grouped, goihw family (goihw, gOIhw16i16o, Goihw16g, ...).
/// The reference accumulates in double and rounds once to f32 before the post-ops.
///
/// The JIT kernels take src and dst both blocked (nC*16c; nC*8c runs the AVX2 kernels), both
/// channels-last (nwc/nhwc/ndhwc, any ic and oc), or a plain src with at most one block of
/// channels (ic <= 16 with an nC*16c dst, <= 8 with nC*8c) and a blocked dst (a first layer).
/// Groups (g > 1, not depthwise) need ic/g and oc/g multiples of the block: 16 or 8 as the
/// layout says, and for channels-last 16 on the AVX-512 kernels, 8 on the AVX2 ones (which an
/// AVX-512 machine runs too). Depthwise channels-last needs g a multiple of 16 or 8 likewise.
/// And a problem's strides inside one image, and the span of one output row's taps (a
/// left pad or dilation times the pixel size), must stay under 2 GiB. A plain src or dst
/// (ncw / nchw / ncdhw, PyTorch's default memory format) that no kernel takes as it lies runs
/// a kernel on its own layouts ("jit:<isa>:plain"): each execute() reorders src into them (and
/// dst too, for a sum post-op), runs the kernel and reorders dst back, a pass of images at a
/// time (the most images, dividing mb, that the last-level cache of the threads present at
/// creation holds, or up to one per thread where that is more; all of them where no divisor
/// gives each thread one; impl_info() says how many), through buffers that stay with the
/// thread that ran it for its next call, as large as the largest such pass it has run (on a
/// stream, each of the library's threads that runs one keeps its own).
/// With every spatial dim 1 (a classifier head) the plain tensors are read in place. src and
/// dst given in two layouts of which neither is plain and no kernel takes as a pair (nhwc
/// with nChw16c, nChw8c with nChw16c) take that row too, with one side reordered: the one of
/// fewer bytes (dst counting twice with a sum), unless the ISA's kernels refuse the other side
/// as given (an nChw8c src on AVX-512).
/// Groups narrower than those blocks (ResNeXt's 32 groups of 4 channels) run merged
/// ("jit:regroup"): k neighbouring groups as one group of k times the channels, with
/// block-diagonal weights (zeros between the groups), by the rows above; k is the least that
/// makes the merged ic/g and oc/g multiples of 8 (or, failing that, of 16: layouts blocked by
/// 16) and must divide g; where none does, g <= 16 groups run as one. The zeros cost k times
/// the groups' own FMAs; impl_info() names the merge. Each execute() reads src once more to
/// find an Inf or a NaN, which the zeros would spread to the merged groups' outputs (0 x Inf is
/// NaN): such a src runs the reference. Each execute() spreads the weights into the merged
/// groups, or once when they are given at creation (the op then holds them twice: the merged
/// ones, and goi[d]hw ones for the reference); weights left as any are goi[d]hw, and src and
/// dst left as any take the layouts of the row that runs the merged problem (nC[d]hw8c, the
/// AVX2 kernels', even under an AVX-512 cap, where the merge for blocks of 8 is the smaller).
/// Anything else runs the reference (impl_name() says which, BLOCKDNN_VERBOSE=2 says why).
/// Weights in another layout than the kernel's are reordered on each execute(), or once when
/// given at creation (the second constructor). Implementations (impl_name()):
/// "jit:avx512_core", "jit:avx2:first", "jit:avx512_core:dw", "jit:avx2:plain", "jit:regroup",
/// ... or "ref";
/// impl_info() adds a JIT one's conf in words on the next line (blocking, unrolling,
/// prefetching: what the kernel cache keys on).
///
/// @code
///   conv_desc d;  d.mb = 2; d.ic = 64; d.ih = d.iw = 56; d.oc = 64; d.kh = d.kw = 3;
///   d.ph = d.pw = d.ph_r = d.pw_r = 1;  d.with_bias = true;  d.infer_dst_dims();
///   conv_fwd conv(d, format_tag::nChw16c, format_tag::OIhw16i16o, format_tag::nChw16c,
///                 post_ops().append_eltwise(eltwise_alg::relu));
///   conv.execute({.src = src, .wei = wei, .bia = bia, .dst = dst});   // or execute(src, wei, bia, dst)
/// @endcode
class conv_fwd : public primitive {
public:
    /// Throws `blockdnn::error` (invalid_arguments) if desc.validate() fails, if a tag is of
    /// the wrong family or number of dims (src/dst: activations with desc.ndims dims; wei:
    /// weights with ndims dims, or ndims + 1 grouped), or if g > 1 with an ungrouped wei tag.
    ///
    /// Any of the three tags may be `format_tag::any`: the implementation picks that layout,
    /// and src_desc() / wei_desc() / dst_desc() answer it (make the tensors from them). The
    /// JIT implementations pick their blocked layouts (nC[d]hw16c and [g]OI[d]hw16i16o on
    /// AVX-512, nC[d]hw8c and [g]OI[d]hw8i8o on AVX2; Goi[d]hw16g / 8g depthwise), a plain
    /// src for a first layer (g = 1, ic <= 4) and, where src or dst is given, the same layout
    /// for the other (channels-last with channels-last; plain with plain, but for the plain src
    /// of a first layer, whose kernel writes a blocked dst); the reference picks the plain
    /// ones (ncw / nchw / ncdhw, oi[d]hw, goi[d]hw with g > 1). Weights left as any are grouped
    /// exactly when g > 1. Implementations are tried best first, each with its own picks.
    conv_fwd(const conv_desc &desc, format_tag src_tag, format_tag wei_tag, format_tag dst_tag,
            const post_ops &po = post_ops());

    /// As the constructor above, and takes the weights (and the bias, an empty tensor without
    /// one) now, as oneDNN users do by creating with weights in the layout the primitive
    /// prefers: the op keeps its own copy, reordered once into the layout its kernel reads
    /// (wei_desc() then describes that copy), so execute(src, dst) does no weight work. A
    /// unit-stride 1x1 without padding or groups on channels-last src and dst, with oi-order
    /// weights, at least 128 output pixels (mb * od * oh * ow) and 128 output channels, bias
    /// and no post-op but a sum and a relu, runs as one GEMM (jit:<isa>:gemm_1x1), which keeps
    /// the copy in that order and packs it once for its kernel (so twice the memory). Later
    /// changes to `wei` and `bia` are not seen. The weights layout is `wei.desc().tag()`.
    /// Throws as the constructor above, and invalid_arguments for weights or bias that do not
    /// match the desc (the messages of execute()). Inside a stream_scope it first waits for the
    /// work queued on the current stream (blockdnn/stream.hpp).
    conv_fwd(const conv_desc &desc, format_tag src_tag, const tensor &wei, const tensor &bia, format_tag dst_tag,
            const post_ops &po = post_ops());
    /// True if the op holds weights given at creation.
    bool holds_weights() const;

    /// Runs the convolution (see conv_fwd_args). Throws `blockdnn::error` (invalid_arguments),
    /// before writing anything: for an op holding weights, if args.wei or args.bia is not
    /// empty; for an op without, if args.wei is empty ("execute(src, dst) needs weights given at
    /// creation" when bia is empty too); if a tensor's descriptor differs from src_desc() /
    /// wei_desc() / bia_desc() / dst_desc() (naming the dim and the field it stands for), if
    /// bia disagrees with desc.with_bias ("bia tensor has no memory, but the op was created
    /// with bias (desc.with_bias = true)", "a bia tensor (...) was given, but the op was created
    /// without bias (desc.with_bias = false)"), or if dst overlaps src, wei or bia in memory.
    void execute(const conv_fwd_args &args) const;
    /// Runs with the weights and bias taken at creation: execute({src, {}, {}, dst}).
    void execute(const tensor &src, const tensor &dst) const { execute(conv_fwd_args {src, {}, {}, dst}); }
    /// execute({src, wei, bia, dst}); `bia` empty (`tensor()`) when the desc has no bias.
    void execute(const tensor &src, const tensor &wei, const tensor &bia, const tensor &dst) const {
        execute(conv_fwd_args {src, wei, bia, dst});
    }
    /// Without bias (desc.with_bias must be false): execute({src, wei, {}, dst}).
    void execute(const tensor &src, const tensor &wei, const tensor &dst) const {
        execute(conv_fwd_args {src, wei, {}, dst});
    }

    const conv_desc &desc() const;
    const post_ops &attr_post_ops() const;
    const tensor_desc &src_desc() const;
    /// The weights execute() takes, or, for an op holding weights, the layout of its copy.
    const tensor_desc &wei_desc() const;
    /// The bias descriptor ({oc}, layout x); an empty descriptor if the desc has no bias.
    const tensor_desc &bia_desc() const;
    const tensor_desc &dst_desc() const;
};

} // namespace blockdnn
