// SPDX-License-Identifier: Apache-2.0
// The zero padding of blocked layouts: which elements are padding, and clearing them.
#pragma once

#include "blockdnn/tensor.hpp"

namespace blockdnn::impl {

/// True if some dim of d is padded (a blocked dim whose size is not a multiple of its block).
bool has_padding(const tensor_desc &d);

/// Writes 0 to every padding element of memory laid out as d (a no-op without padding).
void zero_padding(const tensor_desc &d, float *data);

} // namespace blockdnn::impl
