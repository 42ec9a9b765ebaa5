// SPDX-License-Identifier: Apache-2.0
// Driver of the JIT forward convolution (see conv_jit.hpp).
#include "ops/conv/conv_jit.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "sched/parallel.hpp"
#include "core/spatial.hpp"
#include "core/thread_scratch.hpp"
#include "core/utils.hpp"
#include "jit/jit_quiet_copy.hpp"
#include "tensor/layout.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

namespace {

// This thread's buffer for copies reduced to unit stride (conv_conf_t::rtus), kept from one
// execute() to the next: one made for each execute() lost at mb 1 (docs/tuning.md, "Conv:
// strided 1x1 reduced to unit stride").
struct rtus_scratch_tag;
using rtus_scratch_t = thread_scratch_t<rtus_scratch_tag, 1>;

// With a choice of src layout (any), the first-layer kernel's plain src is picked only for
// image-like inputs of at most this many channels; above it the direct kernel's blocked src.
constexpr dim_t max_any_first_ic = 4;

// Whether the first-layer kernel's plain src is the one to pick for a src left as any.
bool first_takes_any_src(const conv_desc &d) { return d.g == 1 && d.ic <= max_any_first_ic; }

// The activation layouts of prb, src and dst, with those left as any picked for a kernel of
// `kind` on `level` (see conv_fwd_jit_t::prb()). Unimplemented when the kernel is not the
// one to pick: the first-layer kernel for a src any with more than max_any_first_ic channels.
status pick_act_tags(
        const conv_prb_t &prb, isa level, conv_kernel_kind kind, format_tag &st, format_tag &dt, std::string &why) {
    const int nd = prb.desc.ndims;
    // nC[d]hw16c on avx512_core, nC[d]hw8c on avx2.
    const format_tag blocked = blocked_act_tag(nd, level == isa::avx512_core ? 16 : 8);
    const format_tag plain = conv_plain_act_tag(nd);
    st = prb.src_any ? format_tag::undef : prb.src.tag();
    dt = prb.dst_any ? format_tag::undef : prb.dst.tag();
    if (prb.src_any && kind == conv_kernel_kind::first) {
        if (!first_takes_any_src(prb.desc)) {
            why = cat("src any: the first-layer kernel's plain src is picked for g = 1 and ic <= ", max_any_first_ic,
                    ", got g=", prb.desc.g, " ic=", prb.desc.ic);
            return status::unimplemented;
        }
        st = plain;
    } else if (prb.src_any) {
        st = prb.dst_any ? blocked : dt; // channels-last or blocked src and dst go together
    }
    if (prb.dst_any) dt = st == plain ? blocked : st;
    return status::success;
}

// The kernel cache's key of conf c: every field of conv_conf_t, raw, as the kernel may
// depend on any of them (to_string(c) names them too, but formatting it costs more than the
// rest of a cached creation). Fixed-width fields, then the post-ops, so no two confs share a
// key.
std::string cache_key(const conv_conf_t &c) {
    // A new field of conv_desc or conv_conf_t changes these sizes: add it to the key below.
    // (The post-ops vector is left out: its size differs between standard library builds.)
    static_assert(sizeof(conv_desc) == 216 && sizeof(conv_conf_t) - sizeof(conv_conf_t::post_ops) == 432,
            "a conv conf field is missing from the key");
    std::string key = "conv_fwd|";
    key.reserve(512);
    const conv_desc &d = c;
    append_raw(key, d.ndims, d.mb, d.g, d.ic, d.oc, d.id, d.ih, d.iw, d.od, d.oh, d.ow, d.kd, d.kh, d.kw, d.sd, d.sh,
            d.sw, d.pd, d.ph, d.pw, d.pd_r, d.ph_r, d.pw_r, d.dd, d.dh, d.dw, d.with_bias);
    append_raw(key, c.src_tag, c.dst_tag, c.level, c.kind, c.wei_tag, c.simd_w, c.n_vregs, c.ic_block, c.oc_block,
            c.oc_vecs, c.icg, c.ocg, c.nb_ic, c.nb_oc, c.ic_tail, c.oc_tail, c.nb_oc_blocking, c.nb_oc_blocking_tail,
            c.nb_ic_blocking, c.ur_w, c.oh_block, c.bcast_embedded, c.wei_mem_vecs, c.ur_balanced, c.src_prefetch_dist,
            c.src_prefetch_last_group, c.rtus, c.rtus_user.id, c.rtus_user.ih, c.rtus_user.iw, c.rtus_user.od,
            c.rtus_user.oh, c.rtus_user.ow, c.rtus_user.sd, c.rtus_user.sh, c.rtus_user.sw, c.nb_oc_chunk,
            c.n_post_temps, c.ic_chunks_per_image, c.image_outer, c.groups_inside_image, c.post_ops.size());
    for (const post_op &e : c.post_ops) append_raw(key, e.what, e.alg, e.alpha, e.beta, e.scale);
    return key;
}

} // namespace

