// SPDX-License-Identifier: Apache-2.0
// The JIT softmax kernel: the stable softmax (max, exp(x - max) and its sum, a scale by 1/sum)
// of the lines of one call, exp by the eltwise injector. The driver
// (src/ops/softmax/softmax_jit.cpp) splits a tensor into calls.
#pragma once

#include <cstdint>
#include <string>

#include "jit/jit_generator.hpp"
#include "ops/softmax/softmax_conf.hpp"

namespace blockdnn::impl {

/// Arguments of one call, read by the kernel through offsetof. src == dst is allowed.
struct softmax_call_args_t {
    const float *src;
    float *dst;
    std::int64_t len;    // elements of a line (the axis), >= 1
    std::int64_t stride; // lanes mode: floats between a line's consecutive elements
    std::int64_t n;      // lines mode: lines, each len floats after the last; lanes mode: lanes
};
using softmax_kernel_fn_t = void (*)(const softmax_call_args_t *);

/// Three passes over each line (or each group of lane-lines): m = max(x); e = exp(x - m), stored
/// to dst and summed (Kahan's compensated sum, kahan_add); dst = e * (1 / sum). Sums and maxima
/// are in float.
///
/// lines mode, per line: the passes run ur vectors at a time along the line, then one vector,
/// then a masked tail of len % simd_w; the ur accumulators are combined, then their lanes. A
/// line of at most ur_resident vectors is loaded once and kept in registers through the three
/// steps (its last vector masked), which saves the short lines two passes over memory; as
/// many such lines as ur_resident vectors hold go side by side (registers in
/// lines_in_registers_step).
///   rdi call_args_t*   rsi src line   rdx dst line   r8 len   r9 lines left
///   r10, r11 pass pointers   rcx floats left in the pass   rax scratch
///   vectors [0, ur) accumulators; [ur, 2 ur) values; then the injector's temporaries; then
///   ur compensations of the sums.
/// lanes mode: vectors of ur, then 1, then a masked tail of n % simd_w lanes; each lane is a
/// line of len elements `stride` floats apart, so no lane crosses into another.
///   rdi call_args_t*   rsi src lanes   rdx dst lanes   r8 len   r9 stride in bytes
///   rcx lanes left   r10, r11 pass pointers   rax elements left in the pass
///   vectors [0, ur) maxima; [ur, 2 ur) sums, then 1 / sum; [2 ur, 3 ur) values; then the
///   injector's temporaries; then ur compensations of the sums.
/// Both: vector n_vregs_used - 2 holds a constant (-inf, the line's max, 1 / sum); vector
/// n_vregs_used - 1 the AVX2 tail mask. AVX-512: k1 tail mask, k7 injector.
/// No callee-saved register is used, so preamble() saves none.
template <isa level>
class jit_softmax_fwd_kernel_t : public jit_generator_t {
public:
    explicit jit_softmax_fwd_kernel_t(const softmax_conf_t &c);

    const softmax_conf_t &conf() const { return c_; }
    std::string conf_str() const override;
    /// "jit_softmax_fwd_lines" or "jit_softmax_fwd_lanes".
    static std::string kernel_name(const softmax_conf_t &c);

private:
    void generate() override;
    void generate_lines();
    void generate_lanes();
    void lines_in_registers(int n_vecs);                   // lines of (n_vecs - 1) * simd_w < len <= n_vecs * simd_w
    void lines_in_registers_step(int n_vecs, int n_lines); // n_lines such lines side by side
    void lanes_group(int n_vecs, bool tail);               // the three passes over n_vecs vectors of lane-lines
    // The tail mask of count % simd_w lanes, or with full_if_even of ((count - 1) % simd_w) + 1.
    void tail_mask_of(const Xbyak::Reg64 &count, bool full_if_even);
    void reduce_lanes(int v, int t, bool max); // every lane of vector v = max / sum of its lanes
    // sum += v by Kahan's compensated summation (comp carries what the adds lost, negated; y
    // and t are temporaries): the sum's error then stays near one rounding whatever the count
    // of terms, where a plain float sum drops terms below half an ulp of it.
    void kahan_add(int sum, int comp, int v, int y, int t);

    const softmax_conf_t c_;
};

} // namespace blockdnn::impl
