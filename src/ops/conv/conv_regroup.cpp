// SPDX-License-Identifier: Apache-2.0
// Grouped convolutions whose groups are narrower than the kernels' channel blocks (ResNeXt's 32
// groups of 4 channels), which no kernel takes as they are. k neighbouring groups run as one
// group of k times the channels whose weights are block-diagonal: zero between the groups, so
// each output channel still sums over its own group's inputs only, and a sum of exact zeros
// changes no result, as long as src is finite: 0 x Inf is NaN, so a src holding an Inf or a
// NaN runs the reference, which keeps those to their own group's outputs. The merged groups
// hold whole channel blocks, which the kernels of the ISA take, in the same activation
// layouts: a group's channels are contiguous in every one.
// The zeros cost k times the FMAs of the groups' own taps, far less than the scalar
// reference they replace loses to the kernels (docs/tuning.md, "Conv: narrow groups merged
// into wider ones").
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <numeric>

#include "blockdnn/isa.hpp"
#include "core/utils.hpp"
#include "ops/conv/conv_impl.hpp"
#include "sched/parallel.hpp"
#include "tensor/layout.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

namespace {

// True if any of the n floats at p is an Inf or a NaN (all exponent bits set). A pass over
// them at the memory's read bandwidth, in chunks over the threads.
bool any_non_finite(const float *p, dim_t n) {
    constexpr dim_t chunk = 1 << 14;
    std::atomic<bool> found {false};
    parallel_for(div_up(n, chunk), 1, [&](dim_t b, dim_t e) {
        for (dim_t c = b; c < e && !found.load(std::memory_order_relaxed); ++c) {
            const float *x = p + c * chunk;
            const dim_t len = std::min(chunk, n - c * chunk);
            std::uint32_t hit = 0;
            for (dim_t i = 0; i < len; ++i) hit |= (std::bit_cast<std::uint32_t>(x[i]) & 0x7f800000u) == 0x7f800000u;
            if (hit) found.store(true, std::memory_order_relaxed);
        }
    });
    return found.load();
}

class conv_fwd_regroup_t final : public conv_impl_t {
public:
    // `inner` runs inner_prb: p with k groups merged into one.
    conv_fwd_regroup_t(const conv_prb_t &p, std::unique_ptr<conv_impl_t> inner, const char *inner_row, dim_t k)
        : p_(p), inner_(std::move(inner)), ref_(create_conv_fwd_ref(p_)), inner_row_(inner_row), k_(k) {}

    const conv_prb_t &prb() const override { return p_; }
    std::string info() const override {
        const conv_desc &d = p_.desc;
        return cat("g", d.g, " of ", d.ic / d.g, " -> ", d.oc / d.g, " channels as g", d.g / k_, " of ",
                k_ * d.ic / d.g, " -> ", k_ * d.oc / d.g, " with block-diagonal weights by ", inner_row_, " (",
                inner_->info(), ")");
    }
    // The op's copy stays plain: take_weights spreads it into the merged groups once.
    format_tag preferred_wei_tag() const override { return plain_weights_tag(p_.desc.ndims, true); }
    void take_weights(const conv_args_t &weights) override {
        p_.wei = tensor_desc(p_.wei.dims(), preferred_wei_tag());
        const tensor merged = merge(weights.wei);
        const format_tag held = inner_->preferred_wei_tag();
        held_ = held == format_tag::undef || held == merged.desc().tag()
                ? merged
                : tensor(tensor_desc(merged.desc().dims(), held));
        if (held_.data() != merged.data()) reorder_now(merged, held_);
        inner_->take_weights({nullptr, held_.f32(), weights.bia, nullptr});
        // The reference reads the op's plain copy.
        ref_ = create_conv_fwd_ref(p_);
    }

    void execute(const conv_args_t &a) const override {
        if (any_non_finite(a.src, p_.src.nelems_padded())) {
            ref_->execute(a);
            return;
        }
        conv_args_t args = a;
        tensor merged; // the weights of this call, spread into the merged groups
        if (held_.empty()) {
            merged = merge(a.wei);
            args.wei = merged.f32();
        } else {
            args.wei = held_.f32();
        }
        inner_->execute(args);
    }

private:
    // The user's weights (p_.wei) as the merged problem's, in the plain layout: group g's
    // [ocg][icg] taps at rows and columns (g % k) * ocg and (g % k) * icg of merged group g / k,
    // zeros around them.
    tensor merge(const float *wei) const {
        const conv_desc &d = p_.desc;
        const int nd = d.ndims;
        const format_tag plain = plain_weights_tag(nd, true);
        tensor user(p_.wei, const_cast<float *>(wei)), plain_user;
        if (p_.wei.tag() != plain) {
            plain_user = tensor(tensor_desc(p_.wei.dims(), plain));
            reorder_now(user, plain_user);
            user = plain_user;
        }
        conv_desc md = d;
        md.g = d.g / k_;
        const tensor merged(tensor_desc(md.wei_dims(true), plain));
        const dim_t icg = d.ic / d.g, ocg = d.oc / d.g, sp = d.kd * d.kh * d.kw;
        const dim_t m_icg = k_ * icg, m_ocg = k_ * ocg;
        float *out = merged.f32();
        const float *in = user.f32();
        std::fill_n(out, merged.desc().nelems_padded(), 0.f);
        for (dim_t g = 0; g < d.g; ++g) {
            const dim_t mg = g / k_, j = g % k_;
            for (dim_t o = 0; o < ocg; ++o)
                for (dim_t i = 0; i < icg; ++i)
                    std::copy_n(in + ((g * ocg + o) * icg + i) * sp, sp,
                            out + ((mg * m_ocg + j * ocg + o) * m_icg + j * icg + i) * sp);
        }
        return merged;
    }