status conv_fwd_jit_t::create(std::unique_ptr<conv_fwd_jit_t> &out, const conv_prb_t &prb, isa level,
        conv_kernel_kind kind, std::string &why, const conv_conf_hint_t &hint) {
    std::unique_ptr<conv_fwd_jit_t> self(new conv_fwd_jit_t());
    conv_conf_t &c = self->c_;
    format_tag st, dt;
    status s = pick_act_tags(prb, level, kind, st, dt, why);
    if (s != status::success) return s;
    s = init_conf_conv_fwd_memo(c, prb.desc, st, dt, prb.po, level, kind, why, hint);
    // Reduced to unit stride, a part copies a whole image for its items of it: with fewer
    // images than threads the copies repeat for ever smaller shares of the work. So unless
    // asked, the copy needs an image per thread of those the op is created with.
    if (s == status::success && c.rtus && hint.rtus != 1 && prb.desc.mb < parallel_max_threads()) {
        conv_conf_hint_t in_place = hint;
        in_place.rtus = 0;
        s = init_conf_conv_fwd_memo(c, prb.desc, st, dt, prb.po, level, kind, why, in_place);
    }
    if (s != status::success) return s;
    std::string key = cache_key(c);
    s = kernel_cache().get(
            key, [&] { return make_for_isa<jit_conv_fwd_kernel_t, jit_generator_t>(level, c); }, self->ker_, why);
    if (s != status::success) return s;
    self->fn_ = self->ker_->entry<void (*)(const conv_fwd_call_args_t *)>();
    self->fn_quiet_ = self->fn_;
    if (c.src_prefetch_last_group) {
        // The twin is the kernel's code with its src prefetches (all droppable) made NOPs:
        // copied, not generated again, which would double the creation time.
        key += "|quiet";
        s = kernel_cache().get(
                key, [&] { return std::make_unique<jit_quiet_copy_t>(*self->ker_); }, self->ker_quiet_, why);
        if (s != status::success) return s;
        self->fn_quiet_ = self->ker_quiet_->entry<void (*)(const conv_fwd_call_args_t *)>();
    }
    if (c.nb_oc_blocking_tail) {
        // The last group's kernel: the same conf but for its blocks.
        conv_conf_t tail = c;
        tail.nb_oc_blocking = c.nb_oc_blocking_tail;
        tail.nb_oc_blocking_tail = 0;
        tail.wei_mem_vecs = 0; // init_conf gives weights from memory to whole groups only
        s = kernel_cache().get(
                cache_key(tail), [&] { return make_for_isa<jit_conv_fwd_kernel_t, jit_generator_t>(level, tail); },
                self->ker_tail_, why);
        if (s != status::success) return s;
        self->fn_tail_ = self->ker_tail_->entry<void (*)(const conv_fwd_call_args_t *)>();
    }
    // Weights given with a g dim keep it (gOIhw16i16o for g = 1 lays out as OIhw16i16o).
    self->wei_tag_ = prb.grouped_wei && c.kind != conv_kernel_kind::depthwise
            ? direct_wei_tag(c.ndims, true, c.ic_block)
            : c.wei_tag;
    self->prb_ = prb.any() ? with_layouts(prb, st, self->wei_tag_, dt) : prb;
    self->wei_reorder_ = self->prb_.wei.tag() != self->wei_tag_;
    self->n_occ_ = c.n_oc_groups() / c.nb_oc_chunk;
    self->n_items_ = c.loop_groups() * c.n_oc_groups() * c.mb * c.od * (c.oh / c.oh_block);
    self->n_icc_ = div_up(c.nb_ic, c.nb_ic_blocking);
    if (c.rtus) {
        conv_conf_t user = c; // for the strides of the user's src
        user.id = c.rtus_user.id;
        user.ih = c.rtus_user.ih;
        user.iw = c.rtus_user.iw;
        self->rtus_src_n_stride_ = user.src_n_stride();
        self->rtus_src_c_stride_ = user.src_c_stride();
        self->rtus_src_d_stride_ = user.src_d_stride();
        self->rtus_src_h_stride_ = user.src_h_stride();
        self->rtus_src_w_stride_ = user.src_w_stride();
        self->rtus_planes_ = c.act_nxc() ? 1 : c.nb_ic;
        self->rtus_pixel_floats_ = c.act_nxc() ? c.ic : c.ic_block;
        self->rtus_copy_floats_ =
                self->rtus_planes_ * c.rtus_user.od * c.rtus_user.oh * c.rtus_user.ow * self->rtus_pixel_floats_;
    }
    out = std::move(self);
    return status::success;
}

