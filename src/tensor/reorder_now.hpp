// SPDX-License-Identifier: Apache-2.0
// The reorder for the library's own use: runs on the calling thread whatever the current
// stream, for ops that reorder into memory they read right after (a stream_scope would queue
// the public reorder() and let the op read dst before it is written).
#pragma once

#include "blockdnn/tensor.hpp"

namespace blockdnn::impl {

/// As blockdnn::reorder(src, dst) (same checks and errors), run now.
void reorder_now(const tensor &src, const tensor &dst);

} // namespace blockdnn::impl
