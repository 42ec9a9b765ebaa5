// SPDX-License-Identifier: Apache-2.0
// The conf of the JIT softmax kernel: which of its two loop nests, and the blocking decided by
// init_conf. Plain data; to_string() prints every field.
#pragma once

#include <string>

#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"

namespace blockdnn::impl {

/// How a call's lines lie in memory. A dense tensor whose softmax axis is not a blocked dim
/// is [outer][len][inner] in memory, inner = the axis's stride (see softmax_jit.cpp).
enum class softmax_mode {
    lines, ///< inner == 1: each line is len contiguous floats; vectors run along the line
    lanes, ///< inner > 1: a line's elements are inner floats apart; each vector lane is a line
};

const char *to_string(softmax_mode m);

struct softmax_conf_t {
    isa isa_level = isa::avx512_core;
    softmax_mode mode = softmax_mode::lines;
    // blocking (decided by init_conf)
    int simd_w = 0;   // floats per vector register
    int ur = 0;       // vectors per step: accumulators (lines) or lines-vectors (lanes) at once
    int n_vtemps = 0; // exp's temporaries per value register (the eltwise injector)
    // lines mode: vectors of short lines held in registers at once (one line of up to that
    // many vectors, or several shorter lines side by side); 0 in lanes mode
    int ur_resident = 0;
    // register budget: see jit_softmax_fwd_kernel.hpp; the last register holds the AVX2 tail
    // mask and the one before it a constant (-inf, then 1)
    int n_vregs_used = 0;
};

/// Most vectors per step: four independent chains cover the add and max latency of either ISA,
/// and a line or lane group wider than that is bound by loads and stores.
constexpr int softmax_max_ur = 4;
/// Most vectors of short lines held in registers at once: lines of up to this many vectors
/// skip the passes over memory.
constexpr int softmax_max_ur_resident = 8;

/// Fills `c` for `mode` at `level` (avx2 or avx512_core). Pure: no CPU query, no code. Returns
/// unimplemented with the reason in `why` if the ISA has no JIT.
status init_conf_softmax_fwd(softmax_conf_t &c, isa level, softmax_mode mode, std::string &why);

/// "isa=avx512_core mode=lines simd_w=16 ur=4 ...": every field, so equal strings mean equal
/// confs.
std::string to_string(const softmax_conf_t &c);

} // namespace blockdnn::impl