bool conv_fwd_jit_refuses(const conv_prb_t &prb, conv_kernel_kind kind) {
    const conv_desc &d = prb.desc;
    switch (kind) {
    case conv_kernel_kind::depthwise: return d.g == 1 || d.ic != d.g || d.oc != d.g;
    case conv_kernel_kind::first:
        return prb.src_any ? !first_takes_any_src(d) : prb.src.tag() != conv_plain_act_tag(d.ndims);
    default: return false;
    }
}

std::vector<kernel_ptr> conv_fwd_jit_t::kernels_shared() const {
    std::vector<kernel_ptr> v {ker_};
    if (ker_quiet_) v.push_back(ker_quiet_);
    if (ker_tail_) v.push_back(ker_tail_);
    return v;
}

const float *conv_fwd_jit_t::kernel_weights(const float *wei, tensor &holder) const {
    if (!wei_reorder_) return wei;
    holder = tensor(tensor_desc(prb_.wei.dims(), wei_tag_));
    reorder_now(tensor(prb_.wei, const_cast<float *>(wei)), holder);
    return holder.f32();
}

void conv_fwd_jit_t::execute(const conv_args_t &a) const {
    conv_args_t args = a;
    tensor wei; // the weights in the kernel's layout, when the user's differ
    args.wei = kernel_weights(a.wei, wei);
    execute_on_kernel_weights(args);
}

void conv_fwd_jit_t::execute_on_kernel_weights(const conv_args_t &a) const {
    const int nthr = parallel_max_threads();
    parallel_for(nthr, 1, [&](dim_t b, dim_t e) {
        for (dim_t ithr = b; ithr < e; ++ithr) execute_part(a, static_cast<int>(ithr), nthr);
    });
}

void conv_fwd_jit_t::execute_part(const conv_args_t &a, int ithr, int nthr) const {
    const conv_conf_t &c = c_;
    dim_t start, end;
    balance211(n_items_, nthr, ithr, start, end);
    if (start >= end) return;
    conv_args_t args = a;
    // Bias with the partial last block padded by zeros, so the kernel loads whole vectors.
    std::vector<float> bia_padded;
    if (a.bia && c.oc_tail) {
        bia_padded.assign(static_cast<std::size_t>(c.nb_oc * c.oc_block), 0.f);
        std::copy(a.bia, a.bia + c.oc, bia_padded.begin());
        args.bia = bia_padded.data();
    }
    // Reduced to unit stride: this part's copy of the image its items read, made as they
    // come to a new image (the items of one image are consecutive).
    std::optional<rtus_scratch_t> lease;
    if (c.rtus) lease.emplace();
    dim_t copied = -1;
    conv_args_t on_copy = args;
    auto call = [&](const item_pos_t &p, dim_t icc) {
        if (!c.rtus) return run_item(p, icc, args);
        if (p.n != copied) {
            float *copy = lease->get(0, static_cast<std::size_t>(rtus_copy_floats_));
            rtus_copy(args.src, p.n, copy);
            on_copy.src = copy;
            copied = p.n;
        }
        run_item(p, icc, on_copy);
    };
    if (n_icc_ == 1) {
        item_pos_t p = item_pos(start);
        for (dim_t it = start; it < end; ++it, next_item(p)) call(p, 0);
        return;
    }
    // Split reduction: each run of items goes over the ic chunks in order.
    const dim_t rows = split_run_items();
    for (dim_t run_start = start; run_start < end;) {
        const dim_t run_end = std::min(end, (run_start / rows + 1) * rows);
        const item_pos_t first = item_pos(run_start);
        for (dim_t icc = 0; icc < n_icc_; ++icc) {
            item_pos_t p = first;
            for (dim_t it = run_start; it < run_end; ++it, next_item(p)) call(p, icc);
        }
        run_start = run_end;
    }
}

