// SPDX-License-Identifier: Apache-2.0
// The forward convolution generator for the direct, first-layer and depthwise kinds (see
// jit_conv_fwd_kernel.hpp for the loop nest).
#include "ops/conv/jit_conv_fwd_kernel.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <utility>

#include "core/utils.hpp"
#include "jit/jit_eltwise_injector.hpp"

namespace blockdnn::impl {

using namespace Xbyak;

namespace {

// Pixels [first, second) of block b whose tap kw lies inside the row: a contiguous range.
std::pair<int, int> tap_pixels(const conv_conf_t &c, const conv_ow_block_t &b, int kw) {
    int j_lo = 0, j_hi = b.u;
    if (!b.interior) {
        auto iw_of = [&](int j) { return ((b.ow0 + j) % c.ow) * c.sw - c.pw + kw * (c.dw + 1); };
        while (j_lo < b.u && iw_of(j_lo) < 0) ++j_lo;
        while (j_hi > j_lo && iw_of(j_hi - 1) >= c.iw) --j_hi;
    }
    return {j_lo, j_hi};
}

} // namespace

std::vector<conv_ow_block_t> conv_ow_blocks(const conv_conf_t &c) {
    std::vector<conv_ow_block_t> v;
    const dim_t ext_kw = (c.kw - 1) * (c.dw + 1) + 1;
    const conv_ur_split_t split = conv_ur_split(c.oh_block * c.ow, c.ur_w, c.ur_balanced);
    dim_t ow0 = 0;
    for (dim_t i = 0; i < split.n_large + split.n_small; ++i) {
        const int u = i < split.n_large ? split.large : split.small;
        const dim_t iw_first = ow0 * c.sw - c.pw;
        const dim_t iw_last = (ow0 + u - 1) * c.sw - c.pw + ext_kw - 1;
        // Blocks of a multi-row call are not looped: their pixels' src steps are uneven.
        v.push_back({ow0, u, c.oh_block == 1 && iw_first >= 0 && iw_last < c.iw});
        ow0 += u;
    }
    return v;
}

dim_t conv_src_pixel_off(const conv_conf_t &c, dim_t p) {
    return (p / c.ow) * c.sh * c.src_h_stride() + (p % c.ow) * c.sw * c.src_w_stride();
}

int conv_post_ops_temps(const std::vector<post_op> &po, isa level) {
    int n = 0;
    for (const post_op &e : po) {
        if (e.what == post_op::kind::sum) n = std::max(n, e.scale == 1.f ? 0 : 1);
        else if (level == isa::avx512_core) n = std::max(n, jit_eltwise_injector_t<isa::avx512_core>::n_vtemps(e.alg));
        else n = std::max(n, jit_eltwise_injector_t<isa::avx2>::n_vtemps(e.alg));
    }
    return n;
}

template <isa level>
jit_conv_fwd_kernel_t<level>::jit_conv_fwd_kernel_t(const conv_conf_t &c)
    : jit_generator_t(cat("jit_conv_fwd_", to_string(c.kind)), level),
      c_(c), st_ {c.src_w_stride(), c.src_ic_stride(), c.wei_ocb_stride(), c.wei_kw_stride(), c.dst_c_stride(),
                     c.dst_w_stride()} {}

template <isa level>
std::string jit_conv_fwd_kernel_t<level>::conf_str() const {
    const int nv = nvec();
    return cat("conf: ", to_string(c_), "\n",
            "gpr: rdi=call_args rsi=src(block) rdx=dst(block) r8=src(icb) r9=wei(icb) ",
            "r10=src(kd) r11=wei(kd) r12=src(kh) r13=wei(kh) r14=icb_count r15=kd_count rbx=kh_count ",
            "rbp=ow_blocks rcx=src(ic group) rax=ic_groups/scratch; flags read from call_args\n",
            "vmm: acc[ur][v] = ", 0, "..", c_.ur_w * nv - 1, " (ur * ", nv, " + v), ",
            nvec_reg() ? cat("wei[v] = ", c_.ur_w * nv, "..", c_.ur_w * nv + nvec_reg() - 1,
                    c_.wei_mem_vecs ? cat(" (v < ", nvec_reg(), "; the FMAs read the others from memory)")
                                    : std::string(),
                    ", ")
                       : std::string("weights read by the FMAs from memory, "),
            "bcast = ", c_.ur_w * nv + nvec_reg(), "; post-op temporaries from ", c_.ur_w * nv,
            level == isa::avx512_core ? "\nopmask: k2 = oc tail, k7 = eltwise injector" : "",
            level == isa::avx2 && dst_masked()
                    ? cat("\noc-tail mask: ymm", c_.n_vregs - 1, " while dst is read or written")
                    : std::string(),
            "\n");
}

template <isa level>
std::vector<int> jit_conv_fwd_kernel_t<level>::temps() const {
    std::vector<int> t;
    for (int i = c_.ur_w * nvec(); i < c_.n_vregs; ++i) t.push_back(i);
    return t;
}

template <isa level>
int jit_conv_fwd_kernel_t<level>::dst_off(int ur, int v) const {
    const int ocb = v / c_.oc_vecs, h = v % c_.oc_vecs;
    return static_cast<int>((ocb * st_.dst_c + ur * st_.dst_w + h * c_.simd_w) * 4);
}

template <isa level>
int jit_conv_fwd_kernel_t<level>::wei_off(int kw, int ic, int v) const {
    const int ocb = v / c_.oc_vecs, h = v % c_.oc_vecs;
    return static_cast<int>((ocb * st_.wei_ocb + kw * st_.wei_kw + ic * c_.oc_block + h * c_.simd_w) * 4);
}

template <isa level>
std::vector<dim_t> jit_conv_fwd_kernel_t<level>::pixel_offs(const conv_ow_block_t &b) const {
    std::vector<dim_t> offs(static_cast<std::size_t>(b.u));
    const dim_t base = conv_src_pixel_off(c_, b.ow0);
    for (int j = 0; j < b.u; ++j) offs[static_cast<std::size_t>(j)] = conv_src_pixel_off(c_, b.ow0 + j) - base;
    return offs;
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::generate() {
    // Weights read by the FMAs take the place of weight registers beside a broadcast register
    // (init_conf gives them to whole groups of direct kernels only).
    if (c_.wei_mem_vecs && (!c_.can_read_wei_in_fmas() || c_.wei_mem_vecs > nvec()))
        throw std::logic_error(cat("conv: ", c_.wei_mem_vecs, " of ", nvec(), " weight vectors read by the FMAs in a ",
                to_string(c_.kind), " kernel", c_.bcast_embedded ? " with embedded broadcasts" : ""));
    preamble({reg_src, reg_dst, reg_icb_src, reg_icb_wei, reg_kd_src, reg_kd_wei, reg_kh_src, reg_kh_wei, reg_icb_cnt,
            reg_kd_cnt, reg_kh_cnt, reg_ow_cnt, reg_grp_src, reg_tmp});
    mov(reg_src, ptr[reg_args + offsetof(conv_fwd_call_args_t, src)]);
    mov(reg_dst, ptr[reg_args + offsetof(conv_fwd_call_args_t, dst)]);
    // Blocks address src relative to their first tap column, iw = ow0 * sw - pw.
    if (c_.pw) sub(reg_src, static_cast<int>(c_.pw * st_.src_w * 4));
    if constexpr (level == isa::avx512_core) {
        if (c_.oc_tail) {
            mov(reg_tmp.cvt32(), (1u << c_.oc_tail) - 1);
            kmovw(k2, reg_tmp.cvt32());
        }
    }

    const std::vector<conv_ow_block_t> blocks = conv_ow_blocks(c_);
    // Bytes reg_src / reg_dst are past their start, as far as generation knows.
    dim_t src_at = 0, dst_at = 0;
    auto move_to = [&](const conv_ow_block_t &b) {
        const dim_t s = conv_src_pixel_off(c_, b.ow0) * 4, d = b.ow0 * st_.dst_w * 4;
        if (s != src_at) add(reg_src, static_cast<int>(s - src_at));
        if (d != dst_at) add(reg_dst, static_cast<int>(d - dst_at));
        src_at = s;
        dst_at = d;
    };
    std::size_t i = 0;
    while (i < blocks.size()) {
        // A run of interior blocks of one size becomes one loop; everything else is emitted alone.
        std::size_t j = i;
        while (j < blocks.size() && blocks[j].interior && blocks[j].u == blocks[i].u) ++j;
        move_to(blocks[i]);
        if (j - i >= 2) {
            const int src_step = static_cast<int>(blocks[i].u * c_.sw * st_.src_w * 4);
            const int dst_step = static_cast<int>(blocks[i].u * st_.dst_w * 4);
            Label loop;
            mov(reg_ow_cnt, static_cast<int>(j - i));
            L(loop);
            block(blocks[i]);
            add(reg_src, src_step);
            add(reg_dst, dst_step);
            dec(reg_ow_cnt);
            jnz(loop, T_NEAR);
            src_at += static_cast<dim_t>(j - i) * src_step;
            dst_at += static_cast<dim_t>(j - i) * dst_step;
            i = j;
            continue;
        }
        block(blocks[i]);
        ++i;
    }
    postamble();
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::test_flags(dim_t bits) {
    test(qword[reg_args + offsetof(conv_fwd_call_args_t, flags)], static_cast<std::uint32_t>(bits));
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::block(const conv_ow_block_t &b) {
    init_acc(b.u);
    reduce(b);
    store(b.u);
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::dst_tail_split(const std::function<void(bool)> &body) {
    if (!dst_masked()) {
        body(false);
        return;
    }
    // AVX2 keeps the mask in the last register, which must not be the sum's temporary t[0]
    // (init_conf leaves at least two registers past the accumulators for such a dst on AVX2).
    if (level == isa::avx2 && temps().size() < 2)
        throw std::logic_error(cat("conv oc-tail mask: ", temps().size(), " free vector registers, need 2"));
    Label full, done;
    test_flags(conv_fwd_flag_oc_tail);
    jz(full, T_NEAR);
    if constexpr (level == isa::avx2) vmovups(Vmm(c_.n_vregs - 1), lane_mask(c_.oc_tail));
    body(true);
    jmp(done, T_NEAR);
    L(full);
    body(false);
    L(done);
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::load_dst(const Vmm &r, int ur, int v, bool tail) {
    if (!tail || v != nvec() - 1) {
        fast_vmovups(r, reg_dst, dst_off(ur, v));
        return;
    }
    const Address a = ptr[reg_dst + dst_off(ur, v)];
    if constexpr (level == isa::avx512_core) {
        vmovups(r | k2 | T_z, a);
    } else {
        vmaskmovps(r, Vmm(c_.n_vregs - 1), a);
    }
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::store_dst(int ur, int v, bool tail) {
    if (!tail || v != nvec() - 1) {
        fast_vmovups(reg_dst, dst_off(ur, v), vmm_acc(ur, v));
        return;
    }
    const Address a = ptr[reg_dst + dst_off(ur, v)];
    if constexpr (level == isa::avx512_core) {
        vmovups(a | k2, vmm_acc(ur, v));
    } else {
        vmaskmovps(a, Vmm(c_.n_vregs - 1), vmm_acc(ur, v));
    }
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::init_acc(int u) {
    Label load, done;
    test_flags(conv_fwd_flag_first);
    jz(load, T_NEAR);
    for (int ur = 0; ur < u; ++ur)
        for (int v = 0; v < nvec(); ++v) vxorps(vmm_acc(ur, v), vmm_acc(ur, v), vmm_acc(ur, v));
    jmp(done, T_NEAR);
    L(load);
    dst_tail_split([&](bool tail) {
        for (int ur = 0; ur < u; ++ur)
            for (int v = 0; v < nvec(); ++v) load_dst(vmm_acc(ur, v), ur, v, tail);
    });
    L(done);
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::reduce(const conv_ow_block_t &b) {
    Label icb_loop, icb_done;
    mov(reg_icb_src, reg_src);
    mov(reg_icb_wei, ptr[reg_args + offsetof(conv_fwd_call_args_t, wei)]);
    mov(reg_icb_cnt, ptr[reg_args + offsetof(conv_fwd_call_args_t, icb_full)]);
    test(reg_icb_cnt, reg_icb_cnt);
    jz(icb_done, T_NEAR);
    L(icb_loop);
    kd_kh_loops(b, c_.ic_block);
    add(reg_icb_src, static_cast<int>(c_.src_c_stride() * 4));
    add(reg_icb_wei, static_cast<int>(c_.wei_icb_stride() * 4));
    dec(reg_icb_cnt);
    jnz(icb_loop, T_NEAR);
    L(icb_done);
    if (c_.ic_tail) {
        Label no_tail;
        test_flags(conv_fwd_flag_ic_tail);
        jz(no_tail, T_NEAR);
        kd_kh_loops(b, c_.ic_tail);
        L(no_tail);
    }
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::kd_kh_loops(const conv_ow_block_t &b, int n_ic) {
    const bool with_kd = c_.is_3d();
    Label kd_loop, kd_done, kh_loop, kh_done;
    if (with_kd) {
        mov(reg_kd_src, reg_icb_src);
        mov(reg_kd_wei, reg_icb_wei);
        mov(reg_kd_cnt, ptr[reg_args + offsetof(conv_fwd_call_args_t, kd_count)]);
        test(reg_kd_cnt, reg_kd_cnt);
        jz(kd_done, T_NEAR);
        L(kd_loop);
    }
    mov(reg_kh_src, with_kd ? reg_kd_src : reg_icb_src);
    mov(reg_kh_wei, with_kd ? reg_kd_wei : reg_icb_wei);
    mov(reg_kh_cnt, ptr[reg_args + offsetof(conv_fwd_call_args_t, kh_count)]);
    test(reg_kh_cnt, reg_kh_cnt);
    jz(kh_done, T_NEAR);
    L(kh_loop);
    taps(b, n_ic);
    add(reg_kh_src, static_cast<int>((c_.dh + 1) * c_.src_h_stride() * 4));
    add(reg_kh_wei, static_cast<int>(c_.wei_kh_stride() * 4));
    dec(reg_kh_cnt);
    jnz(kh_loop, T_NEAR);
    L(kh_done);
    if (with_kd) {
        add(reg_kd_src, static_cast<int>((c_.dd + 1) * c_.src_d_stride() * 4));
        add(reg_kd_wei, static_cast<int>(c_.wei_kd_stride() * 4));
        dec(reg_kd_cnt);
        jnz(kd_loop, T_NEAR);
        L(kd_done);
    }
}

template <isa level>
std::vector<int> jit_conv_fwd_kernel_t<level>::prefetch_lines(const conv_ow_block_t &b) const {
    // 64-byte lines (relative to the block's src pointer) holding any tap of the block, plus
    // one past each run of lines, as the pointer need not be line aligned.
    std::vector<dim_t> elems; // byte offsets of the first and last float of each src piece
    const std::vector<dim_t> pix = pixel_offs(b);
    const bool dw = c_.kind == conv_kernel_kind::depthwise;
    const int n_pieces = dw ? c_.nb_oc_blocking : c_.src_plain() ? static_cast<int>(c_.icg) : 1;
    const dim_t piece_stride = dw ? c_.src_c_stride() : st_.src_ic;
    const dim_t piece_len = c_.src_plain() ? 1 : c_.ic_block;
    for (int j = 0; j < b.u; ++j)
        for (int kw = 0; kw < c_.kw; ++kw)
            for (int k = 0; k < n_pieces; ++k) {
                const dim_t f =
                        (pix[static_cast<std::size_t>(j)] + kw * (c_.dw + 1) * st_.src_w + k * piece_stride) * 4;
                elems.push_back(f / 64);
                elems.push_back((f + piece_len * 4 - 1) / 64);
            }
    std::sort(elems.begin(), elems.end());
    elems.erase(std::unique(elems.begin(), elems.end()), elems.end());
    std::vector<int> lines;
    for (std::size_t i = 0; i < elems.size(); ++i) {
        lines.push_back(static_cast<int>(elems[i] * 64));
        if (i + 1 == elems.size() || elems[i + 1] != elems[i] + 1)
            lines.push_back(static_cast<int>((elems[i] + 1) * 64));
    }
    return lines;
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::load_weights(int kw, int ic) {
    for (int v = 0; v < nvec_reg(); ++v) fast_vmovups(vmm_wei(v), reg_kh_wei, wei_off(kw, ic, v));
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::fma_bcast(int j, int kw, int ic) {
    // A weight from memory is the FMA's third operand: the product is the same either way round.
    for (int v = 0; v < nvec(); ++v) {
        if (v < nvec_reg()) fast_vfmadd231ps(vmm_acc(j, v), vmm_wei(v), vmm_bcast());
        else vfmadd231ps(vmm_acc(j, v), vmm_bcast(), ptr[reg_kh_wei + wei_off(kw, ic, v)]);
    }
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::taps(const conv_ow_block_t &b, int n_ic) {
    if (const int grp = ic_group(b, n_ic)) {
        taps_rolled(b, n_ic, grp);
        return;
    }
    const int nv = nvec();
    const std::vector<dim_t> pix = pixel_offs(b);
    int first_kw = -1;
    for (int kw = 0; kw < c_.kw; ++kw) {
        const auto [j_lo, j_hi] = tap_pixels(c_, b, kw);
        if (j_lo >= j_hi) continue;
        if (first_kw < 0) first_kw = kw;
        // The prefetches of this kh row go with the first tap column, spread over its ic steps.
        std::vector<int> pf;
        if (c_.src_prefetch_dist && kw == first_kw) pf = prefetch_lines(b);
        std::size_t pf_next = 0;
        if (c_.kind == conv_kernel_kind::depthwise) {
            taps_dw(pix, kw, j_lo, j_hi, pf);
            continue;
        }
        for (int ic = 0; ic < n_ic; ++ic) {
            for (; pf_next < pf.size() * (ic + 1) / n_ic; ++pf_next)
                droppable_prefetcht1(ptr[reg_kh_src + static_cast<int>(c_.src_prefetch_dist + pf[pf_next])]);
            load_weights(kw, ic);
            const dim_t tap = kw * (c_.dw + 1) * st_.src_w + ic * st_.src_ic;
            for (int j = j_lo; j < j_hi; ++j) {
                const int src_off = static_cast<int>((pix[static_cast<std::size_t>(j)] + tap) * 4);
                if constexpr (level == isa::avx512_core) {
                    if (c_.bcast_embedded) {
                        for (int v = 0; v < nv; ++v)
                            vfmadd231ps(vmm_acc(j, v), vmm_wei(v), ptr_b[reg_kh_src + src_off]);
                        continue;
                    }
                }
                fast_vbroadcastss(vmm_bcast(), reg_kh_src, src_off);
                fma_bcast(j, kw, ic);
            }
        }
    }
}

template <isa level>
int jit_conv_fwd_kernel_t<level>::ic_group(const conv_ow_block_t &b, int n_ic) const {
    // The direct kernel's channels have one stride in src and in the weights, so a group of
    // them is the same code at moved pointers. Fully unrolled, a 3x3 block is 16 ic x 3 kw x
    // ur_w pixels of FMAs, and generation time grows with the code's size; a loop over groups
    // of 4 ic cuts the code 4-fold. The first layer's plain src and depthwise have no ic loop
    // to roll.
    // AVX2 stays unrolled: its 3x3 layers run near the FMA peak, and every form of the loop
    // tried (pointers moved or the counter as an index, one loop per kh row or per tap column,
    // aligned or not, groups of 2 or 4 ic) made the large-ic layers slower, while one-iteration
    // loops did not (docs/tuning.md, "Conv creation time", has the figures).
    if (level != isa::avx512_core || c_.kind != conv_kernel_kind::direct || c_.src_plain()) return 0;
    int grp = 0;
    for (int g : {4, 2})
        if (n_ic % g == 0 && n_ic / g >= 2) {
            grp = g;
            break;
        }
    if (!grp || !c_.src_prefetch_dist) return grp;
    return prefetch_split(b, n_ic / grp).per_group ? grp : 0;
}

template <isa level>
typename jit_conv_fwd_kernel_t<level>::pf_split_t jit_conv_fwd_kernel_t<level>::prefetch_split(
        const conv_ow_block_t &b, int n_groups) const {
    // Each group prefetches its share of the lines through the group counter (taps_rolled),
    // so the shares must be one set of lines moved by a fixed step: the lines repeat with a
    // period that divides the share, as one run (a blocked src row) or runs evenly spaced (a
    // channels-last row's pieces) do. The last share may run past the lines of one run: those
    // prefetches fetch the next lines, and fault on nothing. Spaced runs must split exactly:
    // a channels-last pixel past the block can be a page further (ic 1024: 4 KiB), and such
    // extra prefetches slowed the large-ic layers (docs/tuning.md).
    pf_split_t r;
    r.lines = prefetch_lines(b);
    const int n = static_cast<int>(r.lines.size());
    for (int m = static_cast<int>(div_up(n, n_groups)); m < n; ++m) {
        const int step = r.lines[static_cast<std::size_t>(m)] - r.lines[0];
        bool even = true;
        for (int i = 0; i + m < n && even; ++i)
            even = r.lines[static_cast<std::size_t>(i + m)] - r.lines[static_cast<std::size_t>(i)] == step;
        if (even && (m * n_groups == n || step == 64 * m)) {
            r.per_group = m;
            r.step = step;
            return r;
        }
    }
    return r;
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::taps_rolled(const conv_ow_block_t &b, int n_ic, int grp) {
    // One loop over the ic groups per tap column, so that the weights are read in the order
    // they lie (kw, then ic), one stream, as the unrolled taps read them: with the kw loop
    // inside the group loop, the layers whose weights stream from L2 (ic 256 and up) ran
    // slower. reg_grp_src and reg_kh_wei move by a group each iteration.
    const int nv = nvec();
    const int n_groups = n_ic / grp;
    const std::vector<dim_t> pix = pixel_offs(b);
    auto src_off = [&](int kw, int ic, int j) {
        return (pix[static_cast<std::size_t>(j)] + kw * (c_.dw + 1) * st_.src_w + ic * st_.src_ic) * 4;
    };
    const int src_step = static_cast<int>(grp * st_.src_ic * 4);
    const int wei_step = static_cast<int>(grp * c_.oc_block * 4);
    // Prefetches: the block's lines of the next rows, m per group (prefetch_split), in the
    // first column's loop. reg_tmp counts down from n_groups * the split's step, so group g
    // fetches lines [(n_groups - 1 - g) * m, + m): every line once.
    pf_split_t pf;
    if (c_.src_prefetch_dist) pf = prefetch_split(b, n_groups);
    bool first_col = true;
    for (int kw = 0; kw < c_.kw; ++kw) {
        const auto [j_lo, j_hi] = tap_pixels(c_, b, kw);
        if (j_lo >= j_hi) continue;
        const int m = first_col ? pf.per_group : 0;
        first_col = false;
        // src is addressed from the middle of the column's offsets, so that they fit an 8-bit
        // displacement (EVEX scales it by the 4-byte broadcast: +-512 bytes) where offsets
        // from the column's start would need 32 bits.
        const dim_t src_bias = (src_off(kw, 0, j_lo) + src_off(kw, grp - 1, j_hi - 1)) / 2 / 4 * 4;
        const int cnt_step = m ? pf.step : 1;
        mov(reg_tmp, n_groups * cnt_step);
        lea(reg_grp_src, ptr[reg_kh_src + static_cast<int>(src_bias)]);
        Label loop;
        L(loop);
        int pf_next = 0;
        for (int ic = 0; ic < grp; ++ic) {
            for (; pf_next < m * (ic + 1) / grp; ++pf_next)
                droppable_prefetcht1(ptr[reg_kh_src + reg_tmp
                        + static_cast<int>(
                                c_.src_prefetch_dist + pf.lines[static_cast<std::size_t>(pf_next)] - pf.step)]);
            load_weights(kw, ic);
            for (int j = j_lo; j < j_hi; ++j) {
                const int off = static_cast<int>(src_off(kw, ic, j) - src_bias);
                if constexpr (level == isa::avx512_core) {
                    if (c_.bcast_embedded) {
                        for (int v = 0; v < nv; ++v) vfmadd231ps(vmm_acc(j, v), vmm_wei(v), ptr_b[reg_grp_src + off]);
                        continue;
                    }
                }
                vbroadcastss(vmm_bcast(), ptr[reg_grp_src + off]);
                fma_bcast(j, kw, ic);
            }
        }
        add(reg_grp_src, src_step);
        add(reg_kh_wei, wei_step);
        sub(reg_tmp, cnt_step);
        jnz(loop, T_NEAR);
        sub(reg_kh_wei, n_groups * wei_step);
    }
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::taps_dw(
        const std::vector<dim_t> &pix, int kw, int j_lo, int j_hi, const std::vector<int> &pf) {
    // Channels are lanes: weights are one vector per channel block and tap, src is read as
    // whole vectors straight into the FMAs.
    const int nv = nvec();
    for (int v = 0; v < nv; ++v) {
        const int cb = v / c_.oc_vecs, h = v % c_.oc_vecs;
        const int off = static_cast<int>((cb * st_.wei_ocb + kw * st_.wei_kw + h * c_.simd_w) * 4);
        vmovups(vmm_wei(v), ptr[reg_kh_wei + off]);
    }
    const dim_t src_c = c_.src_c_stride();
    std::size_t pf_next = 0;
    for (int j = j_lo; j < j_hi; ++j) {
        for (; pf_next < pf.size() * (j - j_lo + 1) / (j_hi - j_lo); ++pf_next)
            droppable_prefetcht1(ptr[reg_kh_src + static_cast<int>(c_.src_prefetch_dist + pf[pf_next])]);
        const dim_t tap = pix[static_cast<std::size_t>(j)] + kw * (c_.dw + 1) * st_.src_w;
        for (int v = 0; v < nv; ++v) {
            const int cb = v / c_.oc_vecs, h = v % c_.oc_vecs;
            const int off = static_cast<int>((tap + cb * src_c + h * c_.simd_w) * 4);
            vfmadd231ps(vmm_acc(j, v), vmm_wei(v), ptr[reg_kh_src + off]);
        }
    }
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::store(int u) {
    Label plain, done;
    test_flags(conv_fwd_flag_last);
    jz(plain, T_NEAR);
    finish_last(u);
    jmp(done, T_NEAR);
    L(plain);
    dst_tail_split([&](bool tail) {
        for (int ur = 0; ur < u; ++ur)
            for (int v = 0; v < nvec(); ++v) store_dst(ur, v, tail);
    });
    L(done);
}

template <isa level>
Xbyak::Address jit_conv_fwd_kernel_t<level>::lane_mask(int n) {
    std::uint32_t lanes[16];
    for (int i = 0; i < 16; ++i) lanes[i] = i < n ? 0xffffffffu : 0u;
    return pool_data(lanes, sizeof(lanes));
}

template <isa level>
void jit_conv_fwd_kernel_t<level>::finish_last(int u) {
    const int nv = nvec();
    std::vector<int> accs;
    for (int ur = 0; ur < u; ++ur)
        for (int v = 0; v < nv; ++v) accs.push_back(vmm_acc(ur, v).getIdx());
    const std::vector<int> t = temps();
    if (c_.with_bias) {
        mov(reg_tmp, ptr[reg_args + offsetof(conv_fwd_call_args_t, bia)]);
        for (int v = 0; v < nv; ++v) {
            const int off = static_cast<int>(((v / c_.oc_vecs) * c_.oc_block + (v % c_.oc_vecs) * c_.simd_w) * 4);
            for (int ur = 0; ur < u; ++ur) vaddps(vmm_acc(ur, v), vmm_acc(ur, v), ptr[reg_tmp + off]);
        }
    }
    for (const post_op &e : c_.post_ops) {
        if (e.what == post_op::kind::eltwise) {
            // The injector works on as many accumulators at once as the free registers allow.
            const int nt = jit_eltwise_injector_t<level>::n_vtemps(e.alg);
            const int per = std::max<int>(1, static_cast<int>(t.size()) / nt);
            jit_eltwise_injector_t<level> inj(*this, e.alg, e.alpha, e.beta, t.front(), static_cast<int>(t.size()));
            for (std::size_t a = 0; a < accs.size(); a += static_cast<std::size_t>(per))
                inj.compute(std::vector<int>(accs.begin() + static_cast<std::ptrdiff_t>(a),
                        accs.begin()
                                + static_cast<std::ptrdiff_t>(
                                        std::min(accs.size(), a + static_cast<std::size_t>(per)))));
            continue;
        }
        // sum: r + scale * dst_old, rounded as the reference rounds it (product, then sum).
        const Vmm tmp(t.at(0));
        dst_tail_split([&](bool tail) {
            for (int ur = 0; ur < u; ++ur)
                for (int v = 0; v < nv; ++v) {
                    if (e.scale == 1.f && !(tail && v == nv - 1)) {
                        vaddps(vmm_acc(ur, v), vmm_acc(ur, v), ptr[reg_dst + dst_off(ur, v)]);
                        continue;
                    }
                    load_dst(tmp, ur, v, tail);
                    if (e.scale != 1.f) vmulps(tmp, tmp, vconst(e.scale));
                    vaddps(vmm_acc(ur, v), vmm_acc(ur, v), tmp);
                }
        });
    }
    if (c_.oc_tail) {
        // Padded channels of the partial block stay zero whatever bias and post-ops made them.
        Label full;
        test_flags(conv_fwd_flag_oc_tail);
        jz(full, T_NEAR);
        const int last_ocb = c_.nb_oc_blocking - 1;
        for (int h = 0; h < c_.oc_vecs; ++h) {
            const int v = last_ocb * c_.oc_vecs + h;
            const int lanes = std::clamp(c_.oc_tail - h * c_.simd_w, 0, c_.simd_w);
            if (lanes == c_.simd_w) continue;
            for (int ur = 0; ur < u; ++ur) {
                const Vmm a = vmm_acc(ur, v);
                if constexpr (level == isa::avx512_core) {
                    vmovups(a | k2 | T_z, a);
                } else {
                    if (lanes == 0) vxorps(a, a, a);
                    else vandps(a, a, lane_mask(lanes));
                }
            }
        }
        L(full);
    }
    dst_tail_split([&](bool tail) {
        for (int ur = 0; ur < u; ++ur)
            for (int v = 0; v < nv; ++v) store_dst(ur, v, tail);
    });
}

template class jit_conv_fwd_kernel_t<isa::avx2>;
template class jit_conv_fwd_kernel_t<isa::avx512_core>;

} // namespace blockdnn::impl
