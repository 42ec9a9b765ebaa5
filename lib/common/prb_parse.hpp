// SPDX-License-Identifier: Apache-2.0
// Pieces of oneDNN's benchdnn problem syntax shared by tests, benchmarks and kernelgen:
// dims ("8x16x56x56") and memory tags (ours, or benchdnn's abx / axb / aBx16b / aBx8b).
#pragma once

#include <string>

#include "blockdnn/types.hpp"

namespace blockdnn::impl {

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
