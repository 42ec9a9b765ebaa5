// SPDX-License-Identifier: Apache-2.0
// Element-wise binary ops (add, mul) with broadcasting of the second source.
#pragma once

#include <memory>
#include <string>

#include "blockdnn/post_ops.hpp"
#include "blockdnn/tensor.hpp"

namespace blockdnn {

namespace impl {
struct binary_fwd_state_t;
}

enum class binary_alg { add, mul };

/// "add", "mul".
const char *to_string(binary_alg alg);

/// dst = post_ops(src0 (+|*) src1), element by element, in f32 (each result correctly
/// rounded, as IEEE add/mul are), with src1 broadcast: each of src1's dims equals src0's or
/// is 1, in which case its single value serves every index of that dim (numpy's rule, with
/// equal ranks: a per-channel bias {1, C, 1, 1} against {N, C, H, W}, or full shape).
/// dst has src0's dims. Any layouts (they may differ between the three tensors).
/// ONNX Add / Mul with ranks that differ: prepend 1s to the shorter shape first.
class binary_fwd {
public:
    /// Throws `blockdnn::error` (invalid_arguments) if src0, src1 and dst differ in rank, if a
    /// src1 dim is neither 1 nor src0's (naming the dim and both values), or if dst's dims
    /// differ from src0's.
    binary_fwd(binary_alg alg, const tensor_desc &src0, const tensor_desc &src1, const tensor_desc &dst,
            const post_ops &po = post_ops());

    /// dst may be src0 itself (same memory and descriptor: in place); otherwise dst must not
    /// overlap src0 or src1. Throws `blockdnn::error` (invalid_arguments), before writing
    /// anything, if a tensor differs from the descriptors given at creation or overlaps wrongly.
    void execute(const tensor &src0, const tensor &src1, const tensor &dst) const;

    const char *impl_name() const;
    binary_alg alg() const;
    const post_ops &attr_post_ops() const;
    const tensor_desc &src0_desc() const;
    const tensor_desc &src1_desc() const;
    const tensor_desc &dst_desc() const;
    std::string str() const;

private:
    std::shared_ptr<const impl::binary_fwd_state_t> st_;
};

} // namespace blockdnn
