// SPDX-License-Identifier: Apache-2.0
// The forward-convolution table, best first; "ref" last takes every problem.
#include "ops/conv/conv_fwd_jit.hpp"
#include "ops/conv/conv_impl.hpp"

namespace blockdnn::impl {

namespace {

using k = conv_kernel_kind;
constexpr isa avx512 = isa::avx512_core, avx2 = isa::avx2;

// Per ISA: the kernels for special shapes (depthwise, plain-src first layers), then the
// general direct one. Each takes exactly what its init_conf takes.
constexpr conv_row_t impls[] = {
        {"jit:avx512_core:dw", avx512, create_conv_fwd_jit<avx512, k::depthwise>},
        {"jit:avx512_core:first", avx512, create_conv_fwd_jit<avx512, k::first>},
        {"jit:avx512_core", avx512, create_conv_fwd_jit<avx512, k::direct>},
        {"jit:avx2:dw", avx2, create_conv_fwd_jit<avx2, k::depthwise>},
        {"jit:avx2:first", avx2, create_conv_fwd_jit<avx2, k::first>},
        {"jit:avx2", avx2, create_conv_fwd_jit<avx2, k::direct>},
        {"ref", isa::scalar, create_any<create_conv_fwd_ref>},
};

} // namespace

std::span<const conv_row_t> conv_fwd_impls() { return impls; }

} // namespace blockdnn::impl
