// SPDX-License-Identifier: Apache-2.0
// Basic types: dimensions, data types and layout (format) tags.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blockdnn {

/// Dimension sizes and element counts.
using dim_t = std::int64_t;
/// Logical dimensions of a tensor, in the canonical order of its layout family (see format_tag).
using dims_t = std::vector<dim_t>;

/// Maximum number of dimensions a tensor may have: 5 for activations (ncdhw), 6 for grouped
/// 3-D weights (goidhw).
constexpr int max_ndims = 6;

/// Element data type. Only f32 is implemented; bf16 is reserved for the low-precision issue.
enum class data_type { f32, bf16 };

/// Bytes per element of a data type.
constexpr std::size_t size_of(data_type dt) { return dt == data_type::f32 ? 4 : 2; }
const char *to_string(data_type dt);

/// Memory layouts, spelled as oneDNN spells them. A lowercase letter is a plain dimension, an
/// uppercase one is the outer part of a blocked dimension, and a trailing `16c` / `16i16o`
/// names the inner blocks, innermost last (so `OIhw16i16o` stores 16 output channels
/// contiguously for each input channel of a block).
///
/// Logical dimensions are always given in the canonical order of the tag's family, whatever
/// the order in memory:
/// - activations: (n, c, [d,] [h,] w), e.g. `nhwc` and `nChw16c` both take {n, c, h, w};
/// - weights: ([g,] o, i, [d,] [h,] w), e.g. `hwio` takes {o, i, h, w}; `i`/`o` are per-group
///   channels in grouped tags (`goihw`, `gOIhw16i16o`, `Goihw16g`);
/// - RNN data (t, n, c) for `tnc` / `ntc`; RNN weights (l, d, i, g, o) for `ldigo` / `ldgoi`,
///   where l = layers, d = directions, i = input channels, g = gates, o = output channels;
///   RNN states (l, d, n, c) for `ldnc`; RNN bias (l, d, g, o) for `ldgo`.
///
/// Blocked dimensions are padded with zeros up to a multiple of the block.
///
/// `any` is not a layout: given to an op that picks layouts (conv_fwd), it lets the op's
/// implementation choose, and the op's queries (src_desc(), ...) answer the choice. A
/// tensor_desc, and so a tensor, is never made with it, and ops that do not pick layouts
/// refuse it.
// The tags stay grouped by family, a line per kind.
// clang-format off
enum class format_tag {
    undef,
    // activations
    x, nc, ncw, nwc, nchw, nhwc, ncdhw, ndhwc,
    nCw8c, nCw16c, nChw8c, nChw16c, nCdhw8c, nCdhw16c,
    // weights
    oi, io, oiw, wio, oihw, hwio, oidhw, dhwio,
    OIw8i8o, OIw16i16o, OIhw8i8o, OIhw16i16o, OIdhw8i8o, OIdhw16i16o,
    goiw, goihw, goidhw,
    gOIw8i8o, gOIw16i16o, gOIhw8i8o, gOIhw16i16o, gOIdhw8i8o, gOIdhw16i16o,
    Goiw8g, Goiw16g, Goihw8g, Goihw16g, Goidhw8g, Goidhw16g,
    // RNN
    tnc, ntc, ldnc, ldigo, ldgoi, ldgo,
    // the implementation's choice, at op creation only
    any,
};
// clang-format on

/// The tag's name as written above ("nChw16c"); "undef" for format_tag::undef, "any" for any.
const char *to_string(format_tag tag);

/// Parses a tag name (case-sensitive, as in to_string). Throws `blockdnn::error`
/// (invalid_arguments) naming the string if it is not a known tag.
format_tag format_tag_from_string(const std::string &name);

/// Number of logical dimensions a tag describes (nchw: 4, ldigo: 5, x: 1; undef and any: 0).
int ndims_of(format_tag tag);

/// True for tags with an inner block (nChw16c, OIhw16i16o, Goihw16g, ...).
bool is_blocked(format_tag tag);

} // namespace blockdnn
