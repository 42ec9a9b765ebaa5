// SPDX-License-Identifier: Apache-2.0
// Reorders: copying a tensor between layouts of the same logical shape.
#pragma once

#include <string>

#include "blockdnn/tensor.hpp"

namespace blockdnn {

/// Copies `src` into `dst`, converting the layout. Both must have the same logical dims and
/// data type, and the two layouts must be of one family (activations, weights, RNN); e.g.
/// nchw <-> nChw16c, nhwc <-> nChw8c, oihw <-> OIhw16i16o, goihw <-> Goihw16g.
/// dst's padding (channels past the logical size in blocked layouts) is written with zeros.
///
/// Bandwidth-bound: plain <-> blocked activations, plain <-> weights blocked on the groups
/// (goihw <-> Goihw16g, laid out as one image of G channels) and plain -> blocked weights have
/// AVX-512 and AVX2 paths; channels-first <-> channels-last activations (nchw <-> nhwc, what
/// PyTorch's `contiguous(memory_format=torch.channels_last)` does) use a tiled transpose (AVX2
/// and scalar); blocked -> plain weights, nC*8c <-> nC*16c, Goi*8g <-> Goi*16g and any two
/// other layouts without blocks (oihw <-> hwio, oi <-> io, tnc <-> ntc, ldigo <-> ldgoi) have
/// scalar loops of their own; a pair two of those steps join through the plain layout
/// (hwio <-> OIhw16i16o, ...) takes both; every other pair uses a generic scalar loop. The work
/// is split over the library's threads.
///
/// Throws `blockdnn::error` (invalid_arguments) if either tensor is empty, the dims or data
/// types differ, the families differ, or src and dst overlap in memory (in place too); dst is
/// not written then.
void reorder(const tensor &src, const tensor &dst);

/// Returns a new tensor holding `src` in layout `tag`. Throws as `reorder` does, and if `tag`
/// takes a different number of dims than src has.
tensor reorder(const tensor &src, format_tag tag);

/// Name of the implementation `reorder` would use for these descriptors under the current
/// ISA cap: "copy" (same layout), "simd:avx512_core:act" / "simd:avx2:act" (plain <-> blocked
/// activations, goi[d][h]w <-> Goi[d][h]w{8,16}g), "simd:avx512_core:wei" / "simd:avx2:wei"
/// (plain -> [g]OI*{8i8o,16i16o} weights), "simd:avx2:transpose" (nc[d][h]w <-> n[d][h]wc),
/// "scalar:act", "scalar:wei" (plain <-> [g]OI*{8i8o,16i16o} weights, either way),
/// "scalar:transpose", "scalar:reblock" (nC*8c <-> nC*16c, Goi*8g <-> Goi*16g),
/// "scalar:permute" (any other two layouts without blocks: oihw <-> hwio, oi <-> io,
/// tnc <-> ntc, ldigo <-> ldgoi, ...), "via_plain" (two of those steps through the plain
/// [g]oi[d][h]w or nc[d][h]w layout, in a buffer of the call: hwio <-> OIhw16i16o,
/// OIhw8i8o <-> OIhw16i16o, ...) or "ref". Throws as `reorder`.
std::string reorder_impl_name(const tensor_desc &src, const tensor_desc &dst);

/// The blocked layout the kernels prefer for a plain one, at the effective ISA: 16-wide blocks
/// on avx512_core, 8-wide on avx2 and scalar. nchw -> nChw16c, ncdhw -> nCdhw16c,
/// ncw -> nCw16c, oihw -> OIhw16i16o, goihw -> gOIhw16i16o or, if o = i = 1 (depthwise),
/// Goihw16g; nhwc / ndhwc / nwc go to the same blocked layouts as their nc* twins. A tag with
/// no blocked form (nc, tnc, ldigo, ...) or already blocked is returned unchanged.
format_tag blocked_tag_for(const tensor_desc &desc);

/// The plain layout of a blocked one (nChw16c -> nchw, OIhw16i16o -> oihw, Goihw16g -> goihw).
/// A plain tag is returned unchanged. Throws `blockdnn::error` (invalid_arguments) if tag is
/// not a format_tag value.
format_tag plain_tag_for(format_tag tag);

/// The role of PyTorch's `tensor.to_mkldnn()`: src reordered to blocked_tag_for(src.desc()).
/// If src is already in that layout, returns src itself (sharing memory).
tensor to_blocked(const tensor &src);

/// The role of PyTorch's `tensor.to_dense()`: src reordered to plain_tag_for(src's tag).
/// If src is already plain, returns src itself (sharing memory).
tensor to_dense(const tensor &src);

} // namespace blockdnn
