// SPDX-License-Identifier: Apache-2.0
// The forward convolution problem as the JIT kernels see it (conv_desc: benchdnn names, plus
// the activation layouts and post-ops) and the blocking init_conf decides for it. Plain data:
// copyable, printable, nothing else lives here.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "blockdnn/conv.hpp"
#include "blockdnn/isa.hpp"
#include "blockdnn/post_ops.hpp"
#include "blockdnn/status.hpp"
#include "blockdnn/types.hpp"

namespace blockdnn::impl {

/// Which generator a conf is for.
enum class conv_kernel_kind {
    direct,    ///< nC[d]hw{8,16}c or n[d]hwc src and dst, [g]OI[d]hw{8i8o,16i16o} weights
    depthwise, ///< g = ic = oc, nC[d]hw{8,16}c or n[d]hwc src and dst, Goi[d]hw{8,16}g weights
    first,     ///< plain nc[d]hw src with ic <= the block, blocked dst, OI[d]hw16i16o weights
};

const char *to_string(conv_kernel_kind k);

/// Requests that override init_conf's choices (tests sweep them; tuning uses them). A zero or
/// negative field means "let init_conf decide", except where its comment gives 0 a meaning
/// (then -1 lets init_conf decide). A request init_conf can't honour is an error.
struct conv_conf_hint_t {
    int ur_w = 0;
    int nb_oc_blocking = 0;
    int nb_ic_blocking = 0;
    int bcast_embedded = -1; // 0 or 1
    int prefetch = -1;       // 0: none; 1: on; 2: on in every call (see src_prefetch_last_group); -1: init_conf picks
    int ur_balanced = -1;    // 0: blocks of ur_w and one tail; 1: balanced (conv_ur_split)
    int oh_block = 0;        // rows per call of a strided 1x1 convolution (must divide oh)
    int rtus = -1;           // 0: off; 1: on, an error where not allowed (see conv_conf_t::rtus)
    int wei_mem_vecs = -1;   // 0: none; n: the last n weight vectors read by the FMAs (see conv_conf_t); -1: picks
};

/// The user's problem of a convolution reduced to unit stride (conv_conf_t::rtus).
struct conv_rtus_user_t {
    dim_t id = 0, ih = 0, iw = 0; ///< src spatial sizes
    dim_t od = 0, oh = 0, ow = 0; ///< dst spatial sizes: the copy holds one pixel per dst pixel
    dim_t sd = 0, sh = 0, sw = 0; ///< strides
};

/// The problem plus the blocking of one kernel. The desc part may be regrouped (a 1x1
/// convolution's spatial dims as other rows; small channels-last images with them, mb then 1;
/// see init_conf), so it describes the loops the kernel and driver run, which address the
/// same memory as the user's problem (or, reduced to unit stride, its dense copy: rtus).
struct conv_conf_t : conv_desc {
    /// Groups of nb_oc_blocking oc blocks, the last one nb_oc_blocking_tail blocks if set.
    dim_t n_oc_groups() const { return (nb_oc + nb_oc_blocking - 1) / nb_oc_blocking; }
    format_tag src_tag = format_tag::undef, dst_tag = format_tag::undef;
    std::vector<post_op> post_ops;

    isa level = isa::avx512_core;
    conv_kernel_kind kind = conv_kernel_kind::direct;
    format_tag wei_tag = format_tag::undef; ///< the weights layout the kernel reads

    int simd_w = 16;  ///< floats per vector register
    int n_vregs = 32; ///< vector registers of the ISA
    /// Channels per src block (plain src: per i block of the weights; n[d]hwc: per slice of a
    /// pixel's channels the kernel takes at a time, simd_w).
    int ic_block = 16;
    int oc_block = 16; ///< channels per block of the dst layout (n[d]hwc: per slice, as ic_block)
    int oc_vecs = 1;   ///< vector registers per oc block: oc_block / simd_w

    dim_t icg = 1, ocg = 1;       ///< channels per group
    dim_t nb_ic = 1, nb_oc = 1;   ///< blocks per group (the last may be partial)
    int ic_tail = 0, oc_tail = 0; ///< channels in the partial last block; 0 if none