void conv_fwd_jit_t::run_item(const item_pos_t &p, dim_t icc, const conv_args_t &args) const {
    const conv_fwd_call_args_t a = call_args(p, icc, args);
    if (fn_tail_ && p.ocb + c_.nb_oc_blocking > c_.nb_oc) return fn_tail_(&a);
    // The last oc-block group of a chunk is innermost in the item order (see item_pos).
    if (p.ocbi == c_.nb_oc_chunk - 1) fn_(&a);
    else fn_quiet_(&a);
}

dim_t conv_fwd_jit_t::split_run_items() const {
    const conv_conf_t &c = c_;
    // With ic_chunks_per_image a run is one image of one oc chunk, whose dst stays in L2 from
    // chunk to chunk; otherwise all the items of one oc-block group (with image_outer, of one
    // image: each chunk's weights are read again per image), so that a chunk's weights stay in
    // cache for all the run's rows.
    return (c.image_outer || c.ic_chunks_per_image ? 1 : c.mb) * c.od * (c.oh / c.oh_block) * c.nb_oc_chunk;
}

conv_fwd_jit_t::item_pos_t conv_fwd_jit_t::item_pos(dim_t item) const {
    const conv_conf_t &c = c_;
    // item = (((((g * n_occ + occ) * mb + n) * od + od_) * oh + oh_) * nb_oc_chunk + ocbi): the oc
    // block groups of a chunk are innermost, so they share the src rows while those are in cache.
    // With image_outer, n and occ trade places, (g * mb + n) * n_occ + occ: an image's items are
    // consecutive, so its src stays in cache over its oc chunks (reduced to unit stride, one
    // copy of it serves them all). With groups_inside_image (channels-last groups that share
    // src lines), the image goes outside the groups too, (n * g + g_) * n_occ + occ, so its src
    // serves every group.
    const dim_t n_ohb = c.oh / c.oh_block;
    item_pos_t p;
    dim_t r = item;
    p.ocbi = r % c.nb_oc_chunk;
    r /= c.nb_oc_chunk;
    p.oh = (r % n_ohb) * c.oh_block;
    r /= n_ohb;
    p.od = r % c.od;
    r /= c.od;
    if (c.groups_inside_image) {
        p.occ = r % n_occ_;
        r /= n_occ_;
        p.g = r % c.loop_groups();
        p.n = r / c.loop_groups();
    } else if (c.image_outer) {
        p.occ = r % n_occ_;
        r /= n_occ_;
        p.n = r % c.mb;
        p.g = r / c.mb;
    } else {
        p.n = r % c.mb;
        r /= c.mb;
        p.occ = r % n_occ_;
        p.g = r / n_occ_;
    }
    p.ocb = (p.occ * c.nb_oc_chunk + p.ocbi) * c.nb_oc_blocking;
    return p;
}

void conv_fwd_jit_t::next_item(item_pos_t &p) const {
    const conv_conf_t &c = c_;
    // The digits of item_pos, innermost first, each carrying into the next when it wraps.
    auto done = [&] { p.ocb = (p.occ * c.nb_oc_chunk + p.ocbi) * c.nb_oc_blocking; };
    if (++p.ocbi < c.nb_oc_chunk) return done();
    p.ocbi = 0;
    if ((p.oh += c.oh_block) < c.oh) return done();
    p.oh = 0;
    if (++p.od < c.od) return done();
    p.od = 0;
    // The three outer digits, innermost first, as item_pos orders them.
    dim_t *digit[3] = {&p.n, &p.occ, &p.g};
    dim_t size[3] = {c.mb, n_occ_, c.loop_groups()};
    if (c.groups_inside_image) {
        digit[0] = &p.occ, digit[1] = &p.g, digit[2] = &p.n;
        size[0] = n_occ_, size[1] = c.loop_groups(), size[2] = c.mb;
    } else if (c.image_outer) {
        digit[0] = &p.occ, digit[1] = &p.n;
        size[0] = n_occ_, size[1] = c.mb;
    }
    for (int i = 0; i < 2; ++i) {
        if (++*digit[i] < size[i]) return done();
        *digit[i] = 0;
    }
    ++*digit[2];
    done();
}

