// SPDX-License-Identifier: Apache-2.0
// Element-wise post-ops emitted into a host convolution kernel's store path, on the host's
// accumulator registers with temporaries the host lends. The host applies sum entries itself
// (it owns the dst addresses); this emitter covers the eltwise entries.
#pragma once

#include <string>
#include <vector>

#include "blockdnn/isa.hpp"
#include "blockdnn/post_ops.hpp"
#include "jit/conv/jit_conv_base.hpp"

namespace blockdnn::impl {

/// True if every entry of `po` can be emitted (at most one sum; eltwise relu, linear, clip),
/// else false with the first unsupported entry named in `why`.
bool conv_post_ops_supported(const std::vector<post_op> &po, std::string &why);

/// Vector temporaries apply() needs for the chain (the maximum over its entries).
int conv_post_ops_temps(const std::vector<post_op> &po);

/// Emits eltwise post-ops for ISA `level` (avx2: ymm, avx512_core: zmm) into `host`.
template <isa level>
class conv_post_ops_emitter_t {
public:
    using Vmm = std::conditional_t<level == isa::avx512_core, Xbyak::Zmm, Xbyak::Ymm>;

    explicit conv_post_ops_emitter_t(jit_conv_base_t &host) : h_(host) {}

    /// Applies eltwise entry `e` in place to the registers `accs`, using the registers
    /// `temps` (at least conv_post_ops_temps() of them) and, on AVX-512, opmask k1.
    void apply(const post_op &e, const std::vector<int> &accs, const std::vector<int> &temps);

private:
    jit_conv_base_t &h_;
};

} // namespace blockdnn::impl
