// SPDX-License-Identifier: Apache-2.0
// Forward convolution with a 1x1 kernel, unit strides and no padding, channels-last src and
// dst and weights in an oi order (oihw, the layout PyTorch and ONNX hand over), as one GEMM on
// the JIT driver (src/jit/gemm): every output pixel is its input pixel's channels times the
// weights, so with M = mb * od * oh * ow
//   dst[M x oc] = relu(src[M x ic] * wei^T + bias + scale * dst)
// (wei read as oc x ic; the sum post-op's scale and the relu where the post-ops have them),
// with src and dst read as they lie (rows of ic and oc floats). The GEMM adds scale * dst as
// its beta, and its kernels add the bias and apply the relu before they store the last K chunk.
// It takes only ops created with their weights, which it packs into the GEMM's B panels once
// (take_weights): packing them on every call cost more than the direct kernel's reorder into
// its blocked layout. The GEMM's register block spans a whole panel of output channels for a
// few pixels, the direct kernel's a couple of weight vectors for a row of pixels.
#include "core/aligned_vector.hpp"
#include "core/utils.hpp"
#include "jit/gemm/gemm_jit.hpp"
#include "ops/conv/conv_impl.hpp"
#include "tensor/layout.hpp"

namespace blockdnn::impl {

namespace {

// Below these sizes the direct kernel kept up or won in the measurements (docs/tuning.md, "Conv:
// unit-stride 1x1 as one GEMM on nhwc"): with few rows (output pixels) the GEMM is left a few
// register blocks and a partial one; with few output channels each src row streamed in feeds
// few FMAs, and the direct kernel prefetches src ahead where the GEMM does not.
constexpr dim_t min_rows = 128;
constexpr dim_t min_oc = 128;

// The weights, every kernel size 1, as a row-major oc x ic matrix: no blocks, ic dense.
bool wei_is_oc_by_ic(const tensor_desc &w, dim_t ic) {
    return layout_info(w.tag()).nblks == 0 && w.padded_dims() == w.dims() && w.stride(1) == 1 && w.stride(0) == ic;
}

// The post-op chains the row takes: none, a sum (scale != 0), a relu (alpha 0), or a sum then
// a relu. Returns false for any other; else sets the sum's scale (0 without one) and whether a
// relu follows.
bool split_post_ops(const post_ops &po, float &sum_scale, bool &relu) {
    sum_scale = 0.f;
    relu = false;
    for (int i = 0; i < po.len(); ++i) {
        const post_op &e = po.entries()[static_cast<std::size_t>(i)];
        // With scale 0 the GEMM would not read dst, where the reference adds 0 * dst (a NaN stays).
        if (e.what == post_op::kind::sum && i == 0 && e.scale != 0.f) sum_scale = e.scale;
        else if (e.what == post_op::kind::eltwise && e.alg == eltwise_alg::relu && e.alpha == 0.f && i == po.len() - 1)
            relu = true;
        else return false;
    }
    return true;
}

class conv_fwd_gemm_t final : public conv_impl_t {
public:
    conv_fwd_gemm_t(const conv_prb_t &p, std::unique_ptr<gemm_jit_t> gemm) : p_(p), gemm_(std::move(gemm)) {}

    const conv_prb_t &prb() const override { return p_; }
    std::string info() const override { return gemm_->str(); }

    void take_weights(const conv_args_t &weights) override { wei_.take(*gemm_, weights.wei, p_.desc.ic); }

    void execute(const conv_args_t &a) const override {
        // The op passes its own weights, the ones taken; other weights are packed for the call.
        aligned_vector<float> scratch;
        gemm_->execute(a.src, wei_.get(*gemm_, a.wei, p_.desc.ic, scratch), a.dst, 0, a.bia);
    }

private:
    conv_prb_t p_;
    std::unique_ptr<gemm_jit_t> gemm_;
    gemm_packed_weights_t wei_;
};

} // namespace

template <isa level>
status create_conv_fwd_gemm_1x1(const conv_prb_t &prb, std::unique_ptr<conv_impl_t> &out, std::string &why) {
    const conv_desc &d = prb.desc;
    const bool one_by_one = d.kd == 1 && d.kh == 1 && d.kw == 1;
    const bool unit_stride = d.sd == 1 && d.sh == 1 && d.sw == 1;
    const bool no_pad = d.pd == 0 && d.ph == 0 && d.pw == 0 && d.pd_r == 0 && d.ph_r == 0 && d.pw_r == 0;
    if (!one_by_one || !unit_stride || !no_pad || d.g != 1) {
        why = "not a unit-stride 1x1 convolution without padding and groups";
        return status::unimplemented;
    }
    if (!prb.wei_held || prb.wei_any) {
        why = "weights given per call: the direct kernel's reorder costs less than packing them";
        return status::unimplemented;
    }
    // src and dst both left as any go to the direct kernel, whose blocked layouts a network's
    // other layers share; one left as any takes the other's layout, as conv_fwd documents.
    if (prb.src_any && prb.dst_any) {
        why = "src and dst left as any";
        return status::unimplemented;
    }
    const conv_prb_t p = with_layouts(prb, prb.dst.tag(), format_tag::undef, prb.src.tag());
    if (!is_channels_last(p.src.tag()) || !is_channels_last(p.dst.tag())) {
        why = "src and dst are not both channels-last (nwc, nhwc, ndhwc)";
        return status::unimplemented;
    }
    if (!wei_is_oc_by_ic(p.wei, d.ic)) {
        why = cat("wei layout ", to_string(p.wei.tag()), " is not a row-major oc x ic matrix (oihw...)");
        return status::unimplemented;
    }
    float beta = 0.f;
    bool relu = false;
    if (!split_post_ops(p.po, beta, relu)) {
        why = cat("post-ops ", p.po.str(),
                ": the GEMM takes a sum (scale != 0), a relu (alpha 0), or both in that order");
        return status::unimplemented;
    }
    const dim_t M = d.mb * d.od * d.oh * d.ow;
    if (M < min_rows || d.oc < min_oc) {
        why = cat(
                "mb * od * oh * ow = ", M, " and oc = ", d.oc, ": the GEMM takes at least ", min_rows, " and ", min_oc);
        return status::unimplemented;
    }
    std::unique_ptr<gemm_jit_t> g;
    const gemm_epilogue_t epilogue {d.with_bias, relu};
    if (status s = gemm_jit_t::create(g, level, M, d.oc, d.ic, d.ic, d.oc, beta, why, {}, true, epilogue);
            s != status::success)
        return s;
    out = std::make_unique<conv_fwd_gemm_t>(p, std::move(g));
    return status::success;
}

template status create_conv_fwd_gemm_1x1<isa::avx512_core>(
        const conv_prb_t &, std::unique_ptr<conv_impl_t> &, std::string &);
template status create_conv_fwd_gemm_1x1<isa::avx2>(const conv_prb_t &, std::unique_ptr<conv_impl_t> &, std::string &);

} // namespace blockdnn::impl
