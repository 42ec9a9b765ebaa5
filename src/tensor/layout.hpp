// SPDX-License-Identifier: Apache-2.0
// What a format tag means: its family, its logical dims, the order of its outer dims in
// memory and its inner blocks, all derived from the tag's oneDNN spelling.
#pragma once

#include <array>

#include "blockdnn/types.hpp"

namespace blockdnn::impl {

enum class layout_family { activation, weights, rnn_data, rnn_weights };

struct layout_info_t {
    format_tag tag = format_tag::undef;
    const char *name = "undef";
    layout_family family = layout_family::activation;
    int ndims = 0;
    std::array<char, max_ndims> dim_letter {}; // logical dim -> its letter ('n', 'c', 'h', ...)
    std::array<int, max_ndims> outer_order {}; // memory order of outer dims, outermost first
    int nblks = 0;
    std::array<int, 2> blk_dim {}; // inner blocks, outer first
    std::array<int, 2> blk_size {};
};

/// Parsed description of a tag. For format_tag::undef and format_tag::any, ndims is 0; for a value outside the
/// enumeration, a description named "unknown" with ndims 0.
const layout_info_t &layout_info(format_tag tag);

/// True if tag is one of format_tag's enumerators (a cast integer may be anything).
bool is_format_tag(format_tag tag);

/// True for the channels-last activation layouts: nwc, nhwc, ndhwc.
bool is_channels_last(format_tag tag);

/// True for weights tags with a leading groups dim (goihw, gOIhw16i16o, Goihw16g, ...).
bool is_grouped_weights_tag(format_tag tag);

/// True if the two tags describe the same kind of tensor (activations, weights, RNN data, ...):
/// the pairs a reorder takes.
bool same_family(format_tag a, format_tag b);

/// The plain activation layout of `ndims` dims (2 to 5): nc, ncw, nchw, ncdhw.
format_tag plain_act_tag(int ndims);

/// The channel-blocked activation layout of `ndims` dims (3 to 5) with blocks of `blk` (8 or
/// 16) channels: nCw8c ... nCdhw16c.
format_tag blocked_act_tag(int ndims, int blk);

/// The plain weights layout for activations of `ndims` dims (2 to 5): oi, oiw, oihw, oidhw,
/// or (3 to 5) goiw, goihw, goidhw with a groups dim.
format_tag plain_weights_tag(int ndims, bool grouped = false);

/// Tag named `name`, or format_tag::undef.
format_tag find_tag(const char *name);

} // namespace blockdnn::impl