    conv_prb_t p_;
    std::unique_ptr<conv_impl_t> inner_;
    std::unique_ptr<conv_impl_t> ref_; // for a src holding an Inf or a NaN
    const char *inner_row_;
    dim_t k_;     // groups merged into one
    tensor held_; // the op's weights, merged, in inner_'s layout; empty if given per call
};

// The most groups merged into one, and so the most FMAs paid per useful one: what merging
// groups of one channel for blocks of 16 costs.
constexpr dim_t max_merged_groups = 16;

// Groups merged so that each merged group's input and output channels fill whole blocks of
// `blk`: the least k with k * ic/g and k * oc/g multiples of blk.
dim_t groups_to_merge(const conv_desc &d, dim_t blk) {
    const dim_t icg = d.ic / d.g, ocg = d.oc / d.g;
    return std::lcm(blk / std::gcd(blk, icg), blk / std::gcd(blk, ocg));
}

} // namespace

status create_conv_fwd_regroup(const conv_prb_t &prb, std::unique_ptr<conv_impl_t> &out, std::string &why) {
    const conv_desc &d = prb.desc;
    if (d.g == 1) {
        why = "no groups";
        return status::unimplemented;
    }
    // The fewest groups merged first: merging for blocks of 16 costs twice the FMAs of blocks of
    // 8 (k * ic/g is the merged reduction), which twice the vector width at most makes up. Each
    // row takes the blocks its layouts hold, the rows of the higher ISA first. Where neither
    // merge divides g, all groups as one (the kernels take any channel count without groups),
    // while that costs no more than a merge for blocks of 16 could.
    const isa cap = effective_isa();
    std::string reasons;
    const dim_t k8 = groups_to_merge(d, 8), k16 = groups_to_merge(d, 16);
    if (k16 == 1) {
        why = "the groups fill whole channel blocks";
        return status::unimplemented;
    }
    // A k of 1 (groups that fill blocks of 8 already, on layouts blocked by 16 here) or tried
    // before is skipped.
    for (dim_t k : {k8, k16 == k8 ? 1 : k16, d.g == k8 || d.g == k16 ? 1 : d.g}) {
        if (k == 1) continue;
        if (d.g % k || k > max_merged_groups) {
            reasons += cat(reasons.empty() ? "" : "; ", k, " groups merged",
                    d.g % k ? cat(" do not divide g = ", d.g)
                            : cat(" cost more than ", max_merged_groups, " times the FMAs"));
            continue;
        }
        conv_prb_t inner = prb;
        inner.desc.g = d.g / k;
        inner.grouped_wei = true;
        inner.wei = tensor_desc(inner.desc.wei_dims(true), plain_weights_tag(d.ndims, true));
        inner.wei_any = false;
        for (const conv_row_t &row : conv_fwd_impls()) {
            if (row.level == isa::scalar || row.level > cap || row.create == &create_conv_fwd_regroup) continue;
            std::unique_ptr<conv_impl_t> impl;
            std::string row_why;
            const status s = row.create(inner, impl, row_why);
            if (s == status::success) {
                conv_prb_t p = prb;
                p.src = impl->prb().src;
                p.dst = impl->prb().dst;
                p.src_any = p.dst_any = false;
                if (p.wei_any) p.wei = tensor_desc(d.wei_dims(true), plain_weights_tag(d.ndims, true));
                p.wei_any = false;
                out = std::make_unique<conv_fwd_regroup_t>(p, std::move(impl), row.name, k);
                return status::success;
            }
            if (s != status::unimplemented) {
                why = cat(row.name, " on g", inner.desc.g, " of ", k * d.ic / d.g, " -> ", k * d.oc / d.g,
                        " channels: ", row_why);
                return s;
            }
        }
        reasons += cat(reasons.empty() ? "" : "; ", "no row takes g", inner.desc.g, " of ", k * d.ic / d.g, " -> ",
                k * d.oc / d.g, " channels");
    }
    why = reasons;
    return status::unimplemented;
}

} // namespace blockdnn::impl
