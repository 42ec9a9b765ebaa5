// SPDX-License-Identifier: Apache-2.0
// init_conf of the forward convolution kernels (direct, first-layer, depthwise): which
// problems each takes, and the register and cache blocking (ur_w x nb_oc_blocking
// accumulators, rows per call, ic and oc chunks), chosen with a small cost model.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>

#include "core/lru_map.hpp"
#include "core/machine_model.hpp"
#include "core/utils.hpp"
#include "jit/jit_kernel_cache.hpp"
#include "ops/conv/conv_conf.hpp"
#include "ops/conv/jit_conv_fwd_kernel.hpp"
#include "tensor/layout.hpp"

namespace blockdnn::impl {

namespace {

// The blocking heuristics read the core and caches from the machine model. It holds the
// FMA latency; a block's accumulators must also cover the loads and stores that delay some
// FMAs, so the cost model counts this many cycles more.
constexpr double fma_latency_margin = 1;
// Weights a call may read per block and still find in L1 at the next block: this fraction of L1d.
constexpr long l1_weights_share = 2;
// Cycles of one kernel call outside its blocks (driver bookkeeping, entry, exit).
constexpr double call_cycles = 200;
// Weights of one kernel call (and of one outer oc chunk) are kept under this fraction of L2,
// leaving the rest for the src rows and dst row they meet.
constexpr long l2_weights_share = 2;
// At most this many weight vectors per ic step: beyond it the accumulators per weight drop
// below 2 on AVX2 and the FMAs start waiting on loads.
constexpr int max_wei_vecs = 4;
// AVX-512 direct kernels (unless one oc group takes all oc blocks, below) on a core that splits
// each zmm FMA over two 256-bit pipes use 2 weight vectors by at most 7 pixels. The cost model
// ties every blocking that keeps the FMAs busy, so it cannot rank them; 2 x 7 is the tie-break
// that ran fastest there (docs/tuning.md, "Conv blocking on AVX-512").
constexpr int zmm_wei_vecs = 2;
constexpr int max_zmm_ur_w = 7;
// Longest row a 1x1 convolution's pixels are regrouped into.
constexpr dim_t max_flat_row = 1024;
// A regrouped row's src (its pixels over the whole reduction) is read again by every oc-block
// group of its chunk. Past this fraction of L2 those reads miss it, which the cost model's load
// counts do not see, so longer rows stop there (docs/tuning.md, "Conv: 1x1 src rows in L2").
constexpr long l2_src_row_share = 8;
// Rows up to this many pixels are taken whatever their src: shorter ones pay more in call
// overhead and block tails than the misses cost.
constexpr dim_t min_bounded_row = 64;
// Channels-last images of fewer pixels than this fold into one run of pixels (regroup_pointwise):
// a row per image would leave short register blocks and many calls, as rows shorter than
// min_bounded_row do. On 7x7 images (49 pixels) the fold measured from 2% faster to 1% slower
// (docs/tuning.md, "Conv: channels-last small images fold into one run of pixels").
constexpr dim_t max_folded_image = 64;
// Most pixels a call over several rows may hold: its blocks are all unrolled.
constexpr dim_t max_unrolled_pixels = 64;
// Least number of (image, row, oc-block group) work items a regrouping may leave.
constexpr dim_t min_work_items = 16;
// A strided 1x1 convolution is reduced to unit stride (conv_conf_t::rtus) when its copy of an
// image fits the cache and the FMAs that read each copied float take enough cycles: the copy,
// which reads the user's src from memory before the image's calls, then costs a few percent
// of their time. A copy within l2_rtus_copy_share of L2 stays there beside the weights of an
// oc chunk (l2_weights_share) and needs rtus_min_fma_cycles_per_float. A larger one, up to
// the L2, presumably comes back in part from the last-level cache for each oc chunk, so it
// needs more: rtus_min_fma_cycles_per_float_past_share, a bound chosen above the first, not
// measured between them. Where each pixel's channel block fills whole cache lines (16 fp32
// channels) and the stride along w is above 1, the strided src skips lines within each row, a
// gapped stream that the copy reads once and hands on dense; there the copy paid at
// rtus_min_fma_cycles_per_float past a quarter of L2 and past the whole L2, so it is taken at
// that bound up to the thread's last-level share (a bound chosen, not measured beyond the
// L2; each thread keeps a buffer of the largest copy it made) (docs/tuning.md, "Conv: strided
// 1x1 reduced to unit stride").
constexpr long l2_rtus_copy_share = 4;
constexpr double rtus_min_fma_cycles_per_float = 32;
constexpr double rtus_min_fma_cycles_per_float_past_share = 64;
constexpr dim_t cache_line_bytes = 64;
// Least share of the estimated time a direct kernel's tail group must save (pick_blocking).
constexpr double min_direct_tail_gain = 0.05;
// Least share of the estimated time weights read by the FMAs (conv_conf_t::wei_mem_vecs) must
// save (pick_blocking): each such FMA is a load the model counts at the ports' rate alone.
constexpr double min_wei_mem_gain = 0.05;
// Most input channels the first-layer kernel unrolls (its whole reduction per tap).
constexpr dim_t max_first_ic = 16;

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

// ndims of an activation tag (0 if it is not one the kernels read).
int ndims_of_act(format_tag t) {
    switch (t) {
    case format_tag::nCw16c:
    case format_tag::nCw8c:
    case format_tag::ncw:
    case format_tag::nwc: return 3;
    case format_tag::nChw16c:
    case format_tag::nChw8c:
    case format_tag::nchw:
    case format_tag::nhwc: return 4;
    case format_tag::nCdhw16c:
    case format_tag::nCdhw8c:
    case format_tag::ncdhw:
    case format_tag::ndhwc: return 5;
    default: return 0;
    }
}

bool is_plain_act(format_tag t) { return t == format_tag::ncw || t == format_tag::nchw || t == format_tag::ncdhw; }

// The most floats whose bytes a 32-bit displacement holds.
constexpr dim_t max_int32_floats = (std::numeric_limits<std::int32_t>::max() - 1) / 4;
bool fits_int32_bytes(dim_t floats) { return floats <= max_int32_floats; }

// A 1x1 convolution without padding: each dst pixel reads the one src pixel at its strides.
bool is_pointwise(const conv_desc &d) {
    return d.kd == 1 && d.kh == 1 && d.kw == 1 && !d.pd && !d.ph && !d.pw && d.pd_r <= 0 && d.ph_r <= 0 && d.pw_r <= 0;
}

// Whether a 1x1 direct convolution splits its reduction into ic chunks whose weights fit a
// call's share of L1 (init_blocking, conv_conf_t::ic_chunks_per_image), so that a call's pixel
// blocks after the first read them from L1 whatever ic is. It pays where src comes from memory
// (all the images past a core's share of the last-level cache), on AVX2: there calls over the
// whole reduction run well below their rate with src in cache, and the chunks come close to
// it. With src in cache the chunks only add dst reloads; AVX-512's longer blocks gained
// nothing from them; a copy reduced to unit stride (rtus) is one image in cache already.
// Channels-last rows and larger kernels split only for L2, and a sum keeps the whole
// reduction (docs/tuning.md, "Conv: AVX2 1x1 ic chunks per image").
bool ic_chunks_in_l1(const conv_conf_t &c, const machine_model_t &m) {
    return c.level == isa::avx2 && c.kind == conv_kernel_kind::direct && is_pointwise(c) && !c.act_nxc() && !c.has_sum()
            && !c.rtus && c.mb * c.src_n_stride() * 4 > llc_bytes_for(m, 1);
}

// Cycles of the register blocks of nvec weight vectors, the last `mem` of them read by the
// FMAs from memory: per reduction step (one input channel and kernel tap; for depthwise one
// tap) a block of u pixels is bound by FMA throughput, FMA latency, loads or, when the call's
// weights overflow L1, their L2 traffic. The model counts one FMA per pipe and cycle at either
// width; a load wider than a load port counts once per port width. All but the block's pixels
// are fixed by the conf, nvec and mem, so they are worked out once for every block size and
// row length the blocking tries.
class block_cycles_t {
public:
    block_cycles_t(const conv_conf_t &c, const machine_model_t &m, int nvec, int mem = 0)
        : nvec_(nvec), mem_(mem), depthwise_(c.kind == conv_kernel_kind::depthwise), bcast_embedded_(c.bcast_embedded) {
        const fma_unit_t &f = m.fma(c.level);
        pipes_ = f.pipes;
        vec_loads_ = static_cast<double>(c.simd_w * 4) / m.load_port_bytes;
        wei_loads_ = (nvec - mem) * vec_loads_;
        latency_ = f.latency + fma_latency_margin;
        load_ports_ = m.load_ports;
        const dim_t ic_steps = depthwise_ ? 1 : std::min<dim_t>(c.icg, c.nb_ic * c.ic_block);
        steps_ = ic_steps * c.kd * c.kh * c.kw;
        const bool from_l2 = !ic_chunks_in_l1(c, m) && steps_ * nvec * c.simd_w * 4 > m.l1d_bytes / l1_weights_share;
        l2_ = from_l2 ? static_cast<double>(nvec * c.simd_w * 4) / m.l2_bytes_per_cycle : 0;
    }

