// SPDX-License-Identifier: Apache-2.0
// The conf of the JIT binary kernel: the operation, how src1 is read, the post-op chain, and the
// unroll decided by init_conf. Plain data; to_string() prints every field.
#pragma once

#include <string>
#include <vector>

#include "blockdnn/binary.hpp"
#include "blockdnn/isa.hpp"
#include "blockdnn/post_ops.hpp"
#include "blockdnn/status.hpp"

namespace blockdnn::impl {

struct binary_conf_t {
    isa isa_level = isa::avx512_core;
    // problem
    binary_alg alg = binary_alg::add;
    bool src1_scalar = false; // one src1 value per row (broadcast along it), else a row of src1
    std::vector<post_op> post_ops;
    // blocking (decided by init_conf)
    int simd_w = 0;   // floats per vector register
    int ur = 0;       // vectors per main-loop iteration
    int n_vtemps = 0; // temporaries per value: src1's or dst's masked tail, the injector's
    // register budget: values [0, ur), temporaries [ur, ur + ur * n_vtemps), then the broadcast
    // src1 value and the AVX2 tail mask
    int n_vregs_used = 0;
};

/// Most vectors unrolled per main-loop iteration: as eltwise's (a memory-bound loop with
/// optional long eltwise chains).
constexpr int binary_max_ur = 8;

/// Fills `c` at `level` (avx2 or avx512_core). Pure: no CPU query, no code. Returns
/// unimplemented with the reason in `why` if the ISA has no JIT or the registers cannot hold
/// one value and its temporaries.
status init_conf_binary_fwd(
        binary_conf_t &c, isa level, binary_alg alg, bool src1_scalar, const post_ops &po, std::string &why);

/// "isa=avx512_core alg=add src1=row post_ops=sum:1+relu:0:0 simd_w=16 ur=8 ...": every field,
/// floats in shortest round-trip form, so equal strings mean equal confs.
std::string to_string(const binary_conf_t &c);

} // namespace blockdnn::impl
