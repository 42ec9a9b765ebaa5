// SPDX-License-Identifier: Apache-2.0
// What a JIT generator needs to know about an ISA level: the vector register type, its width
// and how many there are. One generator source serves both ISAs through these traits.
#pragma once

#include <xbyak/xbyak.h>

#include "blockdnn/isa.hpp"

namespace blockdnn::impl {

template <isa level>
struct isa_traits_t;

/// AVX-512 F/BW/DQ/VL: 32 zmm registers of 16 floats; tails use opmask registers.
template <>
struct isa_traits_t<isa::avx512_core> {
    using Vmm = Xbyak::Zmm;
    static constexpr int simd_w = 16; // floats per register
    static constexpr int vlen = 64;   // bytes per register
    static constexpr int n_vregs = 32;
    static constexpr bool has_opmask = true;
};

/// AVX2 + FMA3: 16 ymm registers of 8 floats; tails use vmaskmovps with a vector mask.
template <>
struct isa_traits_t<isa::avx2> {
    using Vmm = Xbyak::Ymm;
    static constexpr int simd_w = 8;
    static constexpr int vlen = 32;
    static constexpr int n_vregs = 16;
    static constexpr bool has_opmask = false;
};

/// Declares, inside a kernel class templated over `level`, the names its generator code uses:
/// Vmm, simd_w, n_vregs and is_avx512. A macro rather than a base class: a base that depends on
/// `level` would hide these names, and Xbyak's through it, from the kernel's unqualified lookup.
#define BLOCKDNN_JIT_ISA_NAMES(level)                                                                                  \
    using Vmm = typename ::blockdnn::impl::isa_traits_t<level>::Vmm;                                                   \
    static constexpr int simd_w = ::blockdnn::impl::isa_traits_t<level>::simd_w;                                       \
    static constexpr int n_vregs = ::blockdnn::impl::isa_traits_t<level>::n_vregs;                                     \
    static constexpr bool is_avx512 = (level) == ::blockdnn::isa::avx512_core

/// The same numbers for an ISA known only at run time (init_conf works with these).
/// Only avx2 and avx512_core have JIT kernels; scalar gives 1 float and 0 registers.
constexpr int simd_w_of(isa level) { return level == isa::avx512_core ? 16 : level == isa::avx2 ? 8 : 1; }
constexpr int vlen_of(isa level) { return simd_w_of(level) * 4; }
constexpr int n_vregs_of(isa level) { return level == isa::avx512_core ? 32 : level == isa::avx2 ? 16 : 0; }

} // namespace blockdnn::impl
