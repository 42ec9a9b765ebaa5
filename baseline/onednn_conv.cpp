// SPDX-License-Identifier: Apache-2.0
// oneDNN baseline for bench_conv and blockdnn-bench --baseline=onednn (see onednn_conv.hpp).
// oneDNN 2.6.3 in Debian runs on OpenMP, so its thread count is set with omp_set_num_threads.
#include "onednn_conv.hpp"

#include <stdexcept>

#include <omp.h>

#include <dnnl.hpp>

#include "onednn_memory.hpp"

namespace bench {

using namespace dnnl;
using blockdnn::format_tag;

namespace {

memory::format_tag to_dnnl(format_tag t) {
    switch (t) {
    case format_tag::nchw: return memory::format_tag::nchw;
    case format_tag::ncw: return memory::format_tag::ncw;
    case format_tag::ncdhw: return memory::format_tag::ncdhw;
    case format_tag::nChw16c: return memory::format_tag::nChw16c;
    case format_tag::nChw8c: return memory::format_tag::nChw8c;
    case format_tag::nCw16c: return memory::format_tag::nCw16c;
    case format_tag::nCw8c: return memory::format_tag::nCw8c;
    case format_tag::nCdhw16c: return memory::format_tag::nCdhw16c;
    case format_tag::nCdhw8c: return memory::format_tag::nCdhw8c;
    case format_tag::nwc: return memory::format_tag::nwc;
    case format_tag::nhwc: return memory::format_tag::nhwc;
    case format_tag::ndhwc: return memory::format_tag::ndhwc;
    default: return memory::format_tag::any;
    }
}

memory::dims act(const blockdnn::conv_desc &p, memory::dim c, memory::dim d, memory::dim h, memory::dim w) {
    if (p.ndims == 3) return {p.mb, c, w};
    if (p.ndims == 4) return {p.mb, c, h, w};
    return {p.mb, c, d, h, w};
}

memory::dims sp(const blockdnn::conv_desc &p, memory::dim d, memory::dim h, memory::dim w) {
    if (p.ndims == 3) return {w};
    if (p.ndims == 4) return {h, w};
    return {d, h, w};
}

} // namespace

struct onednn_conv_t::impl_t {
    engine eng {engine::kind::cpu, 0};
    stream strm {eng};
    convolution_forward::primitive_desc pd;
    convolution_forward prim;
    onednn_buffers_t buffers; // declared before the memory objects that point into it
    memory src, wei, bia, dst;
    memory io_src, io_dst; // execute(src, dst)'s: no buffer of their own, handles set per call
    bool own_act = true;
    int nthr = 1;
};

onednn_conv_t::onednn_conv_t(
        const blockdnn::conv_desc &p, format_tag src_tag, format_tag dst_tag, int nthr, bool own_act)
    : impl_(new impl_t) {
    impl_t &m = *impl_;
    m.nthr = nthr;
    m.own_act = own_act;
    // oneDNN's kernels fix their thread count when the primitive descriptor is created, from
    // omp_get_max_threads(): set it first, or a 1-thread primitive created after a 2-thread
    // one runs on 2 threads.
    omp_set_num_threads(nthr);
    memory::dims wd;
    if (p.g > 1) wd = {p.g, p.oc / p.g, p.ic / p.g};
    else wd = {p.oc, p.ic};
    for (memory::dim k : sp(p, p.kd, p.kh, p.kw)) wd.push_back(k);
    const memory::desc sd(act(p, p.ic, p.id, p.ih, p.iw), memory::data_type::f32, to_dnnl(src_tag));
    const memory::desc dd(act(p, p.oc, p.od, p.oh, p.ow), memory::data_type::f32, to_dnnl(dst_tag));
    const memory::desc wdesc(wd, memory::data_type::f32, memory::format_tag::any);
    const memory::desc bd({p.oc}, memory::data_type::f32, memory::format_tag::x);
    const convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, sd, wdesc, bd, dd,
            sp(p, p.sd, p.sh, p.sw), sp(p, p.dd, p.dh, p.dw), sp(p, p.pd, p.ph, p.pw), sp(p, p.pd_r, p.ph_r, p.pw_r));
    m.pd = convolution_forward::primitive_desc(d, m.eng);
    m.prim = convolution_forward(m.pd);
    m.wei = m.buffers.make(m.pd.weights_desc(), m.eng);
    m.bia = m.buffers.make(m.pd.bias_desc(), m.eng);
    fill_pattern(m.wei);
    fill_pattern(m.bia);
    if (own_act) {
        m.src = m.buffers.make(m.pd.src_desc(), m.eng);
        m.dst = m.buffers.make(m.pd.dst_desc(), m.eng);
        fill_pattern(m.src);
    }
    m.io_src = memory(m.pd.src_desc(), m.eng, DNNL_MEMORY_NONE);
    m.io_dst = memory(m.pd.dst_desc(), m.eng, DNNL_MEMORY_NONE);
}

onednn_conv_t::~onednn_conv_t() = default;

void onednn_conv_t::execute() {
    if (!impl_->own_act) throw std::logic_error("onednn_conv_t: created without src and dst, use execute(src, dst)");
    omp_set_num_threads(impl_->nthr);
    impl_->prim.execute(impl_->strm,
            {{DNNL_ARG_SRC, impl_->src}, {DNNL_ARG_WEIGHTS, impl_->wei}, {DNNL_ARG_BIAS, impl_->bia},
                    {DNNL_ARG_DST, impl_->dst}});
    impl_->strm.wait();
}

void onednn_conv_t::execute(const float *src, float *dst) {
    impl_t &m = *impl_;
    // oneDNN's memory wants a non-const handle; the convolution only reads src.
    m.io_src.set_data_handle(const_cast<float *>(src));
    m.io_dst.set_data_handle(dst);
    omp_set_num_threads(m.nthr);
    m.prim.execute(m.strm,
            {{DNNL_ARG_SRC, m.io_src}, {DNNL_ARG_WEIGHTS, m.wei}, {DNNL_ARG_BIAS, m.bia}, {DNNL_ARG_DST, m.io_dst}});
    m.strm.wait();
}

void onednn_conv_t::scale_weights(float s) {
    float *f = static_cast<float *>(impl_->wei.get_data_handle());
    const std::size_t n = impl_->wei.get_desc().get_size() / 4;
    for (std::size_t i = 0; i < n; ++i) f[i] *= s;
}

std::size_t onednn_conv_t::src_bytes() const { return impl_->pd.src_desc().get_size(); }
std::size_t onednn_conv_t::dst_bytes() const { return impl_->pd.dst_desc().get_size(); }

std::string onednn_conv_t::impl_name() const { return impl_->pd.impl_info_str(); }

bool onednn_conv_t::cap_isa_avx2() { return set_max_cpu_isa(cpu_isa::avx2) == status::success; }

bool onednn_conv_t::has_avx512() {
    const cpu_isa i = get_effective_cpu_isa();
    return i == cpu_isa::avx512_core || i == cpu_isa::avx512_core_vnni || i == cpu_isa::avx512_core_bf16
            || i == cpu_isa::avx512_core_amx;
}

} // namespace bench