    int nvec() const { return nvec_; }
    int mem() const { return mem_; }

    // A block of u pixels over the whole reduction, which also initialises and stores its
    // u * nvec accumulators.
    double block(int u) const { return step(u) * steps_ + u * nvec_; }

private:
    double step(int u) const {
        const double fma = static_cast<double>(u * nvec_) / pipes_;
        const double src_loads = depthwise_ ? u * nvec_ * vec_loads_ : bcast_embedded_ ? u * nvec_ : u;
        const double wei_loads = wei_loads_ + u * mem_ * vec_loads_;
        return std::max({fma, latency_, (wei_loads + src_loads) / load_ports_, l2_});
    }

    int nvec_, mem_;
    bool depthwise_, bcast_embedded_;
    int pipes_ = 1, load_ports_ = 1;
    double vec_loads_ = 0, wei_loads_ = 0, latency_ = 0, l2_ = 0;
    dim_t steps_ = 0;
};

// The cycles of block sizes up to 32 pixels for each nvec up to max_wei_vecs and each count of
// weights from memory, worked out as the blocking first asks for them. They depend on the
// conf's channels and kernel, not on its rows, so the row lengths regroup_pointwise tries all
// share them.
class block_table_t {
public:
    double block(const block_cycles_t &bc, int u) {
        const int nvec = bc.nvec();
        if (nvec > max_wei_vecs || u > max_u) return bc.block(u);
        const std::size_t i = static_cast<std::size_t>((nvec - 1) * (max_wei_vecs + 1) + bc.mem());
        std::array<double, max_u> &t = cycles_[i];
        int &filled = filled_[i];
        for (; filled < u; ++filled) t[static_cast<std::size_t>(filled)] = bc.block(filled + 1);
        return t[static_cast<std::size_t>(u - 1)];
    }

private:
    static constexpr int max_u = 32;
    static constexpr std::size_t n_tables = max_wei_vecs * (max_wei_vecs + 1);
    std::array<std::array<double, max_u>, n_tables> cycles_ {};
    std::array<int, n_tables> filled_ {};
};

// Estimated cycles per (output pixel x oc vector) of a call's pixels in the blocks of `split`.
double row_cost(const block_cycles_t &bc, block_table_t &table, dim_t pixels, const conv_ur_split_t &split) {
    const double cycles = split.n_large * table.block(bc, split.large)
            + (split.n_small ? split.n_small * table.block(bc, split.small) : 0.0) + call_cycles;
    return cycles / (pixels * bc.nvec());
}

struct blocking_t {
    int nbo = 0, u = 0;
    int tail = 0; // blocks of the last group, if nbo does not divide nb_oc
    int mem = 0;  // weight vectors read by the FMAs from memory
    double cost = std::numeric_limits<double>::max();
    int min_block_fmas = 0; // FMAs per step of the smallest pixel block (the row's last, if smaller)
    int block_fmas = 0;     // FMAs per step of a full block
};

// Register blocking: nb_oc_blocking (a divisor of nb_oc, or any count up to it with a
// smaller last group) x ur_w pixels with the least estimated cost within the register budget
// (and the hints).
blocking_t pick_blocking(
        const conv_conf_t &c, const machine_model_t &m, const conv_conf_hint_t &hint, block_table_t &table) {
    blocking_t best;
    // A broadcast register, unless src comes as memory operands (embedded, depthwise).
    const int bcast = c.bcast_embedded || c.kind == conv_kernel_kind::depthwise ? 0 : 1;
    // A 1x1 convolution whose oc blocks all fit one call takes them all: it then reads each src
    // row once, where split over oc groups every group reads it again from outside L2, which
    // the model's load counts miss (docs/tuning.md, "Conv: one oc group for 1x1").
    const bool one_oc_group = c.kind == conv_kernel_kind::direct && c.kd == 1 && c.kh == 1 && c.kw == 1
            && c.nb_oc * c.oc_vecs <= max_wei_vecs;
    const bool zmm_2x7 = c.kind == conv_kernel_kind::direct && c.simd_w == 16 && !m.avx512.full_width && !one_oc_group
            && c.nb_oc % zmm_wei_vecs == 0 && hint.nb_oc_blocking <= 0 && hint.ur_w <= 0;
    // Depthwise groups may end in a smaller one, run by a kernel of its own: with nb_oc prime
    // (5, 7, 13 blocks) the divisors leave one block per call, which reads a pixel's channels
    // a line at a time and pays a call per block and row (docs/tuning.md, "Conv: depthwise
    // groups with a tail").
    // Direct kernels' groups may too, unless a rule above fixes them; their best with a tail
    // is kept apart and weighed against the best whole groups after the search.
    const bool tail_group = c.kind == conv_kernel_kind::depthwise
            || (c.kind == conv_kernel_kind::direct && (!one_oc_group || hint.nb_oc_blocking > 0) && !zmm_2x7);
    blocking_t tailed;   // a direct kernel's best blocking with a tail group
    blocking_t from_mem; // its best blocking with weights read by the FMAs
    // Weights read by the FMAs from memory: direct kernels with a broadcast register on AVX2,
    // whose 16 registers leave few accumulators beside a 16-channel block's two weight vectors
    // (7-pixel rows: 2 x 4, then 2 x 3, where 2 x 7 fits only with a weight in memory). On
    // AVX-512 the 32 registers hold the blockings the model asks for; a hint may still ask.
    const bool offer_from_mem = c.can_read_wei_in_fmas() && (c.level == isa::avx2 || hint.wei_mem_vecs > 0);
    // An AVX2 channels-last dst with a partial last block reads and writes it through a mask in
    // the last register, beside the sum's temporary: two registers past the accumulators.
    const int dst_mask_temps = c.level == isa::avx2 && c.act_nxc() && c.oc_tail ? 2 : 0;
    for (int nbo = 1; nbo <= c.nb_oc; ++nbo) {
        const int tail = static_cast<int>(c.nb_oc % nbo);
        if (tail && !tail_group) continue;
        if (hint.nb_oc_blocking > 0 ? nbo != hint.nb_oc_blocking : one_oc_group && nbo != c.nb_oc) continue;
        if (zmm_2x7 && nbo * c.oc_vecs != zmm_wei_vecs) continue;
        const int nvec = nbo * c.oc_vecs;
        if (nvec > max_wei_vecs && hint.nb_oc_blocking <= 0) continue;
        const dim_t pixels = c.oh_block * c.ow;
        const block_cycles_t bc_tail(c, m, tail ? tail * c.oc_vecs : nvec); // read only with a tail
        // A tail group's kernel holds all its weights in registers.
        for (int mem = 0; mem <= (offer_from_mem && !tail ? nvec : 0); ++mem) {
            if (hint.wei_mem_vecs >= 0 && mem != hint.wei_mem_vecs) continue;
            const int temps = std::max({nvec - mem + bcast, c.n_post_temps, dst_mask_temps});
            const int u_max = static_cast<int>(std::min<dim_t>((c.n_vregs - temps) / nvec, pixels));
            const block_cycles_t bc(c, m, nvec, mem);
            blocking_t &into = mem ? from_mem : tail && c.kind == conv_kernel_kind::direct ? tailed : best;
            dim_t last_blocks = 0;
            for (int u = 1; u <= u_max; ++u) {
                if ((hint.ur_w > 0 && u != hint.ur_w) || (zmm_2x7 && u > max_zmm_ur_w)) continue;
                // Balanced blocks depend on u only through their number: a u that splits the row
                // into as many blocks as the last one tried splits it the same way, and an equal
                // candidate never displaces the best (below).
                const dim_t blocks = div_up(pixels, u);
                if (c.ur_balanced && blocks == last_blocks) continue;
                last_blocks = blocks;
                // Blocks of at most u pixels are balanced; the largest may hold fewer than u (7
                // pixels at u = 6 are 4 + 3), and that is the ur_w the conf records.
                const conv_ur_split_t split = conv_ur_split(pixels, u, c.ur_balanced);
                // Per oc vector over all groups: the tail group's vectors at its own cost.
                const double cost = tail ? (row_cost(bc, table, pixels, split) * (c.nb_oc - tail)
                                                   + row_cost(bc_tail, table, pixels, split) * tail)
                                / static_cast<double>(c.nb_oc)
                                         : row_cost(bc, table, pixels, split);
                const int min_fmas = (split.n_small ? split.small : split.large) * nvec;
                // Ties (the model's latency margin hides the difference) go first to the larger
                // smallest block, whose FMAs wait least on latency, then to more pixels per
                // block: each weight vector then serves more FMAs.
                const bool tie = cost < into.cost + 1e-9;
                if (cost < into.cost - 1e-9
                        || (tie
                                && (min_fmas > into.min_block_fmas
                                        || (min_fmas == into.min_block_fmas
                                                && split.large * nvec > into.block_fmas)))) {
                    into.cost = cost;
                    into.nbo = nbo;
                    into.tail = tail;
                    into.mem = mem;
                    into.u = split.large;
                    into.min_block_fmas = min_fmas;
                    into.block_fmas = split.large * nvec;
                }
            }
        }
    }
    // A direct kernel's tail group is a second kernel (its generation, its code beside the
    // first's in the i-cache) and runs fewer weight vectors than the others, which the model's
    // load counts flatter. So it replaces the best whole groups only where those leave the FMAs
    // short, and only for a clear saving: where nb_oc's divisors leave one weight vector (each
    // FMA then waits on a broadcast of its own; oc 80, 112, 208 on 16-channel blocks), or a
    // smallest block of fewer FMAs than the latency keeps in flight (7-pixel rows on AVX2: 2
    // oc blocks x 4 pixels, then x 3, where 3 blocks x 4 and a last group of 1 fill the
    // registers) (docs/tuning.md, "Conv: direct oc groups with a tail"). A hint for groups
    // that do not divide nb_oc leaves no whole ones, so it gets its tail.
    const fma_unit_t &f = m.fma(c.level);
    const auto latency_bound = [&](const blocking_t &b) { return b.min_block_fmas < f.latency * f.pipes; };
    if (tailed.u && (!best.u || best.nbo * c.oc_vecs == 1 || latency_bound(best))
            && tailed.cost < best.cost * (1 - min_direct_tail_gain))
        best = tailed;
    // Weights read by the FMAs cost a load each, and where the weights stream from L2 the model
    // rates the blocks that read fewer vectors a step well above what they run at. So they too
    // replace the best only for a clear saving, and only where a block of it leaves the FMAs
    // waiting on their latency (16-channel blocks on AVX2 over 7-pixel rows: 2 vectors x 4,
    // then x 3 pixels, where 2 x 7 fits with a weight in memory). Unlike the tail rule, a best
    // of one weight vector does not qualify by itself: on AVX2 each pixel's broadcast is a load
    // of its own either way. The rule holds per row length: a 1x1's rows are tried at several
    // lengths, and one whose last block is short may then win with weights from memory
    // (docs/tuning.md, "Conv: AVX2 weights read by the FMAs"). A hint for them leaves nothing
    // else; other hints that leave no blocking with the weights in registers stay refused.
    if (from_mem.u
            && (hint.wei_mem_vecs > 0
                    || (best.u && latency_bound(best) && from_mem.cost < best.cost * (1 - min_wei_mem_gain))))
        best = from_mem;
    return best;
}

// Calls visit(d) for the divisors d of n with lo < d <= hi, in ascending order, until it
// returns false. Those up to sqrt(n) are found by trial, the larger ones as the cofactors of
// the smaller: at most sqrt(n) divisions instead of one per candidate.
template <typename F>
void for_each_divisor(dim_t n, dim_t lo, dim_t hi, F &&visit) {
    for (dim_t d = lo + 1; d <= hi && d * d <= n; ++d)
        if (n % d == 0 && !visit(d)) return;
    // Cofactors n / q above sqrt(n) (q * q < n) and above lo (q * lo < n), largest q first.
    dim_t q = std::min<dim_t>(static_cast<dim_t>(std::sqrt(static_cast<double>(n))), (n - 1) / std::max<dim_t>(lo, 1));
    while (q > 0 && q * q >= n) --q;
    for (const dim_t q_min = std::max<dim_t>(1, div_up(n, hi)); q >= q_min; --q)
        if (n % q == 0 && !visit(n / q)) return;
}

// 1x1 convolutions without padding. With unit strides src pixels are read in the order dst
// pixels are written, so the spatial dims regroup into rows of any length that divides them:
// longer rows leave smaller tails (a 7x7 output becomes one 49-pixel row). Channels-last images
// lie one after another, so images shorter than max_folded_image pixels (a 1x1 or 2x2 output:
// a squeeze-and-excitation block, a classifier head) regroup with the images into one run: a
// row per image would leave blocks of a few pixels, or of one. A copy reduced to unit stride
// holds one image, so its images stay apart. With larger strides a call runs over oh_block
// rows instead, its blocks crossing row ends. (Negative end pads only leave input unread.)
void regroup_pointwise(conv_conf_t &c, const machine_model_t &m, const conv_conf_hint_t &hint, block_table_t &table,
        blocking_t &best) {
    if (!is_pointwise(c)) return;
    if (c.sd == 1 && c.sh == 1 && c.sw == 1 && c.id == c.od && c.ih == c.oh && c.iw == c.ow) {
        // The folded batch is one src plane, whose stride the kernel's 32-bit displacements
        // must hold (checked in init_blocking), and a call's row may span it: dst offsets of
        // row x oc floats. (Divided, so that no product of the user's dims can overflow.)
        const dim_t image_floats = c.od * c.oh * c.ow * std::max(c.ic, c.oc);
        const bool fold_images = c.act_nxc() && !c.rtus && c.mb > 1 && c.od * c.oh * c.ow < max_folded_image
                && image_floats <= max_int32_floats / c.mb;
        const dim_t mb = fold_images ? 1 : c.mb;
        const dim_t pixels = c.od * c.oh * c.ow * (c.mb / mb);
        dim_t best_row = c.ow;
        for_each_divisor(pixels, c.ow, std::min(pixels, max_flat_row), [&](dim_t row) {
            // Keep enough rows to split over threads.
            const dim_t groups = div_up(c.nb_oc, std::max(1, best.nbo));
            if (mb * (pixels / row) * groups < min_work_items) return false;
            const dim_t src_row_bytes = row * c.nb_ic * c.ic_block * 4;
            if (groups > 1 && row > min_bounded_row && src_row_bytes > m.l2_bytes / l2_src_row_share) return false;
            conv_conf_t f = c;
            f.mb = mb;
            f.id = f.od = 1;
            f.ih = f.oh = pixels / row;
            f.iw = f.ow = row;
            const blocking_t b = pick_blocking(f, m, hint, table);
            if (b.u && b.cost < best.cost - 1e-9) {
                best = b;
                best_row = row;
            }
            return true;
        });
        if (best_row != c.ow) {
            c.mb = mb;
            c.id = c.od = 1;
            c.ih = c.oh = pixels / best_row;
            c.iw = c.ow = best_row;
        }
    } else if (c.ow < max_unrolled_pixels) {
        int best_ohb = 1;
        for (int ohb = 2; ohb <= c.oh && ohb * c.ow <= max_unrolled_pixels; ++ohb) {
            if (c.oh % ohb || (hint.oh_block > 0 && ohb != hint.oh_block)) continue;
            if (c.mb * c.od * (c.oh / ohb) * div_up(c.nb_oc, std::max(1, best.nbo)) < min_work_items) break;
            conv_conf_t f = c;
            f.oh_block = ohb;
            const blocking_t b = pick_blocking(f, m, hint, table);
            if (b.u && (b.cost < best.cost - 1e-9 || hint.oh_block == ohb)) {
                best = b;
                best_ohb = ohb;
            }
        }
        c.oh_block = best_ohb;
    }
}

// What every kind shares: the ISA, the post-ops, the problem copied in.
status init_common(conv_conf_t &c, const conv_desc &d, format_tag src_tag, format_tag dst_tag, const post_ops &po,
        isa level, conv_kernel_kind kind, std::string &why, const conv_conf_hint_t &hint) {
    c = conv_conf_t {};
    static_cast<conv_desc &>(c) = d;
    c.src_tag = src_tag;
    c.dst_tag = dst_tag;
    c.post_ops = po.entries();
    const conv_conf_t &p = c;
    c.level = level;
    c.kind = kind;
    if (level != isa::avx2 && level != isa::avx512_core) {
        why = cat(to_string(kind), " kernel needs avx2 or avx512_core, got ", to_string(level));
        return status::unimplemented;
    }
    c.simd_w = level == isa::avx512_core ? 16 : 8;
    c.n_vregs = level == isa::avx512_core ? 32 : 16;
    // Channels-last tensors have no blocks: the kernels take them a vector of channels at a time.
    const bool nxc = is_channels_last(p.dst_tag) && kind != conv_kernel_kind::first;
    const int dblk = nxc ? c.simd_w : block_of(p.dst_tag);
    if (!dblk || ndims_of_act(p.dst_tag) != p.ndims) {
        why = cat("dst layout ", to_string(p.dst_tag), " is not nC[d]hw8c or nC[d]hw16c",
                kind == conv_kernel_kind::first ? "" : " or n[d]hwc", " with ", p.ndims, " dims");
        return status::unimplemented;
    }
    if ((nxc || is_channels_last(p.src_tag)) && p.src_tag != p.dst_tag) {
        why = cat("channels-last src and dst go together, got src ", to_string(p.src_tag), " and dst ",
                to_string(p.dst_tag));
        return status::unimplemented;
    }
    if (level == isa::avx512_core && dblk != 16) {
        why = cat("avx512_core kernels take 16-channel blocks, dst layout is ", to_string(p.dst_tag));
        return status::unimplemented;
    }
    c.ic_block = c.oc_block = dblk;
    c.oc_vecs = dblk / c.simd_w;
    c.n_post_temps = conv_post_ops_temps(c.post_ops, level);
    const bool emb = hint.bcast_embedded == 1;
    if (emb && (level != isa::avx512_core || kind == conv_kernel_kind::depthwise)) {
        why = "embedded broadcast needs avx512_core and a broadcast";
        return status::unimplemented;
    }
    c.bcast_embedded = emb;
    if (hint.wei_mem_vecs > 0 && !c.can_read_wei_in_fmas()) {
        why = cat("weights read by the FMAs (wei_mem_vecs hint ", hint.wei_mem_vecs,
                ") need a direct kernel with a broadcast register, got ", to_string(kind),
                emb ? " with embedded broadcasts" : "");
        return status::unimplemented;
    }
    return status::success;
}

// Reduces a strided 1x1 direct convolution to unit stride (conv_conf_t::rtus) where the copy
// pays or the hint asks for it; the blocking that follows is that of the unit-stride problem.
// A copied pixel holds all its channels, so g = 1. It pays on blocked src only (the channels
// of a channels-last pixel are one run of lines, which the kernel reads in place as well),
// with a copy that fits L2 (the last-level share where the strided src skips whole lines) and
// as many FMA cycles per copied float as its size asks.
status reduce_to_unit_stride(conv_conf_t &c, const machine_model_t &m, const conv_conf_hint_t &hint, std::string &why) {
    const bool strided = c.sd > 1 || c.sh > 1 || c.sw > 1;
    const bool applies = c.kind == conv_kernel_kind::direct && is_pointwise(c) && strided && c.g == 1;
    if (hint.rtus == 1 && !applies) {
        why = cat("reduce to unit stride takes a strided 1x1 direct convolution without padding and g = 1, got ",
                c.str());
        return status::unimplemented;
    }
    // An oh_block hint asks for rows of the strided problem, which the copy does not have.
    if (hint.rtus == 1 && hint.oh_block > 0) {
        why = cat("reduce to unit stride has no strided rows for the oh_block hint ", hint.oh_block);
        return status::unimplemented;
    }
    if (!applies || hint.rtus == 0 || hint.oh_block > 0) return status::success;
    // Each copied float meets oc FMA lanes; the core runs pipes x lanes a cycle (half the lanes
    // where it splits a vector over two pipes).
    const fma_unit_t &f = m.fma(c.level);
    const double lanes_per_cycle = f.pipes * (f.vlen_bytes / 4) * (f.full_width ? 1.0 : 0.5);
    const dim_t copy_bytes = c.od * c.oh * c.ow * c.nb_ic * c.ic_block * 4; // blocked: whole blocks
    const double fma_cycles_per_float = static_cast<double>(c.oc) / lanes_per_cycle;
    const bool skips_lines = c.sw > 1 && c.ic_block * 4 >= cache_line_bytes;
    const double min_cycles = skips_lines || copy_bytes <= m.l2_bytes / l2_rtus_copy_share
            ? rtus_min_fma_cycles_per_float
            : rtus_min_fma_cycles_per_float_past_share;
    const long max_copy_bytes = skips_lines ? std::max(m.l2_bytes, llc_bytes_for(m, 1)) : m.l2_bytes;
    const bool pays = !c.act_nxc() && copy_bytes <= max_copy_bytes && fma_cycles_per_float >= min_cycles;
    if (hint.rtus != 1 && !pays) return status::success;
    c.rtus = true;
    c.rtus_user = {c.id, c.ih, c.iw, c.od, c.oh, c.ow, c.sd, c.sh, c.sw};
    c.id = c.od;
    c.ih = c.oh;
    c.iw = c.ow;
    c.sd = c.sh = c.sw = 1;
    return status::success;
}

// Register blocking, prefetch, ic chunks and oc chunks, once the layouts are settled.
status init_blocking(conv_conf_t &c, const conv_conf_hint_t &hint, std::string &why) {
    // Pointer steps are 32-bit immediates; whole tensors are addressed by the driver in 64 bits.
    if (!fits_int32_bytes(c.src_c_stride() * c.nb_oc_blocking) || !fits_int32_bytes(c.dst_c_stride() * c.nb_oc)
            || !fits_int32_bytes(c.wei_ocb_stride() * c.nb_oc) || !fits_int32_bytes(c.src_n_stride())
            || !fits_int32_bytes(c.dst_n_stride())) {
        why = "a stride inside one image exceeds 2 GiB";
        return status::unimplemented;
    }
    if (hint.ur_balanced >= 0) c.ur_balanced = hint.ur_balanced == 1;
    const machine_model_t &m = machine_model();
    if (const status s = reduce_to_unit_stride(c, m, hint, why); s != status::success) return s;
    block_table_t table;
    blocking_t best = pick_blocking(c, m, hint, table);
    if (c.kind == conv_kernel_kind::direct) regroup_pointwise(c, m, hint, table, best);
    if (!best.u && hint.wei_mem_vecs > 0) {
        why = cat("wei_mem_vecs hint ", hint.wei_mem_vecs, ": no whole oc group of at least that many weight vectors ",
                "fits ", c.n_vregs, " vector registers (ur_w hint ", hint.ur_w, ", nb_oc_blocking hint ",
                hint.nb_oc_blocking,
                "; a group count that leaves a smaller last group keeps its weights in registers)");
        return status::unimplemented;
    }
    if (!best.u) {
        why = cat("no register blocking fits ", c.n_vregs, " vector registers (ur_w hint ", hint.ur_w,
                ", nb_oc_blocking hint ", hint.nb_oc_blocking, ", wei_mem_vecs hint ", hint.wei_mem_vecs,
                ", post-op temporaries ", c.n_post_temps, ")");
        return status::unimplemented;
    }
    c.nb_oc_blocking = best.nbo;
    c.nb_oc_blocking_tail = best.tail;
    c.wei_mem_vecs = best.mem;
    c.ur_w = best.u;
    // The kernel addresses a call's src taps from its row start less the left padding, and
    // steps over kh and kd taps, with 32-bit displacements. A wide left pad or dilation times
    // a channels-last pixel (ic floats) can exceed them even inside one image.
    const dim_t ext_kw = (c.kw - 1) * (c.dw + 1) + 1;
    const dim_t src_span = ((c.ow - 1) * c.sw + ext_kw) * c.src_w_stride() + (c.oh_block - 1) * c.sh * c.src_h_stride();
    if (!fits_int32_bytes(c.pw * c.src_w_stride()) || !fits_int32_bytes(src_span)
            || !fits_int32_bytes((c.dh + 1) * c.src_h_stride()) || !fits_int32_bytes((c.dd + 1) * c.src_d_stride())) {
        why = cat("src displacements of one call (pw=", c.pw, ", dw=", c.dw, ", pixel stride ", c.src_w_stride(),
                " floats) exceed 2 GiB");
        return status::unimplemented;
    }
    // Its dst pixels are displacements from the call's first.
    if (!fits_int32_bytes(c.oh_block * c.ow * c.dst_w_stride())) {
        why = cat("dst displacements of one call (", c.oh_block * c.ow, " pixels of ", c.dst_w_stride(),
                " floats) exceed 2 GiB");
        return status::unimplemented;
    }
    // Each ic block of a row is its own stream of cache lines (a channels-last row is one
    // stream, but strided ones skip lines); the kernel fetches the next row's lines itself.
    // Depthwise kernels do not, unless asked, where their src fits a core's share of the
    // last-level cache: a src load per FMA makes the load ports their bound, where a prefetch
    // takes a load's slot. From memory the prefetch pays (docs/tuning.md, "Conv: depthwise src
    // prefetch only from memory").
    const dim_t pf_dist = c.oh_block * c.sh * c.src_h_stride();
    const bool dw_in_cache = c.kind == conv_kernel_kind::depthwise && c.src_n_stride() <= m.l3_share_bytes / 4 / c.mb;
    const bool prefetch = hint.prefetch > 0 || (hint.prefetch < 0 && !dw_in_cache);
    if (prefetch && fits_int32_bytes(pf_dist + src_span)) c.src_prefetch_dist = pf_dist * 4;

    // Cache blocking. The reduction is split into ic chunks only when one call's weights
    // overflow their budget: a call's share of L1 where ic_chunks_in_l1, else of L2. Chunks
    // for L1 are as even as their count allows: each reloads dst, however few channels it holds.
    // A sum post-op reads dst once, so it keeps the reduction whole.
    const dim_t wei_bytes_per_icb = c.nb_oc_blocking * c.wei_icb_stride() * 4;
    const dim_t l2_weights_budget = m.l2_bytes / l2_weights_share;
    const bool l1_chunks = ic_chunks_in_l1(c, m);
    c.nb_ic_blocking = static_cast<int>(c.nb_ic);
    if (c.kind == conv_kernel_kind::direct) {
        const dim_t budget = l1_chunks ? m.l1d_bytes / l1_weights_share : l2_weights_budget;
        if (hint.nb_ic_blocking > 0) c.nb_ic_blocking = static_cast<int>(std::min<dim_t>(hint.nb_ic_blocking, c.nb_ic));
        else if (!c.has_sum() && wei_bytes_per_icb * c.nb_ic > budget) {
            const dim_t most = std::max<dim_t>(1, budget / wei_bytes_per_icb);
            c.nb_ic_blocking = static_cast<int>(l1_chunks ? div_up(c.nb_ic, div_up(c.nb_ic, most)) : most);
        }
        if (c.has_sum() && c.nb_ic_blocking < c.nb_ic) {
            why = "a sum post-op needs the whole ic reduction in one call";
            return status::unimplemented;
        }
    }
    // Oc chunks: groups of oc blocks whose weights stay in L2 while the rows pass over them,
    // those of every image unless image_outer (below; ic chunks per image read all of them for
    // each image). The chunk divides the groups evenly; a reduction split for L2 walks one group
    // at a time. The groups of a chunk take turns on each row, which pays where they read the
    // same src lines.
    // Depthwise groups on blocked layouts read planes of their own, so there each group walks
    // its rows alone and its last rows are still in L1 for the next (docs/tuning.md, "Conv:
    // depthwise rows of one group in turn").
    const dim_t ocbg = c.n_oc_groups();
    const bool split = c.nb_ic_blocking < c.nb_ic;
    c.ic_chunks_per_image = split && l1_chunks;
    const dim_t wei_bytes_per_ocbg = wei_bytes_per_icb * c.nb_ic;
    const dim_t fit = split && !c.ic_chunks_per_image ? 1 : std::max<dim_t>(1, l2_weights_budget / wei_bytes_per_ocbg);
    const bool shared_rows = c.kind != conv_kernel_kind::depthwise || c.act_nxc();
    c.nb_oc_chunk = shared_rows ? static_cast<int>(largest_divisor_at_most(ocbg, fit)) : 1;
    // Every group of a chunk reads the same src rows (depthwise groups read their own
    // channels), so prefetching the next rows in each of their calls fetches every line
    // nb_oc_chunk times. On AVX2 it is issued once, in the chunk's last call (just before the
    // next rows' first call): faster than every call on 1x1 layers, about as fast on 3x3 ones,
    // while no prefetch at all loses on most 1x1 layers. AVX-512 keeps the prefetch in every
    // call: once per chunk lost on some of its 1x1 layers; so does the hint prefetch = 2
    // (docs/tuning.md, "Conv src prefetch on AVX2").
    c.src_prefetch_last_group = c.src_prefetch_dist && c.nb_oc_chunk > 1 && c.level == isa::avx2
            && c.kind != conv_kernel_kind::depthwise && hint.prefetch != 2;
    // Every oc chunk reads all of an image's src rows again. With each chunk running over every
    // image in turn, the src comes from the last-level cache for the chunks after the first only
    // if all images fit there; when they do not and all the weights do, an image's chunks run
    // one after another instead: its src, still in cache from chunk to chunk, comes from memory
    // once, and the weights, from the last-level cache, once per image. Depthwise chunks read
    // channels of their own. A copy reduced to unit stride is one image, so it always runs so
    // (docs/tuning.md, "Conv: images outside the oc chunks when the src is in memory").
    // Channels-last groups narrower than whole cache lines share src lines too: a pixel's
    // channels of every group lie together, so each group walking all images reads the lines
    // it shares from memory again. There the image goes outside the groups as well, which
    // needs the weights of every group in cache (docs/tuning.md, "Conv: channels-last groups
    // inside the image").
    const dim_t llc = llc_bytes_for(m, 1);
    const bool src_in_memory = c.mb > 1 && c.mb * c.src_n_stride() * 4 > llc;
    c.groups_inside_image = src_in_memory && c.groups_share_src() && c.g * ocbg * wei_bytes_per_ocbg <= llc;
    c.image_outer = c.rtus || c.groups_inside_image
            || (c.kind != conv_kernel_kind::depthwise && src_in_memory && ocbg / c.nb_oc_chunk > 1
                    && ocbg * wei_bytes_per_ocbg <= llc);
    return status::success;
}

// The direct and first-layer kernels' ic and oc blocks of the per-group channels icg and ocg
// (the first layer's ic fits one block), the weights' layout, then the blocking.
status init_channel_blocks(conv_conf_t &c, const conv_conf_hint_t &hint, std::string &why) {
    c.nb_ic = div_up(c.icg, c.ic_block);
    c.nb_oc = div_up(c.ocg, c.oc_block);
    c.ic_tail = static_cast<int>(c.icg % c.ic_block);
    c.oc_tail = static_cast<int>(c.ocg % c.oc_block);
    c.wei_tag = direct_wei_tag(c.ndims, c.g > 1, c.ic_block);
    return init_blocking(c, hint, why);
}

// The direct kernel's checks after init_common: src and dst both blocked or both channels-last,
// groups with per-group channels a multiple of the block.
status init_direct(conv_conf_t &c, const conv_conf_hint_t &hint, std::string &why) {
    const conv_conf_t &p = c;
    if (!p.act_nxc() && (block_of(p.src_tag) != c.oc_block || ndims_of_act(p.src_tag) != p.ndims)) {
        why = cat("src layout ", to_string(p.src_tag), " does not match dst layout ", to_string(p.dst_tag));
        return status::unimplemented;
    }
    c.icg = p.ic / p.g;
    c.ocg = p.oc / p.g;
    if (p.g > 1 && (c.icg % c.ic_block || c.ocg % c.oc_block)) {
        why = cat("groups: per-group channels ic/g=", c.icg, " oc/g=", c.ocg, " are not multiples of ", c.ic_block);
        return status::unimplemented;
    }
    return init_channel_blocks(c, hint, why);
}

// The first-layer kernel's: plain nc[d]hw src with at most one block of input channels, no groups.
status init_first(conv_conf_t &c, const conv_conf_hint_t &hint, std::string &why) {
    const conv_conf_t &p = c;
    if (!is_plain_act(p.src_tag) || ndims_of_act(p.src_tag) != p.ndims) {
        why = cat("src layout ", to_string(p.src_tag), " is not plain nc[d]hw with ", p.ndims, " dims");
        return status::unimplemented;
    }
    if (p.g != 1 || p.ic > std::min<dim_t>(c.ic_block, max_first_ic)) {
        why = cat("first-layer kernel takes g=1 and ic <= ", c.ic_block, ", got g=", p.g, " ic=", p.ic);
        return status::unimplemented;
    }
    c.icg = p.ic;
    c.ocg = p.oc;
    return init_channel_blocks(c, hint, why);
}

// The depthwise kernel's: g = ic = oc, src and dst both blocked or both channels-last (then g a
// multiple of the vector), Goi[d]hw{8,16}g weights.
status init_dw(conv_conf_t &c, const conv_conf_hint_t &hint, std::string &why) {
    const conv_conf_t &p = c;
    if (p.src_tag != p.dst_tag) {
        why = cat("src layout ", to_string(p.src_tag), " does not match dst layout ", to_string(p.dst_tag));
        return status::unimplemented;
    }
    if (p.g == 1 || p.ic != p.g || p.oc != p.g) {
        why = cat("depthwise kernel takes g = ic = oc, got g=", p.g, " ic=", p.ic, " oc=", p.oc);
        return status::unimplemented;
    }
    // Channels-last src is read as whole vectors of channels (the direct kernel broadcasts one
    // channel at a time and masks dst, so it takes tails).
    if (p.act_nxc() && p.g % c.oc_block) {
        why = cat(to_string(p.dst_tag), " depthwise: g=", p.g, " is not a multiple of ", c.oc_block);
        return status::unimplemented;
    }
    // Channels are the vector lanes: one "group" of g channels split into blocks.
    c.icg = 1;
    c.ocg = p.oc;
    c.nb_ic = 1;
    c.nb_oc = div_up(p.oc, c.oc_block);
    c.oc_tail = static_cast<int>(p.oc % c.oc_block);
    c.wei_tag = dw_wei_tag(p.ndims, c.oc_block);
    return init_blocking(c, hint, why);
}

} // namespace

conv_kernel_kind conv_kernel_kind_for(const conv_desc &d, format_tag src_tag) {
    if (d.g > 1 && d.ic == d.g && d.oc == d.g) return conv_kernel_kind::depthwise;
    if (is_plain_act(src_tag)) return conv_kernel_kind::first;
    return conv_kernel_kind::direct;
}

status init_conf_conv_fwd(conv_conf_t &c, const conv_desc &d, format_tag src_tag, format_tag dst_tag,
        const post_ops &po, isa level, conv_kernel_kind kind, std::string &why, const conv_conf_hint_t &hint) {
    const status st = init_common(c, d, src_tag, dst_tag, po, level, kind, why, hint);
    if (st != status::success) return st;
    switch (kind) {
    case conv_kernel_kind::depthwise: return init_dw(c, hint, why);
    case conv_kernel_kind::first: return init_first(c, hint, why);
    default: return init_direct(c, hint, why);
    }
}

status init_conf_conv_fwd(conv_conf_t &c, const conv_desc &d, format_tag src_tag, format_tag dst_tag,
        const post_ops &po, isa level, std::string &why, const conv_conf_hint_t &hint) {
    return init_conf_conv_fwd(c, d, src_tag, dst_tag, po, level, conv_kernel_kind_for(d, src_tag), why, hint);
}

namespace {

// The memo's key: everything init_conf_conv_fwd's answer (conf, status and reason) depends on,
// raw, fixed-width fields first and the post-ops last, so no two inputs share a key:
// - the desc: every field is copied into the conf (and the blocking reads most);
// - the src and dst layouts, the ISA level and the kernel kind: the conf holds them, and the
//   checks and vector widths follow from them (the level is the row's, so a process-wide ISA
//   cap reaches init_conf only through it);
// - the post-ops, each in full: the conf holds them, and their kinds and algorithms set the
//   vector temporaries;
// - the hint: it overrides the blocking;
// - the machine model in force, every field: the blocking reads the FMA units, loads, L2
//   bandwidth and cache sizes, and a test's machine_model_override_t changes them.
// Nothing else is read: no thread count (the work items a regrouping must leave are a
// constant, min_work_items), no environment, no CPU flags but through the model.
std::string conf_memo_key(const conv_desc &d, format_tag src_tag, format_tag dst_tag, const post_ops &po, isa level,
        conv_kernel_kind kind, const conv_conf_hint_t &hint, const machine_model_t &m) {
    // A new field of one of these changes its size: add it to the key below.
    static_assert(sizeof(conv_desc) == 216 && sizeof(conv_conf_hint_t) == 9 * sizeof(int) && sizeof(fma_unit_t) == 16
                    && sizeof(machine_model_t) == 104 && sizeof(post_op) == 20,
            "an input of init_conf is missing from the memo's key");
    std::string key;
    key.reserve(512);
    append_raw(key, d.ndims, d.mb, d.g, d.ic, d.oc, d.id, d.ih, d.iw, d.od, d.oh, d.ow, d.kd, d.kh, d.kw, d.sd, d.sh,
            d.sw, d.pd, d.ph, d.pw, d.pd_r, d.ph_r, d.pw_r, d.dd, d.dh, d.dw, d.with_bias);
    append_raw(key, src_tag, dst_tag, level, kind);
    append_raw(key, hint.ur_w, hint.nb_oc_blocking, hint.nb_ic_blocking, hint.bcast_embedded, hint.prefetch,
            hint.ur_balanced, hint.oh_block, hint.rtus, hint.wei_mem_vecs);
    for (const fma_unit_t *f : {&m.avx2, &m.avx512})
        append_raw(key, f->vlen_bytes, f->latency, f->pipes, f->full_width, f->measured);
    append_raw(key, m.load_ports, m.load_port_bytes, m.l2_bytes_per_cycle, m.l1d_bytes, m.l2_bytes,
            m.blocking_l1d_bytes, m.blocking_l2_bytes, m.l3_bytes, m.l3_share_bytes, m.cores);
    for (const post_op &e : po.entries()) append_raw(key, e.what, e.alg, e.alpha, e.beta, e.scale);
    return key;
}

// init_conf's answers by key, least recently used dropped first beyond the kernel cache's
// capacity (0: nothing kept). One mutex: a lookup holds it for a hash, a compare and a copy.
class conf_memo_t {
public:
    // Looks `key` up; on a hit copies the answer out and returns true.
    bool find(const std::string &key, conv_conf_t &c, status &st, std::string &why) {
        std::lock_guard<std::mutex> lock(m_);
        const answer_t *a = answers_.find(key);
        if (!a) {
            ++stats_.misses;
            return false;
        }
        ++stats_.hits;
        st = a->st;
        if (st == status::success) c = a->conf;
        else why = a->why;
        return true;
    }

