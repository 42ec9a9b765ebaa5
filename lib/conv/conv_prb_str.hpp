// SPDX-License-Identifier: Apache-2.0
// benchdnn convolution descriptors ("mb1ic64ih56oc64oh56kh3ph1n\"res2a\"") to conv_prb_t.
#pragma once

#include <string>

#include "jit/conv/conv_conf.hpp"

namespace blockdnn::impl {

/// Parses a descriptor with benchdnn's rules: mb defaults to 2 and g to 1; a missing spatial
/// size is copied from the next higher one (d -> h -> w); a missing output size follows from
/// the pads (default 0); a missing pad with a given output size is the symmetric one; the end
/// pads follow from the sizes. Any d key makes the problem 3-D, any h key 2-D, else 1-D.
/// Layout tags are left undef. Returns false with the reason in `why` on a malformed string.
bool parse_conv_prb(const std::string &desc, conv_prb_t &p, std::string &name, std::string &why);

} // namespace blockdnn::impl
