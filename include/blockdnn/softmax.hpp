// SPDX-License-Identifier: Apache-2.0
// Forward softmax over one axis.
#pragma once

#include <memory>
#include <string>

#include "blockdnn/tensor.hpp"

namespace blockdnn {

namespace impl {
struct softmax_fwd_state_t;
}

/// dst = exp(src - max) / sum(exp(src - max)) along logical dim `axis`, for every index of
/// the other dims (ONNX Softmax opset 13, PyTorch softmax(dim=axis)). Subtracting the
/// line's max first keeps exp from overflowing (the stable form); exp and the sum run in
/// double, each result is rounded once. Any layout; src and dst have the same dims.
class softmax_fwd {
public:
    /// Throws `blockdnn::error` (invalid_arguments) if axis is outside [0, ndims) or dst's
    /// dims differ from src's.
    softmax_fwd(const tensor_desc &src, const tensor_desc &dst, int axis);

    /// dst may be src itself (same memory and descriptor); otherwise they must not overlap.
    /// Throws `blockdnn::error` (invalid_arguments), before writing anything, on a tensor
    /// that differs from the descriptors given at creation.
    void execute(const tensor &src, const tensor &dst) const;

    const char *impl_name() const;
    int axis() const;
    const tensor_desc &src_desc() const;
    const tensor_desc &dst_desc() const;
    std::string str() const;

private:
    std::shared_ptr<const impl::softmax_fwd_state_t> st_;
};

} // namespace blockdnn