    void insert(std::string &&key, const conv_conf_t &c, status st, const std::string &why, std::size_t capacity) {
        std::lock_guard<std::mutex> lock(m_);
        if (capacity == 0 || answers_.contains(key)) return; // another thread answered it meanwhile
        answers_.set_capacity(capacity);
        answers_.insert(std::move(key),
                answer_t {st, st == status::success ? c : conv_conf_t {}, st == status::success ? std::string() : why});
    }

    conv_conf_memo_stats_t stats() const {
        std::lock_guard<std::mutex> lock(m_);
        conv_conf_memo_stats_t s = stats_;
        s.size = answers_.size();
        return s;
    }

    void clear() {
        std::lock_guard<std::mutex> lock(m_);
        answers_.clear();
    }

private:
    struct answer_t {
        status st;
        conv_conf_t conf; // on success
        std::string why;  // on failure
    };
    mutable std::mutex m_;
    lru_map_t<std::string, answer_t> answers_ {0}; // its capacity follows the kernel cache's at each insert
    conv_conf_memo_stats_t stats_;
};

conf_memo_t &conf_memo() {
    static conf_memo_t memo;
    return memo;
}

} // namespace

status init_conf_conv_fwd_memo(conv_conf_t &c, const conv_desc &d, format_tag src_tag, format_tag dst_tag,
        const post_ops &po, isa level, conv_kernel_kind kind, std::string &why, const conv_conf_hint_t &hint) {
    const std::size_t capacity = kernel_cache().capacity();
    if (capacity == 0) return init_conf_conv_fwd(c, d, src_tag, dst_tag, po, level, kind, why, hint);
    std::string key = conf_memo_key(d, src_tag, dst_tag, po, level, kind, hint, machine_model());
    status st = status::success;
    if (conf_memo().find(key, c, st, why)) return st;
    st = init_conf_conv_fwd(c, d, src_tag, dst_tag, po, level, kind, why, hint);
    conf_memo().insert(std::move(key), c, st, why, capacity);
    return st;
}

conv_conf_memo_stats_t conv_conf_memo_stats() { return conf_memo().stats(); }

void conv_conf_memo_clear() { conf_memo().clear(); }

} // namespace blockdnn::impl
