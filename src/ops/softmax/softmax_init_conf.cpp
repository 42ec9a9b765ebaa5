// SPDX-License-Identifier: Apache-2.0
// init_conf of the JIT softmax kernel: the unroll from the register budget.
#include <algorithm>

#include "core/utils.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_eltwise_injector.hpp"
#include "ops/softmax/softmax_conf.hpp"

namespace blockdnn::impl {

const char *to_string(softmax_mode m) { return m == softmax_mode::lines ? "lines" : "lanes"; }

status init_conf_softmax_fwd(softmax_conf_t &c, isa level, softmax_mode mode, std::string &why) {
    if (level != isa::avx2 && level != isa::avx512_core) {
        why = cat("no softmax JIT kernel for isa ", to_string(level));
        return status::unimplemented;
    }
    c = softmax_conf_t {};
    c.isa_level = level;
    c.mode = mode;
    c.simd_w = simd_w_of(level);
    c.n_vtemps = level == isa::avx512_core ? jit_eltwise_injector_t<isa::avx512_core>::n_vtemps(eltwise_alg::exp)
                                           : jit_eltwise_injector_t<isa::avx2>::n_vtemps(eltwise_alg::exp);
    // The compensated sum borrows two of exp's temporaries once exp is done (kahan_add).
    if (c.n_vtemps < 2) {
        why = cat("exp lends ", c.n_vtemps, " temporaries a value, the compensated sum needs 2");
        return status::unimplemented;
    }
    // Per vector of a step: lines keep an accumulator, its compensation and a value with its
    // temporaries; lanes keep the lines' max, sum and compensation beside the value. Two
    // registers stay for the constant and the mask.
    const int per_vec = (mode == softmax_mode::lines ? 3 : 4) + c.n_vtemps;
    const int budget = n_vregs_of(level) - 2;
    c.ur = std::min(softmax_max_ur, budget / per_vec);
    c.n_vregs_used = c.ur * per_vec;
    if (mode == softmax_mode::lines) {
        // Lines in registers keep, per vector, a value with its temporaries, and a register for
        // each line's max and sum (one a vector at most, when each line is one vector).
        c.ur_resident = std::min(softmax_max_ur_resident, budget / (2 + c.n_vtemps));
        c.n_vregs_used = std::max(c.n_vregs_used, c.ur_resident * (2 + c.n_vtemps));
    }
    c.n_vregs_used += 2;
    return status::success;
}

std::string to_string(const softmax_conf_t &c) {
    return cat("isa=", to_string(c.isa_level), " mode=", to_string(c.mode), " simd_w=", c.simd_w, " ur=", c.ur,
            " n_vtemps=", c.n_vtemps, " ur_resident=", c.ur_resident, " n_vregs_used=", c.n_vregs_used);
}

} // namespace blockdnn::impl