    int nb_oc_blocking = 1; ///< oc blocks per kernel call (divides nb_oc, but see the next)
    /// Depthwise and direct: the oc blocks of the last group when nb_oc_blocking does not
    /// divide nb_oc (13 blocks in groups of 4 end in a group of 1, which a kernel of its own
    /// runs); 0 if it divides. The first-layer kernel keeps groups whole.
    int nb_oc_blocking_tail = 0;
    int nb_ic_blocking = 1; ///< ic blocks per kernel call; < nb_ic splits the reduction
    /// A split reduction's walk. True: the driver runs each image's ic chunks in turn over its
    /// rows, so a call's weights stay in L1 over its pixel blocks while the image's dst stays
    /// in L2. False: each ic chunk runs over the rows of one oc-block group in every image (in
    /// one image with image_outer), so a chunk's weights stay in L2 over all of them.
    /// Always false without a split.
    bool ic_chunks_per_image = false;
    int ur_w = 1; ///< output pixels of the largest register block (see conv_ur_split)
    /// Output rows per kernel call. Above 1 only for 1x1 convolutions without padding, whose
    /// calls then run over oh_block rows as one row of oh_block * ow pixels (divides oh).
    int oh_block = 1;
    /// Direct kernels with a broadcast register and whole oc groups: the last wei_mem_vecs
    /// weight vectors of each ic step are not loaded into registers; each FMA reads its vector
    /// from memory (L1). It frees registers for accumulators at the cost of a load per FMA: 2
    /// vectors x 7 pixels fit AVX2's 16 registers this way (14 accumulators, a weight, the
    /// broadcast).
    int wei_mem_vecs = 0;
    bool bcast_embedded = false; ///< AVX-512: FMA with a {1to16} memory operand
    bool ur_balanced = true;     ///< register blocks balanced (conv_ur_split), else ur_w and a tail
    /// Bytes from the src rows a call reads to those the next row's call reads; the kernel
    /// prefetches them while it computes (0: no prefetch).
    dim_t src_prefetch_dist = 0;
    /// The next rows are prefetched once, by the call of the last oc-block group of each chunk
    /// (the one just before the next rows' first call); the driver runs the other groups'
    /// calls through a quiet twin, the kernel's code with those prefetches made NOPs
    /// (jit_quiet_copy_t). AVX2 only, and not depthwise, whose oc-block groups read different
    /// src channels.
    bool src_prefetch_last_group = false;

    /// Reduce to unit stride (a strided 1x1 direct convolution without padding, g = 1): the
    /// driver copies the src pixels an image's convolution reads (every sd-th plane, sh-th row
    /// and sw-th pixel) into a dense buffer of its own, which the kernel reads with unit
    /// strides. The desc above then describes that copy (src dims od, oh, ow; unit strides;
    /// both may be regrouped into longer rows), rtus_user the user's problem, which the copy
    /// reads. The driver's items take one image at a time (image_outer), so a thread copies
    /// each image it works on once. Off: rtus_user all zero.
    bool rtus = false;
    conv_rtus_user_t rtus_user;

    int nb_oc_chunk = 1; ///< oc-block groups per oc chunk of the loop nest (weights in L2)
    /// The driver's items take an image at a time, its oc chunks inside (else each oc chunk
    /// runs over every image): always when reduced to unit stride, and where init_blocking finds
    /// that the src of all images overflows the last-level cache while all the weights fit it.
    bool image_outer = false;
    /// With image_outer, the image goes outside the groups too: groups_share_src(), and the
    /// weights of every group fit the last-level cache.
    bool groups_inside_image = false;
    int n_post_temps = 0; ///< vector temporaries the post-op chain needs at store time

    // Strides, in floats, of the layouts the kernel reads (dense tensors).
    bool src_plain() const; ///< src is nc[d]hw (first-layer kernel)
    bool act_nxc() const;   ///< src and dst are channels-last: nwc, nhwc, ndhwc
    /// Groups other than depthwise on channels-last whose ic/g fills no whole cache lines, so
    /// that neighbouring groups read the same src lines.
    bool groups_share_src() const;
    dim_t src_ic_stride() const;  ///< between input channels of one block
    dim_t src_c_stride() const;   ///< between ic blocks (depthwise: channel blocks)
    dim_t src_d_stride() const;   ///< between input depth planes
    dim_t src_h_stride() const;   ///< between input rows
    dim_t src_w_stride() const;   ///< between input pixels
    dim_t src_n_stride() const;   ///< between images
    dim_t dst_c_stride() const;   ///< between oc blocks
    dim_t dst_w_stride() const;   ///< between output pixels
    dim_t dst_h_stride() const;   ///< between output rows
    dim_t dst_d_stride() const;   ///< between output depth planes
    dim_t dst_n_stride() const;   ///< between images
    dim_t wei_ocb_stride() const; ///< between oc blocks of one group (depthwise: channel blocks)
    dim_t wei_icb_stride() const; ///< between ic blocks
    dim_t wei_kd_stride() const;
    dim_t wei_kh_stride() const;
    dim_t wei_kw_stride() const;
    dim_t wei_g_stride() const;
    /// Groups the driver loops over: g, or 1 for depthwise, whose groups are channel lanes.
    dim_t loop_groups() const;

