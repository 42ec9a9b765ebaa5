// SPDX-License-Identifier: Apache-2.0
// Helpers of the JIT convolution tests: seeded random problems for each kernel kind, and
// runners that check a JIT convolution (the driver itself, or conv_fwd under an ISA cap)
// against the library's reference (conv_fwd capped at scalar) on small-integer data, which
// keeps every f32 sum exact.
#pragma once

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "tensor/op_check.hpp"
#include "core/prb_parse.hpp"
#include "ops/conv/conv_jit.hpp"
#include "common/test_util.hpp"
#include "testing/fill.hpp"

namespace conv_test {

using namespace blockdnn;
using blockdnn::impl::conv_conf_hint_t;
using blockdnn::impl::conv_fwd_jit_t;
using blockdnn::impl::conv_kernel_kind;

/// True if this CPU lacks `level` (the tests of its kernels skip).
inline bool isa_missing(isa level) { return detected_isa() < level; }

inline format_tag plain_act_tag(int ndims) {
    return ndims == 3 ? format_tag::ncw : ndims == 4 ? format_tag::nchw : format_tag::ncdhw;
}

inline format_tag blocked_act_tag(int ndims, int blk) {
    if (blk == 16) return ndims == 3 ? format_tag::nCw16c : ndims == 4 ? format_tag::nChw16c : format_tag::nCdhw16c;
    return ndims == 3 ? format_tag::nCw8c : ndims == 4 ? format_tag::nChw8c : format_tag::nCdhw8c;
}

inline format_tag nxc_act_tag(int ndims) {
    return ndims == 3 ? format_tag::nwc : ndims == 4 ? format_tag::nhwc : format_tag::ndhwc;
}

inline format_tag plain_wei_tag(int ndims, bool grouped) {
    if (grouped) return ndims == 3 ? format_tag::goiw : ndims == 4 ? format_tag::goihw : format_tag::goidhw;
    return ndims == 3 ? format_tag::oiw : ndims == 4 ? format_tag::oihw : format_tag::oidhw;
}

/// A problem with its layouts and post-ops.
struct conv_case_t {
    conv_desc d;
    format_tag src_tag = format_tag::undef, wei_tag = format_tag::undef, dst_tag = format_tag::undef;
    post_ops po;
    std::string str() const {
        return std::string("src:") + to_string(src_tag) + " wei:" + to_string(wei_tag) + " dst:" + to_string(dst_tag)
                + " " + d.str() + (po.empty() ? "" : " post_ops:" + po.str());
    }
};

/// The validated problem conv_fwd builds from a case (for creating the JIT driver directly).
inline impl::conv_prb_t make_prb(const conv_case_t &k) {
    impl::conv_prb_t p;
    p.desc = k.d;
    p.grouped_wei = impl::is_grouped_weights_tag(k.wei_tag);
    p.po = k.po;
    p.src = tensor_desc(k.d.src_dims(), k.src_tag);
    p.wei = tensor_desc(k.d.wei_dims(p.grouped_wei), k.wei_tag);
    if (k.d.with_bias) p.bia = tensor_desc(k.d.bia_dims(), format_tag::x);
    p.dst = tensor_desc(k.d.dst_dims(), k.dst_tag);
    return p;
}

/// Which kernel a random problem is for.
enum class prb_kind { direct, first, depthwise };

/// A random valid problem: mb 1-4, channels 1-70 (with groups, per-group channels multiples of
/// `blk`, the block of the layouts under test), spatial 1-40 (3-D: 1-10), kernel 1-7
/// (3-D: 1-3), stride 1-3, pads 0-4 per side, dilation 0-2, each post-op kind; one in six
/// is a 1x1 without padding (a GEMM), half of those strided. MACs stay under `max_macs`.
/// src and dst are blocked by `blk` (a first-layer problem's src is plain), or with `nxc`
/// both channels-last (a depthwise g then a multiple of `blk`); weights are plain, or one time
/// in four the kernel's own blocked layout.
inline conv_case_t random_case(
        std::mt19937 &gen, int blk, dim_t max_macs, prb_kind kind = prb_kind::direct, bool nxc = false) {
    auto rnd = [&](dim_t lo, dim_t hi) { return std::uniform_int_distribution<dim_t>(lo, hi)(gen); };
    for (;;) {
        conv_case_t k;
        conv_desc &p = k.d;
        const dim_t nd_pick = rnd(0, 9);
        p.ndims = nd_pick < 2 ? 3 : nd_pick < 8 ? 4 : 5;
        p.mb = rnd(1, 4);
        if (kind == prb_kind::depthwise) {
            p.g = p.ic = p.oc = nxc ? blk * rnd(1, 70 / blk) : rnd(2, 70);
        } else if (kind == prb_kind::first) {
            p.ic = rnd(1, blk);
            p.oc = rnd(1, 70);
        } else if (rnd(0, 9) < 2) {
            p.g = rnd(2, 3);
            p.ic = p.g * blk * rnd(1, 2);
            p.oc = p.g * blk * rnd(1, 2);
        } else {
            p.ic = rnd(0, 3) == 0 ? rnd(1, 4) * blk : rnd(1, 70);
            p.oc = rnd(0, 3) == 0 ? rnd(1, 4) * blk : rnd(1, 70);
        }
        dim_t *i[3] = {&p.id, &p.ih, &p.iw}, *o[3] = {&p.od, &p.oh, &p.ow}, *kk[3] = {&p.kd, &p.kh, &p.kw};
        dim_t *s[3] = {&p.sd, &p.sh, &p.sw}, *pb[3] = {&p.pd, &p.ph, &p.pw}, *pe[3] = {&p.pd_r, &p.ph_r, &p.pw_r};
        dim_t *dl[3] = {&p.dd, &p.dh, &p.dw};
        bool ok = true;
        const bool pointwise = rnd(0, 5) == 0;
        const bool strided = rnd(0, 1) == 1;
        for (int d = 5 - p.ndims; d < 3; ++d) {
            const bool deep = p.ndims == 5;
            *kk[d] = pointwise ? 1 : rnd(1, deep ? 3 : 7);
            *s[d] = pointwise && !strided ? 1 : rnd(1, 3);
            *dl[d] = !pointwise && rnd(0, 3) == 0 ? rnd(1, 2) : 0;
            *pb[d] = pointwise ? 0 : rnd(0, 4);
            const dim_t pr = pointwise ? 0 : rnd(0, 4);
            *i[d] = rnd(1, deep ? 10 : 40);
            const dim_t ext = (*kk[d] - 1) * (*dl[d] + 1) + 1;
            if (*i[d] + *pb[d] + pr < ext) {
                ok = false;
                break;
            }
            *o[d] = (*i[d] + *pb[d] + pr - ext) / *s[d] + 1;
            *pe[d] = (*o[d] - 1) * *s[d] - *i[d] + ext - *pb[d];
        }
        if (!ok) continue;
        const dim_t macs = p.mb * p.oc * p.od * p.oh * p.ow * (p.ic / p.g) * p.kd * p.kh * p.kw;
        if (macs > max_macs) continue;
        p.with_bias = rnd(0, 1) == 1;
        switch (rnd(0, 7)) {
        case 0: k.po.append_eltwise(eltwise_alg::relu); break;
        case 1: k.po.append_eltwise(eltwise_alg::relu, 0.5f); break;
        case 2: k.po.append_eltwise(eltwise_alg::linear, 0.5f, 1.f); break;
        case 3: k.po.append_eltwise(eltwise_alg::clip, -40.f, 50.f); break;
        case 4: k.po.append_sum(1.f).append_eltwise(eltwise_alg::relu); break;
        case 5: k.po.append_eltwise(eltwise_alg::linear, 2.f, -3.f).append_sum(0.5f); break;
        default: break;
        }
        k.src_tag = kind == prb_kind::first ? plain_act_tag(p.ndims)
                : nxc                       ? nxc_act_tag(p.ndims)
                                            : blocked_act_tag(p.ndims, blk);
        k.dst_tag = nxc ? nxc_act_tag(p.ndims) : blocked_act_tag(p.ndims, blk);
        // Grouped weights tags are allowed for g = 1 too: exercise them.
        const bool grouped = p.g > 1 || rnd(0, 5) == 0;
        k.wei_tag = plain_wei_tag(p.ndims, grouped);
        if (rnd(0, 3) == 0) {
            k.wei_tag = kind == prb_kind::depthwise ? impl::dw_wei_tag(p.ndims, blk)
                                                    : impl::direct_wei_tag(p.ndims, grouped, blk);
        }
        return k;
    }
}

/// Small integers in [-range, range] in every logical element: products and sums stay exact.
inline void fill_int(const tensor &t, unsigned seed, int range) {
    bdtest::fill_seeded(t, seed, static_cast<float>(-range), static_cast<float>(range), true);
}

/// Puts NaN into every padded element of a blocked tensor (channels past the logical size),
/// so a kernel that reads padding, or fails to zero it, shows up.
inline void poison_padding(const tensor &t) {
    const tensor_desc &d = t.desc();
    if (!d.is_blocked()) return;
    std::vector<char> logical(static_cast<std::size_t>(d.nelems_padded()), 0);
    for_each_index(d, [&](const dim_t *idx) { logical[static_cast<std::size_t>(d.offset(idx))] = 1; });
    for (std::size_t i = 0; i < logical.size(); ++i)
        if (!logical[i]) t.f32()[i] = std::nanf("");
}

/// A new tensor with t's descriptor and bytes.
inline tensor copy_of(const tensor &t) {
    tensor c(t.desc());
    std::memcpy(c.data(), t.data(), t.desc().size_bytes());
    return c;
}

/// Outcome of one checked case: ok, or what went wrong.
struct outcome_t {
    bool ok = true;
    std::string what;
};

/// Runs a case through the JIT driver for `level` (with `hint`, falling back to init_conf's
/// own choice if the hint does not fit) as 1, 2 and 3 thread parts, and through the reference;
/// every run must give the same dst, padding included (zero), compared by value.
inline outcome_t check_case(const conv_case_t &k, isa level, const conv_conf_hint_t &hint, unsigned seed) {
    const impl::conv_prb_t prb = make_prb(k);
    const conv_kernel_kind kind = impl::conv_kernel_kind_for(k.d, k.src_tag);
    std::unique_ptr<conv_fwd_jit_t> jit;
    std::string why;
    status st = conv_fwd_jit_t::create(jit, prb, level, kind, why, hint);
    if (st == status::unimplemented
            && (hint.ur_w > 0 || hint.nb_ic_blocking > 0 || hint.nb_oc_blocking > 0 || hint.wei_mem_vecs > 0))
        st = conv_fwd_jit_t::create(jit, prb, level, kind, why);
    if (st != status::success) return {false, "create failed: " + why + " for " + k.str()};
    const std::string what =
            std::string("conv/") + to_string(level) + "/" + k.str() + " [" + impl::to_string(jit->conf()) + "]";

    const tensor src(prb.src), wei(prb.wei), dst_old(prb.dst);
    fill_int(src, seed, 3);
    fill_int(wei, seed + 1, 2);
    fill_int(dst_old, seed + 2, 5);
    poison_padding(src);
    poison_padding(dst_old);
    tensor bia;
    if (k.d.with_bias) {
        bia = tensor(prb.bia);
        fill_int(bia, seed + 3, 4);
    }
    // The reference, through the public API capped at scalar.
    const tensor ref = copy_of(dst_old);
    {
        isa_guard g;
        set_max_isa(isa::scalar);
        conv_fwd(k.d, k.src_tag, k.wei_tag, k.dst_tag, k.po).execute(src, wei, bia, ref);
    }
    // JIT: whole (execute reorders plain weights), then as thread parts on blocked weights.
    const float *bp = k.d.with_bias ? bia.f32() : nullptr;
    std::vector<tensor> outs;
    outs.push_back(copy_of(dst_old));
    jit->execute({src.f32(), wei.f32(), bp, outs.back().f32()});
    const tensor wei_b = reorder(wei, jit->wei_tag());
    for (int nthr : {1, 2, 3}) {
        outs.push_back(copy_of(dst_old));
        for (int ithr = 0; ithr < nthr; ++ithr)
            jit->execute_part({src.f32(), wei_b.f32(), bp, outs.back().f32()}, ithr, nthr);
    }
    const dim_t n = ref.desc().nelems_padded();
    for (std::size_t r = 0; r < outs.size(); ++r)
        for (dim_t i = 0; i < n; ++i) {
            const float got = outs[r].f32()[i], want = ref.f32()[i];
            // By value: relu gives +0 where the reference's alpha * x gives -0.
            if (!(got == want || (std::isnan(got) && std::isnan(want))))
                return {false,
                        what + ": run " + std::to_string(r) + " differs at offset " + std::to_string(i) + ": got "
                                + std::to_string(got) + ", reference " + std::to_string(want)};
        }
    return {};
}

// Runs k through the public API capped at `level` (weights per call or held by the op) and at
// scalar (the reference, on the layouts the op picked); returns the JIT op's impl_name and
// fails the test on any difference in dst or any write to src or wei.
inline std::string check_through_api(const conv_case_t &k, isa level, bool held, unsigned seed) {
    SCOPED_TRACE(k.str() + (held ? " held weights" : "") + " on " + to_string(level));
    const tensor_desc wd(k.d.wei_dims(impl::is_grouped_weights_tag(k.wei_tag)), k.wei_tag);
    const tensor wei(wd);
    fill_int(wei, seed + 1, 2);
    tensor bia;
    if (k.d.with_bias) {
        bia = tensor(tensor_desc(k.d.bia_dims(), format_tag::x));
        fill_int(bia, seed + 3, 4);
    }
    isa_guard g;
    set_max_isa(level);
    const conv_fwd op = held ? conv_fwd(k.d, k.src_tag, wei, bia, k.dst_tag, k.po)
                             : conv_fwd(k.d, k.src_tag, k.wei_tag, k.dst_tag, k.po);
    const tensor src(op.src_desc()), dst(op.dst_desc());
    fill_int(src, seed, 3);
    fill_int(dst, seed + 2, 5);
    const tensor src0 = copy_of(src), wei0 = copy_of(wei), ref = copy_of(dst);
    if (held) op.execute(src, dst);
    else op.execute(src, wei, bia, dst);
    set_max_isa(isa::scalar);
    conv_fwd(k.d, src.desc().tag(), k.wei_tag, dst.desc().tag(), k.po).execute(src, wei, bia, ref);
    EXPECT_EQ(std::memcmp(src.data(), src0.data(), src.desc().size_bytes()), 0) << "src written";
    EXPECT_EQ(std::memcmp(wei.data(), wei0.data(), wd.size_bytes()), 0) << "wei written";
    const dim_t n = dst.desc().nelems_padded();
    dim_t bad = 0;
    for (dim_t i = 0; i < n; ++i)
        if (dst.f32()[i] != ref.f32()[i] && bad++ == 0)
            ADD_FAILURE() << op.impl_name() << ": dst differs at " << i << ": " << dst.f32()[i] << ", reference "
                          << ref.f32()[i];
    return op.impl_name();
}

} // namespace conv_test
