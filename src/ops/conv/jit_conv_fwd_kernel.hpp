// SPDX-License-Identifier: Apache-2.0
// Forward convolution, f32, dst nC[d]hw16c (AVX-512) or nC[d]hw8c / nC[d]hw16c (AVX2), or
// channels-last n[d]hwc taken a vector of channels at a time, from one generator for three kinds:
// - direct: src blocked like dst (or both channels-last), weights [g]OI[d]hw16i16o / 8i8o;
// - first: plain nc[d]hw src with at most one block of channels (a network's first layer),
//   weights OI[d]hw16i16o with the input channels padded;
// - depthwise: g = ic = oc, src blocked like dst (or both channels-last with g a multiple of
//   the vector), weights Goi[d]hw16g / 8g; channels are lanes, so there is no ic loop and src
//   is read as whole vectors.
// One call computes one output row (oh_block rows for 1x1) of nb_oc_blocking oc blocks,
// reduced over an ic chunk x kd x kh x kw. Loop nest (the driver in
// src/ops/conv/conv_jit.cpp owns mb, groups, oc blocks, rows and the kd/kh ranges):
//   for ow block (border blocks unrolled with their valid taps, interior blocks looped):
//     acc[ur_w][nb_oc_blocking * oc_vecs] = first ? 0 : dst
//     for icb in chunk: for kd in [kd_lo, kd_hi): for kh in [kh_lo, kh_hi):
//       for kw (unrolled): for ic in block (unrolled; the AVX-512 direct kernel loops over
//       groups of 4 or 2 ic instead, unrolled inside a group: see ic_group):
//         wei[v] = weights(ocb, icb, kd, kh, kw, ic, v)             (vector loads; the last
//                                                                     wei_mem_vecs are read by
//                                                                     the FMAs instead)
//         for ur: acc[ur][v] += bcast(src(ow + ur, kw, ic)) * wei[v]
//     last ? store(post_ops(acc + bias)) : store(acc)
// A channels-last dst whose last block is partial has no padding to write: in calls with the
// oc-tail flag the last vector is loaded and stored through a mask of the oc_tail channels.
#pragma once

#include <functional>
#include <type_traits>
#include <vector>

#include "ops/conv/conv_conf.hpp"
#include "jit/isa_traits.hpp"
#include "jit/jit_generator.hpp"

namespace blockdnn::impl {

/// Runtime arguments of one call. POD, read by the kernel through offsetof.
struct conv_fwd_call_args_t {
    const float *src; ///< src at (n, first ic block of the chunk, first valid kd, kh tap row, iw = 0)
    const float *wei; ///< weights at (g, first oc block, first ic block of the chunk, kd_lo, kh_lo)
    const float *bia; ///< bias at the first oc of the call, padded to whole blocks; null if none
    float *dst;       ///< dst at (n, first oc block, od, oh, ow = 0)
    dim_t kd_count;   ///< kd taps inside the image for this od (may be 0)
    dim_t kh_count;   ///< kh taps inside the image for this oh (may be 0)
    dim_t icb_full;   ///< full ic blocks in this call's chunk
    dim_t flags;      ///< conv_fwd_flag_* bits
};

/// flags: first chunk of the reduction (accumulators start at zero, else at dst's partial sums).
constexpr dim_t conv_fwd_flag_first = 1;
/// Last chunk: add bias, apply post-ops, zero padded oc lanes, store.
constexpr dim_t conv_fwd_flag_last = 2;
/// The chunk ends with the partial ic block (ic_tail channels).
constexpr dim_t conv_fwd_flag_ic_tail = 4;
/// The call's last oc block is the partial one (oc_tail channels).
constexpr dim_t conv_fwd_flag_oc_tail = 8;

/// One register block of an output row: ow0 .. ow0 + u - 1. Interior blocks have every tap
/// inside the image; the others skip the taps that fall into the padding.
struct conv_ow_block_t {
    dim_t ow0;
    int u;
    bool interior;
};

/// The blocks of a call's oh_block * ow pixels for conf c, in order.
std::vector<conv_ow_block_t> conv_ow_blocks(const conv_conf_t &c);

/// Floats from a call's src pointer to the first tap of its pixel p (p < oh_block * ow).
dim_t conv_src_pixel_off(const conv_conf_t &c, dim_t p);

template <isa level>
class jit_conv_fwd_kernel_t : public jit_generator_t {
public:
    using Vmm = typename isa_traits_t<level>::Vmm;
    using fn_t = void (*)(const conv_fwd_call_args_t *);

    explicit jit_conv_fwd_kernel_t(const conv_conf_t &c);

