// SPDX-License-Identifier: Apache-2.0
// init_conf of the JIT binary kernel: the unroll from the register budget.
#include <algorithm>

#include "core/utils.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_eltwise_injector.hpp"
#include "ops/binary/binary_conf.hpp"

namespace blockdnn::impl {

status init_conf_binary_fwd(
        binary_conf_t &c, isa level, binary_alg alg, bool src1_scalar, const post_ops &po, std::string &why) {
    if (level != isa::avx2 && level != isa::avx512_core) {
        why = cat("no binary JIT kernel for isa ", to_string(level));
        return status::unimplemented;
    }
    c = binary_conf_t {};
    c.isa_level = level;
    c.alg = alg;
    c.src1_scalar = src1_scalar;
    c.post_ops = po.entries();
    c.simd_w = simd_w_of(level);
    // One temporary holds a masked src1 tail or dst's old value (sum); eltwise post-ops need
    // the injector's.
    c.n_vtemps = 1;
    for (const post_op &e : c.post_ops)
        if (e.what == post_op::kind::eltwise)
            c.n_vtemps = std::max(c.n_vtemps,
                    level == isa::avx512_core ? jit_eltwise_injector_t<isa::avx512_core>::n_vtemps(e.alg)
                                              : jit_eltwise_injector_t<isa::avx2>::n_vtemps(e.alg));
    const int budget = n_vregs_of(level) - 2; // the broadcast src1 value, the AVX2 tail mask
    c.ur = std::min(binary_max_ur, budget / (1 + c.n_vtemps));
    if (c.ur < 1) {
        why = cat("post-ops need ", 1 + c.n_vtemps, " vector registers a value, ", budget, " available");
        return status::unimplemented;
    }
    c.n_vregs_used = c.ur * (1 + c.n_vtemps) + 2;
    return status::success;
}

std::string to_string(const binary_conf_t &c) {
    std::string po;
    for (const post_op &e : c.post_ops) {
        if (!po.empty()) po += '+';
        po += e.what == post_op::kind::sum ? cat("sum:", float_str(e.scale))
                                           : cat(to_string(e.alg), ":", float_str(e.alpha), ":", float_str(e.beta));
    }
    return cat("isa=", to_string(c.isa_level), " alg=", to_string(c.alg), " src1=", c.src1_scalar ? "scalar" : "row",
            " post_ops=", po.empty() ? "none" : po, " simd_w=", c.simd_w, " ur=", c.ur, " n_vtemps=", c.n_vtemps,
            " n_vregs_used=", c.n_vregs_used);
}

} // namespace blockdnn::impl
