// SPDX-License-Identifier: Apache-2.0
// The standalone eltwise kernel: dst[k] = f(src[k]) over n contiguous floats, f applied by
// the eltwise injector. The driver (src/ops/eltwise/eltwise_jit.cpp) splits tensors into calls.
#pragma once

#include <cstdint>
#include <string>

#include "ops/eltwise/eltwise_conf.hpp"
#include "jit/jit_generator.hpp"

namespace blockdnn::impl {

/// Arguments of one call, read by the kernel through offsetof. src == dst is allowed.
/// With conf.stream_stores, dst must be aligned to the vector length (64 bytes on AVX-512,
/// 32 on AVX2).
struct eltwise_call_args_t {
    const float *src;
    float *dst;
    std::int64_t n; // floats to process, >= 0
};
using eltwise_kernel_fn_t = void (*)(const eltwise_call_args_t *);

/// Loop nest of one call (n = args->n):
///   while n >= ur * simd_w:  load ur vectors; f on all ur; store ur (vmovntps if stream_stores)
///   while n >= simd_w:       the same for one vector
///   if n > 0:                one masked vector (opmask on AVX-512, vmaskmovps on AVX2)
/// Registers:
///   rdi  call_args_t*          rsi  src (advances)     rdx  dst (advances)
///   rcx  n, floats remaining   rax  scratch (tail mask bits / mask table address)
///   vector 0 .. ur-1: values; ur .. ur + ur*n_vtemps - 1: injector temporaries;
///   AVX2: conf.tail_mask_vreg holds the tail mask in the masked tail (a register the
///   one-value tail leaves free). AVX-512: k1 tail mask, k7 injector.
/// No callee-saved register is used, so preamble() saves none.
template <isa level>
class jit_eltwise_fwd_kernel_t : public jit_generator_t {
public:
    explicit jit_eltwise_fwd_kernel_t(const eltwise_conf_t &c);

    const eltwise_conf_t &conf() const { return c_; }
    std::string conf_str() const override;
    /// "jit_eltwise_fwd_<alg>", with "_nt" for streaming stores.
    static std::string kernel_name(const eltwise_conf_t &c);

private:
    void generate() override;
    void block(int n_vecs, bool tail); // load, f, store n_vecs vectors (tail: 1 masked vector)

    const eltwise_conf_t c_;
};

} // namespace blockdnn::impl
