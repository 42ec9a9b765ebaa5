// SPDX-License-Identifier: Apache-2.0
// init_conf for the direct forward convolution kernel: which problems it takes, and the
// register and cache blocking (ur_w x nb_oc_blocking accumulators, ic and oc chunks).
#include <algorithm>
#include <limits>
#include <sstream>

#include "common/utils.hpp"
#include "jit/conv/conv_conf.hpp"
#include "jit/conv/jit_conv_post_ops.hpp"

namespace blockdnn::impl {

namespace {

// Core model used by the blocking heuristics. Cores with two FMA pipes and a 4-cycle FMA
// latency need 8 independent accumulators to keep both pipes busy; the model asks for 10
// (a latency of 5), as loads and stores delay some FMAs.
constexpr double fma_per_cycle = 2;
constexpr double fma_latency = 5;
// Weights a call may read per block and still find in L1 at the next block.
constexpr dim_t l1_weights_budget = 16 * 1024;
// L2 bytes per cycle a core sustains into L1 beside the kernel's other misses.
constexpr double l2_bytes_per_cycle = 16;
// Cycles of one kernel call outside its blocks (driver bookkeeping, entry, exit).
constexpr double call_cycles = 200;
// Two loads per cycle of up to 256 bits; a 512-bit load counts twice.
constexpr double loads_per_cycle = 2;
// Weights of one kernel call (and of one outer oc chunk) are kept under half of a typical
// 1 MiB L2, leaving the other half for the src rows and dst row they meet.
constexpr dim_t l2_weights_budget = 512 * 1024;
// At most this many weight vectors per ic step: beyond it the accumulators per weight drop
// below 2 on AVX2 and the FMAs start waiting on loads.
constexpr int max_wei_vecs = 4;
// Longest row a 1x1 convolution's pixels are regrouped into.
constexpr dim_t max_flat_row = 1024;
// Most pixels a call over several rows may hold: its blocks are all unrolled.
constexpr dim_t max_unrolled_pixels = 64;
// Least number of (image, row, oc-block group) work items a regrouping may leave.
constexpr dim_t min_work_items = 16;

int block_of(format_tag t) {
    switch (t) {
    case format_tag::nCw16c:
    case format_tag::nChw16c:
    case format_tag::nCdhw16c: return 16;
    case format_tag::nCw8c:
    case format_tag::nChw8c:
    case format_tag::nCdhw8c: return 8;
    default: return 0;
    }
}

int ndims_of_act(format_tag t) {
    switch (t) {
    case format_tag::nCw16c:
    case format_tag::nCw8c:
    case format_tag::ncw: return 3;
    case format_tag::nChw16c:
    case format_tag::nChw8c:
    case format_tag::nchw: return 4;
    case format_tag::nCdhw16c:
    case format_tag::nCdhw8c:
    case format_tag::ncdhw: return 5;
    default: return 0;
    }
}

// Cycles of one ic step (one input channel, one kernel tap) of a register block of u pixels
// by nvec weight vectors: bound by FMA throughput, FMA latency or loads.
// With wei_from_l2, the call's weights do not fit L1 and stream from L2 once per block.
double step_cycles(int u, int nvec, int simd_w, bool embedded, bool wei_from_l2) {
    const double fma = u * nvec / fma_per_cycle;
    const double wei_loads = nvec * (simd_w / 8.0);
    const double bcast_loads = embedded ? u * nvec : u;
    const double l2 = wei_from_l2 ? nvec * simd_w * 4 / l2_bytes_per_cycle : 0;
    return std::max({fma, fma_latency, (wei_loads + bcast_loads) / loads_per_cycle, l2});
}

// Estimated cycles per (output pixel x oc vector) of a call's pixels computed with u pixels
// per block.
double row_cost(const conv_conf_t &c, int u, int nvec, bool embedded) {
    const dim_t steps = std::min<dim_t>(c.icg, c.nb_ic * c.ic_block) * c.kd * c.kh * c.kw;
    const dim_t pixels = c.oh_block * c.ow;
    const dim_t nfull = pixels / u, tail = pixels % u;
    const bool from_l2 = steps * nvec * c.simd_w * 4 > l1_weights_budget;
    // A block also initialises and stores u * nvec accumulators.
    auto block = [&](int uu) { return step_cycles(uu, nvec, c.simd_w, embedded, from_l2) * steps + uu * nvec; };
    const double cycles = nfull * block(u) + (tail ? block(static_cast<int>(tail)) : 0.0) + call_cycles;
    return cycles / (pixels * nvec);
}

struct blocking_t {
    int nbo = 0, u = 0;
    double cost = std::numeric_limits<double>::max();
};

// Register blocking: nb_oc_blocking (a divisor of nb_oc) x ur_w pixels with the least
// estimated cost within the register budget (and the hints).
blocking_t pick_blocking(const conv_conf_t &c, const conv_conf_hint_t &hint) {
    blocking_t best;
    const bool emb = c.bcast_embedded;
    for (int nbo = 1; nbo <= c.nb_oc; ++nbo) {
        if (c.nb_oc % nbo) continue;
        if (hint.nb_oc_blocking > 0 && nbo != hint.nb_oc_blocking) continue;
        const int nvec = nbo * c.oc_vecs;
        if (nvec > max_wei_vecs && hint.nb_oc_blocking <= 0) continue;
        const int temps = std::max(nvec + (emb ? 0 : 1), c.n_post_temps);
        const int u_max = static_cast<int>(std::min<dim_t>((c.n_vregs - temps) / nvec, c.oh_block * c.ow));
        for (int u = 1; u <= u_max; ++u) {
            if (hint.ur_w > 0 && u != hint.ur_w) continue;
            const double cost = row_cost(c, u, nvec, emb);
            // Ties go to more pixels per block: each weight vector then serves more FMAs.
            if (cost < best.cost - 1e-9 || (cost < best.cost + 1e-9 && u * nvec > best.u * best.nbo * c.oc_vecs)) {
                best.cost = cost;
                best.nbo = nbo;
                best.u = u;
            }
        }
    }
    return best;
}

bool supported_tags(conv_conf_t &c, const conv_prb_t &p, std::string &why) {
    const int sblk = block_of(p.src_tag), dblk = block_of(p.dst_tag);
    if (!sblk) {
        why = cat("src layout ", to_string(p.src_tag), " is not nC[d]hw8c or nC[d]hw16c");
        return false;
    }
    if (dblk != sblk || ndims_of_act(p.dst_tag) != ndims_of_act(p.src_tag)) {
        why = cat("dst layout ", to_string(p.dst_tag), " does not match src layout ", to_string(p.src_tag));
        return false;
    }
    if (ndims_of_act(p.src_tag) != p.ndims) {
        why = cat("src layout ", to_string(p.src_tag), " does not have ", p.ndims, " dims");
        return false;
    }
    if (c.level == isa::avx512_core && sblk != 16) {
        why = cat("avx512_core kernel takes 16-channel blocks, src layout is ", to_string(p.src_tag));
        return false;
    }
    c.ic_block = c.oc_block = sblk;
    c.oc_vecs = sblk / c.simd_w;
    return true;
}

bool fits_int32_bytes(dim_t floats) { return floats * 4 < std::numeric_limits<std::int32_t>::max(); }

} // namespace

const char *to_string(conv_kernel_kind k) {
    switch (k) {
    case conv_kernel_kind::direct: return "direct";
    case conv_kernel_kind::depthwise: return "depthwise";
    case conv_kernel_kind::first: return "first";
    }
    return "unknown";
}

format_tag direct_wei_tag(int ndims, bool grouped, int block) {
    using t = format_tag;
    if (block == 16) {
        if (ndims == 3) return grouped ? t::gOIw16i16o : t::OIw16i16o;
        if (ndims == 4) return grouped ? t::gOIhw16i16o : t::OIhw16i16o;
        return grouped ? t::gOIdhw16i16o : t::OIdhw16i16o;
    }
    if (ndims == 3) return grouped ? t::gOIw8i8o : t::OIw8i8o;
    if (ndims == 4) return grouped ? t::gOIhw8i8o : t::OIhw8i8o;
    return grouped ? t::gOIdhw8i8o : t::OIdhw8i8o;
}

// Dense strides of the blocked layouts (tensor_desc computes the same; a test checks it).
dim_t conv_conf_t::src_w_stride() const { return kind == conv_kernel_kind::first ? 1 : ic_block; }
dim_t conv_conf_t::src_h_stride() const { return iw * src_w_stride(); }
dim_t conv_conf_t::src_d_stride() const { return ih * src_h_stride(); }
dim_t conv_conf_t::src_c_stride() const { return id * src_d_stride(); }
dim_t conv_conf_t::dst_h_stride() const { return ow * oc_block; }
dim_t conv_conf_t::dst_d_stride() const { return oh * dst_h_stride(); }
dim_t conv_conf_t::dst_c_stride() const { return od * dst_d_stride(); }
dim_t conv_conf_t::wei_kw_stride() const { return static_cast<dim_t>(ic_block) * oc_block; }
dim_t conv_conf_t::wei_kh_stride() const { return kw * wei_kw_stride(); }
dim_t conv_conf_t::wei_kd_stride() const { return kh * wei_kh_stride(); }
dim_t conv_conf_t::wei_icb_stride() const { return kd * wei_kd_stride(); }
dim_t conv_conf_t::wei_ocb_stride() const { return nb_ic * wei_icb_stride(); }
dim_t conv_conf_t::wei_g_stride() const { return nb_oc * wei_ocb_stride(); }

bool conv_conf_t::has_sum() const {
    return std::any_of(post_ops.begin(), post_ops.end(),
            [](const conv_post_op_t &e) { return e.what == conv_post_op_t::kind::sum; });
}

status init_conf_conv_fwd_direct(conv_conf_t &c, const conv_prb_t &p, isa level, std::string &why,
        const conv_conf_hint_t &hint) {
    c = conv_conf_t {};
    static_cast<conv_prb_t &>(c) = p;
    c.level = level;
    c.kind = conv_kernel_kind::direct;
    if (level != isa::avx2 && level != isa::avx512_core) {
        why = cat("direct kernel needs avx2 or avx512_core, got ", to_string(level));
        return status::unimplemented;
    }
    c.simd_w = level == isa::avx512_core ? 16 : 8;
    c.n_vregs = level == isa::avx512_core ? 32 : 16;
    if (!supported_tags(c, p, why)) return status::unimplemented;

    c.icg = p.ic / p.g;
    c.ocg = p.oc / p.g;
    if (p.g > 1 && (c.icg % c.ic_block || c.ocg % c.oc_block)) {
        why = cat("groups: per-group channels ic/g=", c.icg, " oc/g=", c.ocg, " are not multiples of ",
                c.ic_block);
        return status::unimplemented;
    }
    c.nb_ic = div_up(c.icg, c.ic_block);
    c.nb_oc = div_up(c.ocg, c.oc_block);
    c.ic_tail = static_cast<int>(c.icg % c.ic_block);
    c.oc_tail = static_cast<int>(c.ocg % c.oc_block);
    c.wei_tag = direct_wei_tag(p.ndims, p.g > 1, c.ic_block);

    if (!conv_post_ops_supported(p.post_ops, why)) return status::unimplemented;
    c.n_post_temps = conv_post_ops_temps(p.post_ops);

    // Pointer steps are 32-bit immediates; whole tensors are addressed by the driver in 64 bits.
    if (!fits_int32_bytes(c.src_c_stride()) || !fits_int32_bytes(c.dst_c_stride())
            || !fits_int32_bytes(c.wei_ocb_stride() * 4)) {
        why = "a per-block stride exceeds 2 GiB";
        return status::unimplemented;
    }

    const bool emb = hint.bcast_embedded >= 0 ? hint.bcast_embedded == 1 : false;
    if (emb && level != isa::avx512_core) {
        why = "embedded broadcast needs avx512_core";
        return status::unimplemented;
    }
    c.bcast_embedded = emb;
    blocking_t best = pick_blocking(c, hint);
    // 1x1 convolutions without padding. With unit strides src pixels are read in the order dst
    // pixels are written, so the spatial dims regroup into rows of any length that divides
    // them: longer rows leave smaller tails (a 7x7 output becomes one 49-pixel row). With
    // larger strides a call runs over oh_block rows instead, its blocks crossing row ends.
    // (Negative end pads only leave input unread.)
    const bool pointwise = c.kd == 1 && c.kh == 1 && c.kw == 1 && !c.pd && !c.ph && !c.pw && c.pd_r <= 0
            && c.ph_r <= 0 && c.pw_r <= 0;
    if (pointwise && c.sd == 1 && c.sh == 1 && c.sw == 1 && c.id == c.od && c.ih == c.oh && c.iw == c.ow) {
        const dim_t pixels = c.od * c.oh * c.ow;
        dim_t best_row = c.ow;
        for (dim_t row = c.ow + 1; row <= std::min(pixels, max_flat_row); ++row) {
            if (pixels % row) continue;
            // Keep enough rows to split over threads.
            if (c.mb * (pixels / row) * (c.nb_oc / std::max(1, best.nbo)) < min_work_items) break;
            conv_conf_t f = c;
            f.id = f.od = 1;
            f.ih = f.oh = pixels / row;
            f.iw = f.ow = row;
            const blocking_t b = pick_blocking(f, hint);
            if (b.u && b.cost < best.cost - 1e-9) {
                best = b;
                best_row = row;
            }
        }
        if (best_row != c.ow) {
            c.id = c.od = 1;
            c.ih = c.oh = pixels / best_row;
            c.iw = c.ow = best_row;
        }
    } else if (pointwise && c.ow < max_unrolled_pixels) {
        int best_ohb = 1;
        for (int ohb = 2; ohb <= c.oh && ohb * c.ow <= max_unrolled_pixels; ++ohb) {
            if (c.oh % ohb) continue;
            if (c.mb * c.od * (c.oh / ohb) * (c.nb_oc / std::max(1, best.nbo)) < min_work_items) break;
            conv_conf_t f = c;
            f.oh_block = ohb;
            const blocking_t b = pick_blocking(f, hint);
            if (b.u && b.cost < best.cost - 1e-9) {
                best = b;
                best_ohb = ohb;
            }
        }
        c.oh_block = best_ohb;
    }
    if (!best.u) {
        why = cat("no register blocking fits ", c.n_vregs, " vector registers (ur_w hint ", hint.ur_w,
                ", nb_oc_blocking hint ", hint.nb_oc_blocking, ", post-op temporaries ", c.n_post_temps, ")");
        return status::unimplemented;
    }
    c.nb_oc_blocking = best.nbo;
    c.ur_w = best.u;
    c.ur_w_tail = static_cast<int>((c.oh_block * c.ow) % c.ur_w);
    // Each ic block of a row is its own stream of cache lines, too many streams for the
    // hardware prefetchers to follow; the kernel fetches the next row's lines itself.
    if (hint.prefetch != 0) c.src_prefetch_dist = c.oh_block * c.sh * c.src_h_stride() * 4;

    // Cache blocking. The reduction is split into ic chunks only when one call's weights
    // overflow the budget; a sum post-op reads dst once, so it keeps the reduction whole.
    const dim_t wei_bytes_per_icb = c.nb_oc_blocking * c.wei_icb_stride() * 4;
    c.nb_ic_blocking = static_cast<int>(c.nb_ic);
    if (hint.nb_ic_blocking > 0) c.nb_ic_blocking = static_cast<int>(std::min<dim_t>(hint.nb_ic_blocking, c.nb_ic));
    else if (!c.has_sum() && wei_bytes_per_icb * c.nb_ic > l2_weights_budget)
        c.nb_ic_blocking = static_cast<int>(std::max<dim_t>(1, l2_weights_budget / wei_bytes_per_icb));
    if (c.has_sum() && c.nb_ic_blocking < c.nb_ic) {
        why = "a sum post-op needs the whole ic reduction in one call";
        return status::unimplemented;
    }
    // Outer oc chunks: groups of oc blocks whose weights stay in L2 while every image and row
    // passes over them.
    // The chunk divides the groups evenly; a split reduction walks one group at a time.
    const dim_t ocbg = c.nb_oc / c.nb_oc_blocking;
    const dim_t wei_bytes_per_ocbg = wei_bytes_per_icb * c.nb_ic;
    const dim_t fit = c.nb_ic_blocking < c.nb_ic ? 1 : std::max<dim_t>(1, l2_weights_budget / wei_bytes_per_ocbg);
    c.nb_oc_chunk = 1;
    for (dim_t d = 1; d <= std::min(fit, ocbg); ++d)
        if (ocbg % d == 0) c.nb_oc_chunk = static_cast<int>(d);
    return status::success;
}

std::string to_string(const conv_prb_t &p) {
    std::ostringstream os;
    os << "g" << p.g << "mb" << p.mb << "ic" << p.ic;
    if (p.ndims == 5) os << "id" << p.id;
    if (p.ndims >= 4) os << "ih" << p.ih;
    os << "iw" << p.iw << "oc" << p.oc;
    if (p.ndims == 5) os << "od" << p.od;
    if (p.ndims >= 4) os << "oh" << p.oh;
    os << "ow" << p.ow;
    if (p.ndims == 5) os << "kd" << p.kd;
    if (p.ndims >= 4) os << "kh" << p.kh;
    os << "kw" << p.kw;
    if (p.ndims == 5) os << "sd" << p.sd;
    if (p.ndims >= 4) os << "sh" << p.sh;
    os << "sw" << p.sw;
    if (p.ndims == 5) os << "pd" << p.pd;
    if (p.ndims >= 4) os << "ph" << p.ph;
    os << "pw" << p.pw;
    if (p.ndims == 5) os << "dd" << p.dd;
    if (p.ndims >= 4) os << "dh" << p.dh;
    os << "dw" << p.dw;
    return os.str();
}

std::string to_string(const conv_conf_t &c) {
    std::ostringstream os;
    os << to_string(static_cast<const conv_prb_t &>(c)) << " kind=" << to_string(c.kind)
       << " isa=" << to_string(c.level) << " src=" << to_string(c.src_tag) << " wei=" << to_string(c.wei_tag)
       << " dst=" << to_string(c.dst_tag) << " simd_w=" << c.simd_w << " ic_block=" << c.ic_block
       << " oc_block=" << c.oc_block << " nb_ic=" << c.nb_ic << " nb_oc=" << c.nb_oc << " ic_tail=" << c.ic_tail
       << " oc_tail=" << c.oc_tail << " oh_block=" << c.oh_block << " nb_oc_blocking=" << c.nb_oc_blocking
       << " nb_ic_blocking=" << c.nb_ic_blocking << " ur_w=" << c.ur_w << " ur_w_tail=" << c.ur_w_tail
       << " bcast=" << (c.bcast_embedded ? "embedded" : "register") << " prefetch=" << c.src_prefetch_dist
       << " nb_oc_chunk=" << c.nb_oc_chunk
       << " bias=" << c.with_bias << " post_ops=" << c.post_ops.size();
    return os.str();
}

} // namespace blockdnn::impl
