// SPDX-License-Identifier: Apache-2.0
// Parser of oneDNN benchdnn RNN problem descriptors, shared by tests, bench and kernelgen.
// Syntax (benchdnn doc/driver_rnn.md; /work/shared/data/benchdnn/README.md): keys l t mb sic slc
// dhc dic, each followed by an integer, in that order or any, with optional '_' separators, and
// an optional name after 'n' (quotes dropped), e.g. l1t50mb64sic512slc512dhc512dic512 or
// l4t3mb20_sic36_n"uniform:unroll_tail".
#pragma once

#include <string>
#include <string_view>

#include "blockdnn/rnn.hpp"

namespace blockdnn::impl {

/// Fills the sizes of `base` (cell, direction, tags kept) from `text`. Benchdnn's defaults:
/// l = 1, t = 1, mb = 2, slc = sic, dhc = sic, dic = dhc; sic is required. Throws
/// blockdnn::error (invalid_arguments) quoting the descriptor and what is wrong (an unknown or
/// repeated key, a key without a number or with more than 12 digits, no sic). The sizes are
/// not validated here (rnn_fwd does).
rnn_desc parse_rnn_desc(std::string_view text, rnn_desc base = {}, std::string *name = nullptr);

/// The canonical descriptor of d: "l1t50mb64sic512slc512dhc512dic512".
std::string rnn_desc_str(const rnn_desc &d);

} // namespace blockdnn::impl