void conv_fwd_jit_t::rtus_copy(const float *src, dim_t n, float *buf) const {
    const conv_rtus_user_t &u = c_.rtus_user;
    const dim_t plane = u.od * u.oh * u.ow * rtus_pixel_floats_, k = rtus_pixel_floats_;
    for (dim_t pl = 0; pl < rtus_planes_; ++pl)
        for (dim_t d = 0; d < u.od; ++d)
            for (dim_t h = 0; h < u.oh; ++h) {
                const float *in = src + n * rtus_src_n_stride_ + pl * rtus_src_c_stride_ + d * u.sd * rtus_src_d_stride_
                        + h * u.sh * rtus_src_h_stride_;
                float *out = buf + pl * plane + (d * u.oh + h) * u.ow * k;
                const dim_t step = u.sw * rtus_src_w_stride_;
                // The blocked layouts' pixels, 16 or 8 floats, copied with their size known here.
                if (k == 16)
                    for (dim_t w = 0; w < u.ow; ++w) std::copy_n(in + w * step, 16, out + w * 16);
                else if (k == 8)
                    for (dim_t w = 0; w < u.ow; ++w) std::copy_n(in + w * step, 8, out + w * 8);
                else
                    for (dim_t w = 0; w < u.ow; ++w) std::copy_n(in + w * step, k, out + w * k);
            }
}

conv_fwd_call_args_t conv_fwd_jit_t::call_args(dim_t item, dim_t icc, const conv_args_t &args) const {
    return call_args(item_pos(item), icc, args);
}

conv_fwd_call_args_t conv_fwd_jit_t::call_args(const item_pos_t &p, dim_t icc, const conv_args_t &args) const {
    const conv_conf_t &c = c_;
    const float *src = args.src, *wei = args.wei, *bia = args.bia;
    float *dst = args.dst;
    const dim_t g = p.g, ocb = p.ocb, n = p.n, od = p.od, oh = p.oh;
    const dim_t icb = icc * c.nb_ic_blocking;
    const dim_t n_icb = std::min<dim_t>(c.nb_ic_blocking, c.nb_ic - icb);
    const bool last = icc == n_icc_ - 1;

    const tap_range_t rd = tap_range(od, c.sd, c.pd, c.dd, c.kd, c.id),
                      rh = tap_range(oh, c.sh, c.ph, c.dh, c.kh, c.ih);
    const dim_t kd_count = rd.size(), kh_count = rh.size();
    const dim_t kd_lo = kd_count ? rd.lo : 0, kh_lo = kh_count ? rh.lo : 0;
    const dim_t id0 = kd_count ? od * c.sd - c.pd + kd_lo * (c.dd + 1) : 0;
    const dim_t ih0 = kh_count ? oh * c.sh - c.ph + kh_lo * (c.dh + 1) : 0;

    // Depthwise: src channel blocks are the dst ones.
    const dim_t src_cb = c.kind == conv_kernel_kind::depthwise ? ocb : g * c.nb_ic + icb;
    conv_fwd_call_args_t a;
    // A copy reduced to unit stride holds one image.
    a.src = src + (c.rtus ? 0 : n) * c.src_n_stride() + src_cb * c.src_c_stride() + id0 * c.src_d_stride()
            + ih0 * c.src_h_stride();
    a.wei = wei + g * c.wei_g_stride() + ocb * c.wei_ocb_stride() + icb * c.wei_icb_stride() + kd_lo * c.wei_kd_stride()
            + kh_lo * c.wei_kh_stride();
    a.bia = bia ? bia + g * c.ocg + ocb * c.oc_block : nullptr;
    a.dst = dst + n * c.dst_n_stride() + (g * c.nb_oc + ocb) * c.dst_c_stride() + od * c.dst_d_stride()
            + oh * c.dst_h_stride();
    a.kd_count = kd_count;
    a.kh_count = kh_count;
    const bool ic_tail = last && c.ic_tail;
    a.icb_full = n_icb - (ic_tail ? 1 : 0);
    a.flags = (icc == 0 ? conv_fwd_flag_first : 0) | (last ? conv_fwd_flag_last : 0)
            | (ic_tail ? conv_fwd_flag_ic_tail : 0)
            | (c.oc_tail && ocb + c.nb_oc_blocking >= c.nb_oc ? conv_fwd_flag_oc_tail : 0);
    return a;
}

void conv_fwd_jit_t::take_weights(const conv_args_t &) {
    prb_.wei = tensor_desc(prb_.wei.dims(), wei_tag_);
    wei_reorder_ = false;
}

} // namespace blockdnn::impl
