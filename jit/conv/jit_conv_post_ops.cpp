// SPDX-License-Identifier: Apache-2.0
// Element-wise post-ops for the convolution kernels (see jit_conv_post_ops.hpp). Each function
// matches eltwise_ref exactly where the float result is a single rounding of the exact value
// (relu, leaky relu, clip; linear is one fused multiply-add), and keeps NaN inputs NaN.
#include "jit/conv/jit_conv_post_ops.hpp"

#include <algorithm>

#include "common/utils.hpp"

namespace blockdnn::impl {

namespace {

int temps_of(const post_op &e) {
    if (e.what == post_op::kind::sum) return 0;
    switch (e.alg) {
    case eltwise_alg::relu: return e.alpha == 0.f ? 1 : 3; // zero; leaky on AVX2: mask, product
    case eltwise_alg::linear: return 1;
    case eltwise_alg::clip: return 1;
    default: return 0;
    }
}

} // namespace

bool conv_post_ops_supported(const std::vector<post_op> &po, std::string &why) {
    int sums = 0;
    for (const post_op &e : po) {
        if (e.what == post_op::kind::sum) {
            if (++sums > 1) {
                why = "post-ops hold more than one sum";
                return false;
            }
            continue;
        }
        if (e.alg != eltwise_alg::relu && e.alg != eltwise_alg::linear && e.alg != eltwise_alg::clip) {
            why = cat("post-op eltwise ", to_string(e.alg), " has no JIT emitter yet");
            return false;
        }
    }
    return true;
}

int conv_post_ops_temps(const std::vector<post_op> &po) {
    int n = 0;
    for (const post_op &e : po) n = std::max(n, temps_of(e));
    return n;
}

template <isa level>
void conv_post_ops_emitter_t<level>::apply(
        const post_op &e, const std::vector<int> &accs, const std::vector<int> &temps) {
    jit_conv_base_t &h = h_;
    const Vmm t0(temps.at(0));
    // Where NaN must pass through, the accumulator is the second source: vmaxps/vminps return
    // their second source when either is NaN.
    switch (e.alg) {
    case eltwise_alg::relu:
        h.vxorps(t0, t0, t0);
        if (e.alpha == 0.f) {
            for (int a : accs) h.vmaxps(Vmm(a), t0, Vmm(a));
        } else if constexpr (level == isa::avx512_core) {
            for (int a : accs) {
                h.vcmpps(h.k1, Vmm(a), t0, 1 /* LT_OS: false for NaN */);
                h.vmulps(Vmm(a) | h.k1, Vmm(a), h.vconst(e.alpha));
            }
        } else {
            const Vmm mask(temps.at(1)), prod(temps.at(2));
            for (int a : accs) {
                h.vcmpps(mask, Vmm(a), t0, 1);
                h.vmulps(prod, Vmm(a), h.vconst(e.alpha));
                h.vblendvps(Vmm(a), Vmm(a), prod, mask);
            }
        }
        break;
    case eltwise_alg::linear:
        h.vmovups(t0, h.vconst(e.alpha));
        for (int a : accs) h.vfmadd213ps(Vmm(a), t0, h.vconst(e.beta));
        break;
    case eltwise_alg::clip:
        h.vmovups(t0, h.vconst(e.alpha));
        for (int a : accs) h.vmaxps(Vmm(a), t0, Vmm(a));
        h.vmovups(t0, h.vconst(e.beta));
        for (int a : accs) h.vminps(Vmm(a), t0, Vmm(a));
        break;
    default: break; // rejected by conv_post_ops_supported
    }
}

template class conv_post_ops_emitter_t<isa::avx2>;
template class conv_post_ops_emitter_t<isa::avx512_core>;

} // namespace blockdnn::impl
