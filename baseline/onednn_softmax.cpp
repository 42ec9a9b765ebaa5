// SPDX-License-Identifier: Apache-2.0
// oneDNN softmax baseline for blockdnn-bench --baseline=onednn (see onednn_softmax.hpp). As in
// onednn_conv.cpp, oneDNN 2.6.3 runs on OpenMP: its thread count is omp_set_num_threads'.
#include "onednn_softmax.hpp"

#include <stdexcept>

#include <omp.h>

#include <dnnl.hpp>

#include "onednn_memory.hpp"

namespace bench {

using namespace dnnl;

struct onednn_softmax_t::impl_t {
    engine eng {engine::kind::cpu, 0};
    stream strm {eng};
    softmax_forward::primitive_desc pd;
    softmax_forward prim;
    onednn_buffers_t buffers; // declared before the memory objects that point into it
    memory src, dst;
    int nthr = 1;
};

onednn_softmax_t::onednn_softmax_t(const blockdnn::softmax_desc &d, blockdnn::format_tag tag, bool inplace, int nthr)
    : impl_(new impl_t) {
    impl_t &m = *impl_;
    m.nthr = nthr;
    // The kernels fix their thread count at creation (see onednn_conv_t).
    omp_set_num_threads(nthr);
    const blockdnn::tensor_desc td(d.dims, tag);
    if (td.is_blocked()) throw std::invalid_argument("onednn_softmax_t: a plain layout only");
    memory::dims strides;
    for (int k = 0; k < td.ndims(); ++k) strides.push_back(td.stride(k));
    const memory::desc md(memory::dims(d.dims.begin(), d.dims.end()), memory::data_type::f32, strides);
    m.pd = softmax_forward::primitive_desc({prop_kind::forward_inference, md, d.axis}, m.eng);
    m.prim = softmax_forward(m.pd);
    m.src = m.buffers.make(m.pd.src_desc(), m.eng);
    m.dst = inplace ? m.src : m.buffers.make(m.pd.dst_desc(), m.eng);
    fill_pattern(m.src);
}

onednn_softmax_t::~onednn_softmax_t() = default;

void onednn_softmax_t::execute() {
    omp_set_num_threads(impl_->nthr);
    impl_->prim.execute(impl_->strm, {{DNNL_ARG_SRC, impl_->src}, {DNNL_ARG_DST, impl_->dst}});
    impl_->strm.wait();
}

std::string onednn_softmax_t::impl_name() const { return impl_->pd.impl_info_str(); }

} // namespace bench
