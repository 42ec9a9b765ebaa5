// SPDX-License-Identifier: Apache-2.0
// Parsers of oneDNN benchdnn problem descriptors (conv, pool, ip; dims and tags), shared by tests, bench,
// kernelgen and the driver. Syntax: /work/shared/data/benchdnn/README.md, after benchdnn's
// doc/driver_conv.md; e.g. "mb2ic13ih7oc29oh7kh3ph1n\"name\"".
#pragma once

#include <string>
#include <string_view>

#include "blockdnn/conv.hpp"
#include "blockdnn/types.hpp"
#include "blockdnn/inner_product.hpp"
#include "blockdnn/pool.hpp"

namespace blockdnn::impl {

/// Parses a convolution descriptor: keys g mb ic id ih iw oc od oh ow kd kh kw sd sh sw pd ph
/// pw dd dh dw, each followed by an integer, in any order, with optional '_' separators, and
/// an optional name after 'n' (to the end; quotes are dropped). Benchdnn's rules fill the rest:
/// mb = 2, g = 1, s = 1, dilation 0 (dense) unless given; a dim group (d, h or w) with any key
/// needs its i and k; without o, p defaults to 0 and o = (i + 2p - ext_k) / s + 1; with o but
/// no p, p = ((o - 1) s - i + ext_k) / 2; the end pad is p_r = (o - 1) s - i + ext_k - p.
/// Any d key makes the problem 3-D (h and w copied from d when neither is given), else any h
/// key 2-D (w copied from h when not given), else 1-D. with_bias is left false (benchdnn's
/// --dir, not the descriptor, decides it). The result is validated.
/// Throws `blockdnn::error` (invalid_arguments) quoting the descriptor and what is wrong:
/// an unknown or repeated key, a key without a number, a missing required key, a 3-D
/// descriptor with h keys but no w keys, or a rule of conv_desc::validate.
conv_desc parse_conv_desc(std::string_view text, std::string *name = nullptr);

/// Parses a pooling descriptor: the conv keys without g and oc (channels are ic), same rules.
/// The algorithm is not part of benchdnn's descriptor, hence the argument.
pool_desc parse_pool_desc(std::string_view text, pool_alg alg = pool_alg::max, std::string *name = nullptr);

/// Parses an inner-product descriptor: keys mb ic oc id ih iw (and a name); mb = 2 unless given;
/// spatial sizes are copied like conv's; no spatial key gives a 2-D (nc) problem.
inner_product_desc parse_ip_desc(std::string_view text, std::string *name = nullptr);

/// Parses benchdnn dims "AxBxC..." (1 to max_ndims positive integers), optionally followed by
/// a name, "_nNAME" or "nNAME" (quotes optional), which is dropped. Throws blockdnn::error
/// (invalid_arguments) naming the text and what is wrong.
dims_t parse_dims(const std::string &text);

/// A tag for activation-like data of `ndims` dims: one of our tag names (nchw, nChw16c, ...)
/// or benchdnn's generic ones: abx (plain: x, nc, ncw, nchw, ncdhw), axb (channels last),
/// aBx8b / aBx16b (channel-blocked). Throws blockdnn::error (invalid_arguments) naming the tag
/// and ndims if there is no such layout.
format_tag parse_tag(const std::string &text, int ndims);

} // namespace blockdnn::impl