    bool has_sum() const;
    /// The kernel can read weight vectors in its FMAs (wei_mem_vecs): a direct kernel whose
    /// FMAs take the broadcast from a register, leaving the memory operand free.
    bool can_read_wei_in_fmas() const { return kind == conv_kernel_kind::direct && !bcast_embedded; }
    bool is_3d() const { return ndims == 5; }
};

/// Human-readable conf for kernelgen, verbose lines and test failures: the (regrouped) desc
/// as a benchdnn descriptor, the layouts and the blocking.
std::string to_string(const conv_conf_t &c);

/// Fills `c` for the kernel of `kind` on `level`, or returns unimplemented with the reason in
/// `why` (the problem is valid, this kernel does not take it). `d` is validated. Reads the
/// machine model (machine_model()); no JIT. Each kind takes:
/// - direct: src and dst both blocked or both channels-last, groups with per-group channels a
///   multiple of the block, displacements within 32 bits;
/// - first: plain nc[d]hw src with at most one block of input channels, blocked dst, no groups;
/// - depthwise: g = ic = oc, src and dst both blocked or both channels-last (then g a multiple
///   of the vector), Goi[d]hw{8,16}g weights.
status init_conf_conv_fwd(conv_conf_t &c, const conv_desc &d, format_tag src_tag, format_tag dst_tag,
        const post_ops &po, isa level, conv_kernel_kind kind, std::string &why, const conv_conf_hint_t &hint = {});

/// The same for one kind (tests ask each kernel about a problem of another kind).
inline status init_conf_conv_fwd_direct(conv_conf_t &c, const conv_desc &d, format_tag src_tag, format_tag dst_tag,
        const post_ops &po, isa level, std::string &why, const conv_conf_hint_t &hint = {}) {
    return init_conf_conv_fwd(c, d, src_tag, dst_tag, po, level, conv_kernel_kind::direct, why, hint);
}
inline status init_conf_conv_fwd_first(conv_conf_t &c, const conv_desc &d, format_tag src_tag, format_tag dst_tag,
        const post_ops &po, isa level, std::string &why, const conv_conf_hint_t &hint = {}) {
    return init_conf_conv_fwd(c, d, src_tag, dst_tag, po, level, conv_kernel_kind::first, why, hint);
}
inline status init_conf_conv_fwd_dw(conv_conf_t &c, const conv_desc &d, format_tag src_tag, format_tag dst_tag,
        const post_ops &po, isa level, std::string &why, const conv_conf_hint_t &hint = {}) {
    return init_conf_conv_fwd(c, d, src_tag, dst_tag, po, level, conv_kernel_kind::depthwise, why, hint);
}

/// The kernel kind a problem goes to: depthwise if g = ic = oc > 1, first if src is plain,
/// else direct.
conv_kernel_kind conv_kernel_kind_for(const conv_desc &d, format_tag src_tag);

/// init_conf of conv_kernel_kind_for(d, src_tag).
status init_conf_conv_fwd(conv_conf_t &c, const conv_desc &d, format_tag src_tag, format_tag dst_tag,
        const post_ops &po, isa level, std::string &why, const conv_conf_hint_t &hint = {});

/// init_conf_conv_fwd's answer (the conf, or the refusal and its reason) from a process-wide
/// memo keyed by all it reads: the arguments and the machine model in force (each field; so a
/// machine_model_override_t is never served another model's conf). The same result as
/// init_conf_conv_fwd, without its blocking search when the memo holds the inputs. Thread-safe.
/// Bounded like the kernel cache: up to kernel_cache().capacity() answers, least recently used
/// dropped first; at capacity 0 nothing is kept and every call runs init_conf_conv_fwd.
status init_conf_conv_fwd_memo(conv_conf_t &c, const conv_desc &d, format_tag src_tag, format_tag dst_tag,
        const post_ops &po, isa level, conv_kernel_kind kind, std::string &why, const conv_conf_hint_t &hint = {});

/// The memo's lookups since the process started (hits, misses) and the answers it holds now.
struct conv_conf_memo_stats_t {
    std::size_t hits = 0, misses = 0, size = 0;
};
conv_conf_memo_stats_t conv_conf_memo_stats();
/// Drops every answer the memo holds (its counts stay).
void conv_conf_memo_clear();

/// How a call's oh_block * ow pixels split into register blocks of at most ur_w pixels.
/// Balanced: as few blocks as that allows, their sizes differing by at most one, the larger
/// first (28 pixels at ur_w 6 are 6 6 6 5 5, not 6 6 6 6 4), so no block is a short tail whose
/// few accumulators wait on FMA latency. Otherwise blocks of ur_w and one shorter tail.
struct conv_ur_split_t {
    dim_t n_large = 0, n_small = 0; ///< blocks of `large` and then of `small` pixels
    int large = 0, small = 0;       ///< balanced: small = large - 1 (or large when all are equal)
};
conv_ur_split_t conv_ur_split(dim_t pixels, int ur_w, bool balanced = true);

/// The weights layout the direct and first-layer kernels read for a problem with these ndims,
/// groups and channel block: OIw16i16o, gOIhw8i8o, ...
format_tag direct_wei_tag(int ndims, bool grouped, int block);

/// The weights layout the depthwise kernel reads: Goiw16g, Goihw8g, ...
format_tag dw_wei_tag(int ndims, int block);

} // namespace blockdnn::impl
