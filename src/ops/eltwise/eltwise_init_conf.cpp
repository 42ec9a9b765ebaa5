// SPDX-License-Identifier: Apache-2.0
// init_conf of the standalone eltwise kernel: unroll from the register budget.
#include <algorithm>

#include "core/utils.hpp"
#include "ops/eltwise/eltwise_conf.hpp"
#include "jit/jit_eltwise_injector.hpp"
#include "jit/isa_traits.hpp"

namespace blockdnn::impl {

status init_conf_eltwise_fwd(
        eltwise_conf_t &c, isa level, eltwise_alg alg, float alpha, float beta, bool stream_stores, std::string &why) {
    if (level != isa::avx2 && level != isa::avx512_core) {
        why = cat("no eltwise JIT kernel for isa ", to_string(level));
        return status::unimplemented;
    }
    c = eltwise_conf_t {};
    c.isa_level = level;
    c.alg = alg;
    c.alpha = alpha;
    c.beta = beta;
    c.stream_stores = stream_stores;
    c.simd_w = simd_w_of(level);
    c.n_vtemps = level == isa::avx512_core ? jit_eltwise_injector_t<isa::avx512_core>::n_vtemps(alg)
                                           : jit_eltwise_injector_t<isa::avx2>::n_vtemps(alg);
    const int budget = n_vregs_of(level);
    c.ur = std::min(eltwise_max_ur, budget / (1 + c.n_vtemps));
    if (c.ur < 1) {
        why = cat("alg ", to_string(alg), " needs ", 1 + c.n_vtemps, " vector registers, ", budget, " available");
        return status::unimplemented;
    }
    c.n_vregs_used = c.ur * (1 + c.n_vtemps);
    if (level == isa::avx2) {
        // The first register past value 0's temporaries, or value 1's register.
        c.tail_mask_vreg = c.ur + c.n_vtemps < budget ? c.ur + c.n_vtemps : 1;
        if (c.tail_mask_vreg == 1 && c.ur < 2) {
            why = cat("alg ", to_string(alg), " leaves no register for the AVX2 tail mask");
            return status::unimplemented;
        }
    }
    return status::success;
}

std::string to_string(const eltwise_conf_t &c) {
    return cat("isa=", to_string(c.isa_level), " alg=", to_string(c.alg), " alpha=", float_str(c.alpha),
            " beta=", float_str(c.beta), " stream_stores=", c.stream_stores, " simd_w=", c.simd_w, " ur=", c.ur,
            " n_vtemps=", c.n_vtemps, " n_vregs_used=", c.n_vregs_used, " tail_mask_vreg=", c.tail_mask_vreg);
}

} // namespace blockdnn::impl