    std::string conf_str() const override;

private:
    // General-purpose registers, one owner each.
    const Xbyak::Reg64 reg_args = abi_param1; // conv_fwd_call_args_t*
    const Xbyak::Reg64 reg_src = rsi;         // src at the current block's first tap column
    const Xbyak::Reg64 reg_dst = rdx;         // dst at the current block's first pixel
    const Xbyak::Reg64 reg_icb_src = r8;      // src at the current ic block
    const Xbyak::Reg64 reg_icb_wei = r9;      // weights at the current ic block
    const Xbyak::Reg64 reg_kd_src = r10;      // src at the current kd tap
    const Xbyak::Reg64 reg_kd_wei = r11;      // weights at the current kd tap
    const Xbyak::Reg64 reg_kh_src = r12;      // src at the current kh tap
    const Xbyak::Reg64 reg_kh_wei = r13;      // weights at the current kh tap
    const Xbyak::Reg64 reg_icb_cnt = r14;     // ic blocks left
    const Xbyak::Reg64 reg_kd_cnt = r15;      // kd taps left
    const Xbyak::Reg64 reg_kh_cnt = rbx;      // kh taps left
    const Xbyak::Reg64 reg_ow_cnt = rbp;      // interior blocks left
    const Xbyak::Reg64 reg_grp_src = rcx;     // src at the current ic group, less src_bias
    const Xbyak::Reg64 reg_tmp = rax;         // ic groups left (times the prefetch step), bias pointer, mask bits

    // Vector registers: [0, ur_w * nvec) accumulators, then the weights held in registers (all
    // but the last wei_mem_vecs, which the FMAs read from memory), then the broadcast register.
    // At store time everything from ur_w * nvec up is free for post-op temporaries.
    // Opmasks: k2 holds the oc tail (AVX-512); the eltwise injector may clobber k7. AVX2 loads
    // the oc-tail mask of a channels-last dst into the last register each time it reads or
    // writes dst: no weight or broadcast is live then, and of the post-op temporaries only the
    // sum's t[0], which is another register: init_conf leaves two past the accumulators there
    // (dst_tail_split checks).
    int nvec() const { return c_.nb_oc_blocking * c_.oc_vecs; }
    Vmm vmm_acc(int ur, int v) const { return Vmm(ur * nvec() + v); }
    int nvec_reg() const { return nvec() - c_.wei_mem_vecs; } // weight vectors held in registers
    Vmm vmm_wei(int v) const { return Vmm(c_.ur_w * nvec() + v); }
    Vmm vmm_bcast() const { return Vmm(c_.ur_w * nvec() + nvec_reg()); }
    /// Loads the weight vectors held in registers for tap kw and channel ic of the step.
    void load_weights(int kw, int ic);
    /// acc[j][v] += broadcast * weight v for every vector v of tap kw and channel ic, the last
    /// wei_mem_vecs read from memory by the FMAs.
    void fma_bcast(int j, int kw, int ic);
    std::vector<int> temps() const;

    void generate() override;
    void block(const conv_ow_block_t &b);
    void init_acc(int u);
    void reduce(const conv_ow_block_t &b);
    void kd_kh_loops(const conv_ow_block_t &b, int n_ic);
    void taps(const conv_ow_block_t &b, int n_ic);
    /// Input channels per iteration of the ic group loop of a block's taps, or 0 when they are
    /// unrolled (see taps_rolled).
    int ic_group(const conv_ow_block_t &b, int n_ic) const;
    void taps_rolled(const conv_ow_block_t &b, int n_ic, int grp);
    /// Tests flag bits of the call (they stay in memory: their register holds reg_grp_src).
    void test_flags(dim_t bits);
    /// pix: pixel_offs(b).
    void taps_dw(const std::vector<dim_t> &pix, int kw, int j_lo, int j_hi, const std::vector<int> &pf);
    std::vector<int> prefetch_lines(const conv_ow_block_t &b) const;
    /// How the loop over n_groups ic groups splits a block's prefetch lines: group g fetches
    /// lines[k] + (n_groups - 1 - g) * step, k < per_group. per_group = 0: no split exists.
    struct pf_split_t {
        std::vector<int> lines;
        int per_group = 0;
        int step = 0;
    };
    pf_split_t prefetch_split(const conv_ow_block_t &b, int n_groups) const;
    void store(int u);
    void finish_last(int u);
    Xbyak::Address lane_mask(int n); // pool entry: n lanes of ones, then zeros
    // dst access of a channels-last dst with a partial last block (see the file comment).
    bool dst_masked() const { return c_.act_nxc() && c_.oc_tail; }
    /// Emits body(false); for a masked dst, a branch on the oc-tail flag between body(true) and
    /// body(false). body(true) uses load_dst / store_dst with tail = true.
    void dst_tail_split(const std::function<void(bool)> &body);
    /// dst vector (ur, v) into r / acc (ur, v) into dst, masked if `tail` and v is the last vector.
    void load_dst(const Vmm &r, int ur, int v, bool tail);
    void store_dst(int ur, int v, bool tail);

    // Byte offsets inside the block.
    int dst_off(int ur, int v) const;
    int wei_off(int kw, int ic, int v) const;
    /// Floats from pixel 0's src to pixel j's, at the same tap, for each j < b.u of block b.
    std::vector<dim_t> pixel_offs(const conv_ow_block_t &b) const;

    const conv_conf_t c_;
    // The conf's strides (floats) that the src, weight and dst offsets read, worked out once:
    // they are out-of-line calls on the conf, some of them chains, and generation asks for them
    // per instruction.
    struct strides_t {
        dim_t src_w, src_ic, wei_ocb, wei_kw, dst_c, dst_w;
    };
    const strides_t st_;
};

/// Vector temporaries the post-op chain needs at store time on `level`: the most any entry
/// needs for one accumulator (the eltwise injector's n_vtemps; 1 for a scaled sum).
int conv_post_ops_temps(const std::vector<post_op> &po, isa level);

} // namespace blockdnn::impl
