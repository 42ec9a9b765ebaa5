// SPDX-License-Identifier: Apache-2.0
// The conf of the standalone eltwise kernel: the problem (alg, alpha, beta) and the blocking
// decided by init_conf. Plain data; to_string() prints every field.
#pragma once

#include <string>

#include "blockdnn/eltwise_alg.hpp"
#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"

namespace blockdnn::impl {

struct eltwise_conf_t {
    isa isa_level = isa::avx512_core;
    // problem
    eltwise_alg alg = eltwise_alg::relu;
    float alpha = 0.f, beta = 0.f;
    bool stream_stores = false; // non-temporal stores (out of place, larger than the LLC)
    // blocking (decided by init_conf)
    int simd_w = 0;   // floats per vector register
    int ur = 0;       // vectors per main-loop iteration
    int n_vtemps = 0; // injector temporaries per value register
    // register budget: values [0, ur), temporaries [ur, ur + ur * n_vtemps)
    int n_vregs_used = 0;
    // AVX2: the vector register holding the tail mask. The masked tail handles one value,
    // which needs only register 0 and temporaries [ur, ur + n_vtemps), so the mask takes a
    // register the main loop uses for something else. -1 on AVX-512 (opmask k1).
    int tail_mask_vreg = -1;
};

/// Most vectors unrolled per main-loop iteration. Eight 64-byte vectors in flight cover the
/// latency of the longest chains (divide, FMA ladders) at two vector ports, and beyond that
/// the loop is bound by loads and stores anyway.
constexpr int eltwise_max_ur = 8;

/// Fills `c` for alg/alpha/beta at `level` (avx2 or avx512_core). Pure: no CPU query, no code.
/// Returns unimplemented with the reason in `why` if the ISA has no JIT or the registers
/// cannot hold one value and its temporaries.
status init_conf_eltwise_fwd(
        eltwise_conf_t &c, isa level, eltwise_alg alg, float alpha, float beta, bool stream_stores, std::string &why);

/// "isa=avx512_core alg=gelu_tanh alpha=0 beta=0 stream_stores=0 simd_w=16 ur=8 ...": every
/// field, floats in shortest round-trip form, so equal strings mean equal confs.
std::string to_string(const eltwise_conf_t &c);

} // namespace blockdnn::impl
