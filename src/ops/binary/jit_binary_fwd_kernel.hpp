// SPDX-License-Identifier: Apache-2.0
// The JIT binary kernel: dst = post_ops(src0 (+|*) src1) over rows of contiguous floats, src1 a
// row of its own or one value per row. The driver (src/ops/binary/binary_jit.cpp) maps a
// tensor's broadcast onto rows and calls.
#pragma once

#include <cstdint>
#include <string>

#include "jit/jit_generator.hpp"
#include "ops/binary/binary_conf.hpp"

namespace blockdnn::impl {

/// Arguments of one call, read by the kernel through offsetof. src0 == dst is allowed.
struct binary_call_args_t {
    const float *src0;
    const float *src1;
    float *dst;
    std::int64_t rows;        // >= 1; row r starts r * len floats after src0 and dst
    std::int64_t len;         // floats a row, >= 1
    std::int64_t src1_stride; // floats from one row's src1 to the next (0: the same src1)
};
using binary_kernel_fn_t = void (*)(const binary_call_args_t *);

/// Loop nest of one call:
///   for each row: (src1_scalar: broadcast the row's src1 value)
///     while floats left >= ur * simd_w:  ur vectors: load src0, op src1, post-ops, store
///     while floats left >= simd_w:       the same for one vector
///     if floats left:                    one masked vector (len % simd_w lanes)
/// The element operation is one IEEE add or mul, and a sum post-op is scale * old (rounded)
/// then added, as the reference computes them, so without eltwise post-ops the results are the
/// reference's bits.
/// Registers:
///   rdi call_args_t*   rsi src0 row   r8 src1 row   rdx dst row   r9 rows left
///   r10 len   r11 src1 stride in bytes   rax byte offset in the row   rcx floats left in it
///   vector 0 .. ur-1: values; ur .. ur + ur*n_vtemps - 1: temporaries (src1's or old dst's
///   masked tail, the injector's); n_vregs_used - 2: the broadcast src1 value;
///   n_vregs_used - 1: the AVX2 tail mask. AVX-512: k1 tail mask, k7 injector.
/// No callee-saved register is used, so preamble() saves none.
template <isa level>
class jit_binary_fwd_kernel_t : public jit_generator_t {
public:
    explicit jit_binary_fwd_kernel_t(const binary_conf_t &c);

    const binary_conf_t &conf() const { return c_; }
    std::string conf_str() const override;
    /// "jit_binary_fwd_<alg>", with "_scalar" for one src1 value a row.
    static std::string kernel_name(const binary_conf_t &c);

private:
    void generate() override;
    void block(int n_vecs, bool tail); // n_vecs vectors of the row from offset rax

    const binary_conf_t c_;
};

} // namespace blockdnn::impl
