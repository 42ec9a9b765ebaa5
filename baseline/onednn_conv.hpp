// SPDX-License-Identifier: Apache-2.0
// oneDNN (v2 API, Debian's libdnnl 2.6.3) forward convolution as a baseline in the same
// binary as blockdnn's: one problem created once, executed per benchmark iteration.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "blockdnn/conv.hpp"

namespace bench {

class onednn_conv_t {
public:
    /// Creates the primitive: src and dst in the problem's tags (nChw16c, nChw8c, nchw, nhwc),
    /// weights in whatever layout oneDNN prefers (reordered here, outside the timing),
    /// with bias. `nthr` OpenMP threads run it. With `own_act` false the object holds no src
    /// and dst of its own, and only execute(src, dst) runs.
    onednn_conv_t(const blockdnn::conv_desc &p, blockdnn::format_tag src_tag, blockdnn::format_tag dst_tag, int nthr,
            bool own_act = true);
    ~onednn_conv_t();
    /// Runs on the object's own src and dst; throws std::logic_error without them.
    void execute();
    /// Runs on src and dst buffers of the caller (at least src_bytes() / dst_bytes(), in the
    /// tags given at creation); the object's own src and dst are left alone.
    void execute(const float *src, float *dst);
    /// Multiplies every weight by `s`. Weights and bias start as the pattern
    /// (i * 13 % 17) / 8 - 1 over their buffers (mean 0, variance 0.375, in [-1, 1]).
    void scale_weights(float s);
    std::size_t src_bytes() const;
    std::size_t dst_bytes() const;
    /// oneDNN's implementation name ("jit:avx512_core", "brgconv:avx512_core", "ref:any").
    std::string impl_name() const;

    /// Caps oneDNN at AVX2 (dnnl::set_max_cpu_isa); only before any primitive exists.
    static bool cap_isa_avx2();
    /// True if oneDNN runs AVX-512 code in this process.
    static bool has_avx512();

private:
    struct impl_t;
    std::unique_ptr<impl_t> impl_;
};

} // namespace bench
