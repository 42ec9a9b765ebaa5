// SPDX-License-Identifier: Apache-2.0
// Reorder: validation, the dispatch table, the scalar plain <-> blocked paths, the scalar
// channels-first <-> channels-last transpose and the generic reference (which maps every index
// through tensor_desc::offset, so it fits any layout pair).
#include <algorithm>
#include <cstring>
#include <functional>
#include <span>
#include <vector>

#include "blockdnn/isa.hpp"
#include "blockdnn/reorder.hpp"
#include "core/aligned_vector.hpp"
#include "core/dispatch.hpp"
#include "core/machine_model.hpp"
#include "tensor/launch.hpp"
#include "tensor/op_check.hpp"
#include "sched/parallel.hpp"
#include "core/utils.hpp"
#include "tensor/index_walk.hpp"
#include "tensor/layout.hpp"
#include "tensor/reorder_kernels.hpp"
#include "tensor/reorder_now.hpp"

namespace blockdnn::impl {

namespace {

bool is_plain_act(format_tag t) {
    switch (t) {
    case format_tag::ncw:
    case format_tag::nchw:
    case format_tag::ncdhw:
    case format_tag::nwc:
    case format_tag::nhwc:
    case format_tag::ndhwc: return true;
    default: return false;
    }
}

bool is_blocked_act(format_tag t) {
    const layout_info_t &li = layout_info(t);
    return li.family == layout_family::activation && li.nblks == 1 && li.blk_dim[0] == 1;
}

// Weights blocked on the groups alone (Goi*{8,16}g, depthwise's layout): as many channels as
// groups in one image, its spatial size the product of o, i and the kernel's dims.
bool is_blocked_g_wei(format_tag t) {
    const layout_info_t &li = layout_info(t);
    return li.family == layout_family::weights && li.nblks == 1 && li.blk_dim[0] == 0 && li.dim_letter[0] == 'g';
}

bool is_plain_wei(format_tag t) {
    switch (t) {
    case format_tag::oiw:
    case format_tag::oihw:
    case format_tag::oidhw:
    case format_tag::goiw:
    case format_tag::goihw:
    case format_tag::goidhw: return true;
    default: return false;
    }
}

// [g]OI[d][h]w{8i8o,16i16o}: two blocks, i then o, of one size.
bool is_blocked_io_wei(format_tag t) {
    const layout_info_t &li = layout_info(t);
    if (li.family != layout_family::weights || li.nblks != 2) return false;
    const bool grouped = li.dim_letter[0] == 'g';
    return li.blk_dim[0] == (grouped ? 2 : 1) && li.blk_dim[1] == (grouped ? 1 : 0) && li.blk_size[0] == li.blk_size[1];
}

// True if both weights layouts have a groups dim or neither has: goiw and OIhw16i16o have the
// same rank, but their dims mean different things (the weights kernels read both one way).
bool same_groups(format_tag a, format_tag b) { return is_grouped_weights_tag(a) == is_grouped_weights_tag(b); }

dim_t spatial(const tensor_desc &d, int first) {
    dim_t s = 1;
    for (int k = first; k < d.ndims(); ++k) s *= d.dim(k);
    return s;
}

// The dim the act_* view calls channels: 1 for activations, the groups (0) for grouped
// weights (the act_* kinds take goi*, Goi*8g and Goi*16g only among those).
int channel_dim(const tensor_desc &d) { return layout_info(d.tag()).family == layout_family::weights ? 0 : 1; }

// The act_* view of d: (N, C, S) of an activation tensor, or one image of G channels for
// grouped weights, o * i * kernel being its spatial size (Goi*{8,16}g is then nC*{8,16}c).
void set_act_view(reorder_prb_t &p, const tensor_desc &d) {
    const int c = channel_dim(d);
    p.N = c == 0 ? 1 : d.dim(0);
    p.C = d.dim(c);
    p.S = spatial(d, c + 1);
}

// ---- generic reference: every dst element (padding included) from its logical index ----
void reorder_ref(const reorder_prb_t &p, const float *src, float *dst) {
    const tensor_desc &sd = p.src, &dd = p.dst;
    const int nd = dd.ndims();
    parallel_for_each_index(dd.padded_dims(), [&](const dim_t *idx) {
        bool inside = true;
        for (int d = 0; d < nd; ++d) inside = inside && idx[d] < sd.dim(d);
        dst[dd.offset(idx)] = inside ? src[sd.offset(idx)] : 0.f;
    });
}

void reorder_copy(const reorder_prb_t &p, const float *src, float *dst) {
    const dim_t n = p.dst.nelems_padded();
    parallel_for(n, 1 << 16, [&](dim_t b, dim_t e) { std::memcpy(dst + b, src + b, (e - b) * sizeof(float)); });
}

// ---- scalar plain <-> blocked: the same loops as the SIMD kernels, one element at a time ----
void reorder_act_scalar(const reorder_prb_t &p, const float *src, float *dst) {
    const dim_t blk = p.blk, CB = div_up(p.C, blk), S = p.S, C = p.C;
    const dim_t c_stride = p.channels_last ? 1 : S, s_stride = p.channels_last ? C : 1;
    const bool to_blocked = p.kind == reorder_prb_t::kind_t::act_to_blocked;
    parallel_for(p.N * CB, 1, [&](dim_t b, dim_t e) {
        for (dim_t ncb = b; ncb < e; ++ncb) {
            const dim_t n = ncb / CB, c0 = (ncb % CB) * blk;
            const dim_t c_valid = std::min(blk, C - c0);
            const dim_t plain0 = n * C * S + c0 * c_stride, blocked0 = ncb * S * blk;
            for (dim_t s = 0; s < S; ++s) {
                for (dim_t c = 0; c < blk; ++c) {
                    const dim_t po = plain0 + c * c_stride + s * s_stride, bo = blocked0 + s * blk + c;
                    if (to_blocked) dst[bo] = c < c_valid ? src[po] : 0.f;
                    else if (c < c_valid) dst[po] = src[bo];
                }
            }
        }
    });
}

// Either way the blocked side is walked in memory order: a (g, ob, ib) block's plain rows are
// 16 (or 8) runs of blk * SP floats, which stay in cache while the block is read or written.
void reorder_wei_scalar(const reorder_prb_t &p, const float *src, float *dst) {
    const dim_t blk = p.blk, OB = div_up(p.O, blk), IB = div_up(p.I, blk);
    const dim_t O = p.O, I = p.I, SP = p.SP;
    const bool to_blocked = p.kind == reorder_prb_t::kind_t::wei_to_blocked;
    parallel_for(p.G * OB, 1, [&](dim_t b, dim_t e) {
        for (dim_t gob = b; gob < e; ++gob) {
            const dim_t g = gob / OB, ob = gob % OB;
            dim_t bo = gob * IB * SP * blk * blk; // blocked offset
            for (dim_t ib = 0; ib < IB; ++ib)
                for (dim_t sp = 0; sp < SP; ++sp)
                    for (dim_t i = 0; i < blk; ++i)
                        for (dim_t o = 0; o < blk; ++o, ++bo) {
                            const dim_t oo = ob * blk + o, ii = ib * blk + i;
                            const bool inside = oo < O && ii < I;
                            const dim_t po = ((g * O + oo) * I + ii) * SP + sp;
                            if (to_blocked) dst[bo] = inside ? src[po] : 0.f;
                            else if (inside) dst[po] = src[bo];
                        }
        }
    });
}

// ---- nC*8c <-> nC*16c: per image and pixel, runs of 8 channels, which both blocks hold whole ----
// A task per (image, dst block) walks the pixels in order, reading one src block (16 -> 8) or
// two (8 -> 16) at the same pixel; dst's channels past C are written with zeros.
void reorder_act_reblock(const reorder_prb_t &p, const float *src, float *dst) {
    constexpr dim_t run = 8;
    const dim_t sb = p.blk, db = p.dst_blk, C = p.C, S = p.S;
    const dim_t scb = div_up(C, sb), dcb = div_up(C, db);
    parallel_for(p.N * dcb, 1, [&](dim_t b, dim_t e) {
        for (dim_t ncb = b; ncb < e; ++ncb) {
            const dim_t n = ncb / dcb, c0 = ncb % dcb * db;
            float *d = dst + ncb * S * db;
            for (dim_t s = 0; s < S; ++s, d += db)
                for (dim_t c = c0; c < c0 + db; c += run) {
                    const dim_t valid = std::clamp<dim_t>(C - c, 0, run);
                    if (valid > 0) std::copy_n(src + ((n * scb + c / sb) * S + s) * sb + c % sb, valid, d + (c - c0));
                    std::fill(d + (c - c0) + valid, d + (c - c0) + run, 0.f);
                }
        }
    });
}

// ---- two layouts without blocks: a permutation of the dims ----
// Dims of size 1 take no part. Where one dim is innermost in both layouts, each combination of
// the others is a run contiguous in both: a copy. Otherwise the dim innermost in dst (a) and the
// one innermost in src (b) make, for each combination of the others, a transpose, in tiles of
// 32 x 32 floats whose src and dst lines stay in L1 while the tile is copied.
void reorder_permute(const reorder_prb_t &p, const float *src, float *dst) {
    struct axis_t {
        dim_t size, ss, ds; // size, src stride, dst stride
    };
    const tensor_desc &sd = p.src, &dd = p.dst;
    std::vector<axis_t> axes;
    int a = -1, b = -1;
    for (int k = 0; k < sd.ndims(); ++k) {
        if (sd.dim(k) == 1) continue;
        axes.push_back({sd.dim(k), sd.stride(k), dd.stride(k)});
        if (axes.back().ds == 1) a = static_cast<int>(axes.size()) - 1;
        if (axes.back().ss == 1) b = static_cast<int>(axes.size()) - 1;
    }
    if (axes.empty()) {
        dst[0] = src[0];
        return;
    }
    std::vector<axis_t> rest; // the other dims
    for (int k = 0; k < static_cast<int>(axes.size()); ++k)
        if (k != a && k != b) rest.push_back(axes[static_cast<std::size_t>(k)]);
    dim_t combos = 1;
    for (const axis_t &r : rest) combos *= r.size;
    // The offsets of combination c in src and dst.
    auto offsets = [&](dim_t c, dim_t &so, dim_t &d_o) {
        so = d_o = 0;
        for (auto it = rest.rbegin(); it != rest.rend(); ++it) {
            const dim_t i = c % it->size;
            c /= it->size;
            so += i * it->ss;
            d_o += i * it->ds;
        }
    };
    const axis_t A = axes[static_cast<std::size_t>(a)], B = axes[static_cast<std::size_t>(b)];
    if (a == b) {
        parallel_for(combos, std::max<dim_t>(1, 4096 / A.size), [&](dim_t c0, dim_t c1) {
            for (dim_t c = c0; c < c1; ++c) {
                dim_t so, d_o;
                offsets(c, so, d_o);
                std::copy_n(src + so, A.size, dst + d_o);
            }
        });
        return;
    }
    constexpr dim_t tile = 32;
    const dim_t ta = div_up(A.size, tile), tb = div_up(B.size, tile);
    parallel_for(combos * ta * tb, 1, [&](dim_t t0, dim_t t1) {
        for (dim_t t = t0; t < t1; ++t) {
            dim_t so, d_o;
            offsets(t / (ta * tb), so, d_o);
            const dim_t a0 = t / tb % ta * tile, b0 = t % tb * tile;
            const dim_t a1 = std::min(A.size, a0 + tile), b1 = std::min(B.size, b0 + tile);
            for (dim_t ib = b0; ib < b1; ++ib)
                for (dim_t ia = a0; ia < a1; ++ia) dst[d_o + ia + ib * B.ds] = src[so + ia * A.ss + ib];
        }
    });
}

// ---- nc[d][h]w <-> n[d][h]wc: per image a rows x cols matrix into its transpose ----
// Tiles of 32 x 32 floats: a tile's 32 src rows and 32 dst rows (4 KiB each) stay in L1 while
// it is copied, so every line is read and written once. The inner loop writes dst rows
// contiguously.
void reorder_transpose(const reorder_prb_t &p, const float *src, float *dst) {
    const dim_t rows = p.rows(), cols = p.cols();
    constexpr dim_t tile = 32;
    const dim_t rt = div_up(rows, tile), ct = div_up(cols, tile);
    parallel_for(p.N * rt * ct, 1, [&](dim_t b, dim_t e) {
        for (dim_t t = b; t < e; ++t) {
            const dim_t n = t / (rt * ct), r0 = t / ct % rt * tile, c0 = t % ct * tile;
            transpose_elems(src + n * rows * cols, dst + n * rows * cols, rows, cols, r0, std::min(rows, r0 + tile), c0,
                    std::min(cols, c0 + tile));
        }
    });
}

// ---- the table ----
using kind_t = reorder_prb_t::kind_t;

bool accept_same(const reorder_prb_t &p, std::string &why) {
    if (p.kind == kind_t::same) return true;
    why = "layouts differ";
    return false;
}

bool accept_act(const reorder_prb_t &p, std::string &why) {
    if (p.kind == kind_t::act_to_blocked || p.kind == kind_t::act_from_blocked) return true;
    why = "not plain <-> blocked activations";
    return false;
}

bool accept_wei_scalar(const reorder_prb_t &p, std::string &why) {
    if (p.kind == kind_t::wei_to_blocked || p.kind == kind_t::wei_from_blocked) return true;
    why = "not plain <-> [g]OI*{8i8o,16i16o} weights";
    return false;
}

bool accept_wei(const reorder_prb_t &p, std::string &why) {
    if (p.kind != kind_t::wei_to_blocked) {
        why = "not plain -> [g]OI*{8i8o,16i16o} weights";
        return false;
    }
    // The gather kernels index source rows with int32 offsets of up to (blk-1)*I*SP elements.
    if ((p.blk - 1) * p.I * p.SP >= (dim_t(1) << 31)) {
        why = cat("i*spatial = ", p.I * p.SP, " overflows the gather's int32 index");
        return false;
    }
    return true;
}

// The kernels that take blocks of 16 only: what `accepted` (accept_act or accept_wei) said,
// then the block (`what`: "channel" or "weight").
bool accept_blk16(bool accepted, const reorder_prb_t &p, const char *what, std::string &why) {
    if (!accepted) return false;
    if (p.blk == 16) return true;
    why = cat(what, " block ", p.blk, " is not 16");
    return false;
}

bool accept_act16(const reorder_prb_t &p, std::string &why) {
    return accept_blk16(accept_act(p, why), p, "channel", why);
}

bool accept_wei16(const reorder_prb_t &p, std::string &why) {
    return accept_blk16(accept_wei(p, why), p, "weight", why);
}

bool accept_transpose(const reorder_prb_t &p, std::string &why) {
    if (p.kind == kind_t::act_transpose) return true;
    why = "not channels-first <-> channels-last activations";
    return false;
}

bool accept_reblock(const reorder_prb_t &p, std::string &why) {
    // Both blocks hold whole runs of 8 channels.
    if (p.kind == kind_t::act_reblock && p.blk % 8 == 0 && p.dst_blk % 8 == 0) return true;
    why = "not nC*8c <-> nC*16c activations";
    return false;
}

bool accept_permute(const reorder_prb_t &p, std::string &why) {
    if (p.kind == kind_t::plain_permute) return true;
    why = "not two layouts without blocks";
    return false;
}

bool accept_via_plain(const reorder_prb_t &p, std::string &why) {
    if (p.kind == kind_t::via_plain) return true;
    why = "no path of two fast steps through the plain layout";
    return false;
}

bool accept_any(const reorder_prb_t &, std::string &) { return true; }

void reorder_via_plain(const reorder_prb_t &p, const float *src, float *dst);

using entry_t = impl_entry_t<reorder_prb_t, reorder_fn_t>;
constexpr entry_t reorder_impls[] = {
        {"copy", isa::scalar, accept_same, reorder_copy},
        {"simd:avx512_core:act", isa::avx512_core, accept_act16, reorder_act_avx512},
        {"simd:avx512_core:wei", isa::avx512_core, accept_wei16, reorder_wei_avx512},
        {"simd:avx2:act", isa::avx2, accept_act, reorder_act_avx2},
        {"simd:avx2:wei", isa::avx2, accept_wei, reorder_wei_avx2},
        {"simd:avx2:transpose", isa::avx2, accept_transpose, reorder_transpose_avx2},
        {"scalar:act", isa::scalar, accept_act, reorder_act_scalar},
        {"scalar:wei", isa::scalar, accept_wei_scalar, reorder_wei_scalar},
        {"scalar:transpose", isa::scalar, accept_transpose, reorder_transpose},
        {"scalar:reblock", isa::scalar, accept_reblock, reorder_act_reblock},
        {"scalar:permute", isa::scalar, accept_permute, reorder_permute},
        {"via_plain", isa::scalar, accept_via_plain, reorder_via_plain},
        {"ref", isa::scalar, accept_any, reorder_ref},
};

void check_pair(const tensor_desc &src, const tensor_desc &dst) {
    if (src.ndims() == 0) fail(status::invalid_arguments, "reorder: src is empty");
    if (dst.ndims() == 0) fail(status::invalid_arguments, "reorder: dst is empty");
    if (src.dt() != dst.dt())
        fail(status::invalid_arguments, "reorder: src data type ", to_string(src.dt()), " differs from dst's ",
                to_string(dst.dt()));
    if (!same_family(src.tag(), dst.tag()))
        fail(status::invalid_arguments, "reorder: src layout ", to_string(src.tag()), " and dst layout ",
                to_string(dst.tag()), " describe different kinds of tensor");
    if (src.dims() != dst.dims())
        fail(status::invalid_arguments, "reorder: src dims ", src.str(), " differ from dst dims ", dst.str());
}

std::string prb_str(const tensor_desc &src, const tensor_desc &dst) {
    return cat("src:", src.str(), " dst:", dst.str());
}

const entry_t &pick(const reorder_prb_t &p) {
    return dispatch<reorder_prb_t, reorder_fn_t>(reorder_impls, p, "reorder", prb_str(p.src, p.dst));
}

// ---- two steps through the plain layout, each on its own row ----
// The plain tensor is a buffer of this call: the steps' rows are the fast ones the pairs with
// a plain side have, and the generic reference they replace costs far more than the extra pass.
void reorder_via_plain(const reorder_prb_t &p, const float *src, float *dst) {
    const tensor_desc mid(p.src.dims(), p.src.dt(), p.mid);
    aligned_vector<float> buf(static_cast<std::size_t>(mid.nelems_padded()));
    const reorder_prb_t first = make_reorder_prb(p.src, mid), second = make_reorder_prb(mid, p.dst);
    pick(first).run(first, src, buf.data());
    pick(second).run(second, buf.data(), dst);
}

// The family's plain layout of d's rank: nc[d][h]w for activations, [g]oi[d][h]w for weights;
// undef for the others.
format_tag plain_of_family(const tensor_desc &d) {
    const layout_info_t &li = layout_info(d.tag());
    const int nd = d.ndims();
    if (li.family == layout_family::activation && nd >= 2 && nd <= 5) return plain_act_tag(nd);
    if (li.family != layout_family::weights) return format_tag::undef;
    const bool grouped = li.dim_letter[0] == 'g';
    if (grouped ? nd < 4 || nd > 6 : nd < 2 || nd > 5) return format_tag::undef;
    return plain_weights_tag(grouped ? nd - 1 : nd, grouped);
}

} // namespace

reorder_prb_t make_reorder_prb(const tensor_desc &src, const tensor_desc &dst) {
    reorder_prb_t p;
    p.src = src;
    p.dst = dst;
    const format_tag st = src.tag(), dt = dst.tag();
    if (st == dt) {
        p.kind = reorder_prb_t::kind_t::same;
    } else if (is_plain_act(st) && is_blocked_act(dt)) {
        p.kind = reorder_prb_t::kind_t::act_to_blocked;
    } else if (is_blocked_act(st) && is_plain_act(dt)) {
        p.kind = reorder_prb_t::kind_t::act_from_blocked;
    } else if (is_plain_wei(st) && is_blocked_io_wei(dt) && same_groups(st, dt)) {
        p.kind = reorder_prb_t::kind_t::wei_to_blocked;
    } else if (is_blocked_io_wei(st) && is_plain_wei(dt) && same_groups(st, dt)) {
        p.kind = reorder_prb_t::kind_t::wei_from_blocked;
    } else if (is_plain_wei(st) && is_blocked_g_wei(dt) && is_grouped_weights_tag(st)) {
        p.kind = reorder_prb_t::kind_t::act_to_blocked;
    } else if (is_blocked_g_wei(st) && is_plain_wei(dt) && is_grouped_weights_tag(dt)) {
        p.kind = reorder_prb_t::kind_t::act_from_blocked;
    } else if ((is_blocked_act(st) && is_blocked_act(dt)) || (is_blocked_g_wei(st) && is_blocked_g_wei(dt))) {
        // Same dims, so the blocks differ.
        p.kind = reorder_prb_t::kind_t::act_reblock;
        set_act_view(p, src);
        p.blk = static_cast<int>(src.block_of(channel_dim(src)));
        p.dst_blk = static_cast<int>(dst.block_of(channel_dim(dst)));
    } else if (is_plain_act(st) && is_plain_act(dt)) { // same dims, so one is channels-last
        p.kind = reorder_prb_t::kind_t::act_transpose;
        p.N = src.dim(0);
        p.C = src.dim(1);
        p.S = spatial(src, 2);
        p.channels_last = is_channels_last(st);
    }
    if (p.kind == reorder_prb_t::kind_t::generic && layout_info(st).nblks == 0 && layout_info(dt).nblks == 0)
        p.kind = reorder_prb_t::kind_t::plain_permute;
    if (p.kind == reorder_prb_t::kind_t::generic) {
        // Each step has a plain side, and neither is this pair again, so this ends.
        const format_tag mid = plain_of_family(src);
        if (mid != format_tag::undef && mid != st && mid != dt) {
            const tensor_desc m(src.dims(), src.dt(), mid);
            using k = reorder_prb_t::kind_t;
            if (make_reorder_prb(src, m).kind != k::generic && make_reorder_prb(m, dst).kind != k::generic) {
                p.kind = k::via_plain;
                p.mid = mid;
            }
        }
    }
    using k = reorder_prb_t::kind_t;
    if (p.kind == k::act_to_blocked || p.kind == k::act_from_blocked) {
        const tensor_desc &plain = p.kind == k::act_to_blocked ? src : dst;
        const tensor_desc &blocked = p.kind == k::act_to_blocked ? dst : src;
        set_act_view(p, plain);
        p.channels_last = is_channels_last(plain.tag());
        p.blk = static_cast<int>(blocked.block_of(channel_dim(blocked)));
    } else if (p.kind == k::wei_to_blocked || p.kind == k::wei_from_blocked) {
        const tensor_desc &plain = p.kind == k::wei_to_blocked ? src : dst;
        const tensor_desc &blocked = p.kind == k::wei_to_blocked ? dst : src;
        const bool grouped = layout_info(plain.tag()).dim_letter[0] == 'g';
        p.G = grouped ? plain.dim(0) : 1;
        p.O = plain.dim(grouped ? 1 : 0);
        p.I = plain.dim(grouped ? 2 : 1);
        p.SP = spatial(plain, grouped ? 3 : 2);
        p.blk = static_cast<int>(blocked.block_of(grouped ? 1 : 0));
    }
    // Non-temporal stores pay off once src and dst together overflow the last-level cache.
    p.stream_stores = src.size_bytes() + dst.size_bytes() > static_cast<std::size_t>(machine_model().l3_bytes);
    return p;
}

void transpose_elems(const float *src, float *dst, dim_t rows, dim_t cols, dim_t r0, dim_t r1, dim_t c0, dim_t c1) {
    for (dim_t c = c0; c < c1; ++c)
        for (dim_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
}

} // namespace blockdnn::impl

namespace blockdnn {

using namespace impl;

namespace {

// A reorder whose pair was checked: what running it needs.
struct checked_reorder_t {
    reorder_prb_t p;
    const entry_t *e;
    const float *s;
    float *d;
};

checked_reorder_t check_reorder(const tensor &src, const tensor &dst) {
    if (src.empty()) fail(status::invalid_arguments, "reorder: src tensor has no memory");
    if (dst.empty()) fail(status::invalid_arguments, "reorder: dst tensor has no memory");
    check_pair(src.desc(), dst.desc());
    check_no_overlap("reorder", "dst", dst, "src", src);
    const reorder_prb_t p = make_reorder_prb(src.desc(), dst.desc());
    // f32() checks the data type now, so a bad one throws at the call.
    return {p, &pick(p), src.f32(), dst.f32()};
}

} // namespace

void reorder(const tensor &src, const tensor &dst) {
    const checked_reorder_t r = check_reorder(src, dst);
    launch(
            {"reorder", r.e->name, effective_isa(), nullptr}, {&src, &dst},
            [&] { return prb_str(src.desc(), dst.desc()); }, [r] { r.e->run(r.p, r.s, r.d); });
}

void impl::reorder_now(const tensor &src, const tensor &dst) {
    const checked_reorder_t r = check_reorder(src, dst);
    const std::string line =
            exec_line("reorder", r.e->name, effective_isa(), [&] { return prb_str(src.desc(), dst.desc()); });
    run_op("reorder", get_denormals_mode(), line, [&] { r.e->run(r.p, r.s, r.d); });
}

tensor reorder(const tensor &src, format_tag tag) {
    if (src.empty()) fail(status::invalid_arguments, "reorder: src tensor has no memory");
    if (tag == format_tag::undef) fail(status::invalid_arguments, "reorder: dst layout is undef");
    check_not_any("reorder", "dst", tag);
    if (!is_format_tag(tag))
        fail(status::invalid_arguments, "reorder: dst layout ", static_cast<int>(tag), " is not a format_tag value");
    if (ndims_of(tag) != src.desc().ndims())
        fail(status::invalid_arguments, "reorder: layout ", to_string(tag), " needs ", ndims_of(tag), " dims, src ",
                src.desc().str(), " has ", src.desc().ndims());
    tensor dst(tensor_desc(src.desc().dims(), src.desc().dt(), tag));
    reorder(src, dst);
    return dst;
}

std::string reorder_impl_name(const tensor_desc &src, const tensor_desc &dst) {
    check_pair(src, dst);
    return pick(make_reorder_prb(src, dst)).name;
}

format_tag blocked_tag_for(const tensor_desc &desc) {
    const bool b16 = effective_isa() == isa::avx512_core;
    using ft = format_tag;
    switch (desc.tag()) {
    case ft::ncw:
    case ft::nwc: return b16 ? ft::nCw16c : ft::nCw8c;
    case ft::nchw:
    case ft::nhwc: return b16 ? ft::nChw16c : ft::nChw8c;
    case ft::ncdhw:
    case ft::ndhwc: return b16 ? ft::nCdhw16c : ft::nCdhw8c;
    case ft::oiw: return b16 ? ft::OIw16i16o : ft::OIw8i8o;
    case ft::oihw: return b16 ? ft::OIhw16i16o : ft::OIhw8i8o;
    case ft::oidhw: return b16 ? ft::OIdhw16i16o : ft::OIdhw8i8o;
    case ft::goiw:
    case ft::goihw:
    case ft::goidhw: {
        const bool dw = desc.dim(1) == 1 && desc.dim(2) == 1;
        const int nd = desc.ndims();
        if (dw)
            return nd == 4    ? (b16 ? ft::Goiw16g : ft::Goiw8g)
                    : nd == 5 ? (b16 ? ft::Goihw16g : ft::Goihw8g)
                              : (b16 ? ft::Goidhw16g : ft::Goidhw8g);
        return nd == 4    ? (b16 ? ft::gOIw16i16o : ft::gOIw8i8o)
                : nd == 5 ? (b16 ? ft::gOIhw16i16o : ft::gOIhw8i8o)
                          : (b16 ? ft::gOIdhw16i16o : ft::gOIdhw8i8o);
    }
    default: return desc.tag();
    }
}

format_tag plain_tag_for(format_tag tag) {
    using ft = format_tag;
    if (!is_format_tag(tag))
        fail(status::invalid_arguments, "plain_tag_for: format tag ", static_cast<int>(tag),
                " is not a format_tag value");
    switch (tag) {
    case ft::nCw8c:
    case ft::nCw16c: return ft::ncw;
    case ft::nChw8c:
    case ft::nChw16c: return ft::nchw;
    case ft::nCdhw8c:
    case ft::nCdhw16c: return ft::ncdhw;
    case ft::OIw8i8o:
    case ft::OIw16i16o: return ft::oiw;
    case ft::OIhw8i8o:
    case ft::OIhw16i16o: return ft::oihw;
    case ft::OIdhw8i8o:
    case ft::OIdhw16i16o: return ft::oidhw;
    case ft::gOIw8i8o:
    case ft::gOIw16i16o:
    case ft::Goiw8g:
    case ft::Goiw16g: return ft::goiw;
    case ft::gOIhw8i8o:
    case ft::gOIhw16i16o:
    case ft::Goihw8g:
    case ft::Goihw16g: return ft::goihw;
    case ft::gOIdhw8i8o:
    case ft::gOIdhw16i16o:
    case ft::Goidhw8g:
    case ft::Goidhw16g: return ft::goidhw;
    default: return tag;
    }
}

tensor to_blocked(const tensor &src) {
    if (src.empty()) fail(status::invalid_arguments, "to_blocked: src tensor has no memory");
    const format_tag t = blocked_tag_for(src.desc());
    return t == src.desc().tag() ? src : reorder(src, t);
}

tensor to_dense(const tensor &src) {
    if (src.empty()) fail(status::invalid_arguments, "to_dense: src tensor has no memory");
    const format_tag t = plain_tag_for(src.desc().tag());
    return t == src.desc().tag() ? src : reorder(src, t);
}

} // namespace blockdnn
