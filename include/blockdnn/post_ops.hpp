// SPDX-License-Identifier: Apache-2.0
// Post-op chains: element-wise functions and a scaled sum with dst, applied to an op's result
// before it is stored (oneDNN's post-ops attribute). Shared by conv, inner product and binary.
#pragma once

#include <string>
#include <vector>

#include "blockdnn/eltwise_alg.hpp"

namespace blockdnn {

/// One entry of a post-op chain.
struct post_op {
    enum class kind { eltwise, sum };
    kind what = kind::eltwise;
    eltwise_alg alg = eltwise_alg::relu; ///< eltwise: the function (see eltwise_alg)
    float alpha = 0.f, beta = 0.f;       ///< eltwise: its parameters, oneDNN's meaning
    float scale = 1.f;                   ///< sum: the factor on the old dst value
};

/// A chain of post-ops applied, in order, to each element r of an op's result (after bias),
/// in f32:
/// - eltwise: r = eltwise_ref(alg, r, alpha, beta)  (or the JIT equivalent);
/// - sum:     r = r + scale * dst_old, where dst_old is the value dst held before the op ran
///            (a fused residual add: conv(x) + shortcut, then e.g. relu).
/// The result is then stored to dst. This is oneDNN's post-ops semantics.
///
/// @code
///   post_ops po;
///   po.append_sum(1.f).append_eltwise(eltwise_alg::relu);   // dst = relu(conv(src) + dst)
/// @endcode
class post_ops {
public:
    /// Appends an element-wise function. Throws `blockdnn::error` (invalid_arguments) if alg
    /// is not an eltwise_alg value, alpha or beta is not finite, or alg is clip and
    /// alpha > beta.
    post_ops &append_eltwise(eltwise_alg alg, float alpha = 0.f, float beta = 0.f);

    /// Appends a sum with dst's old value. Throws `blockdnn::error` (invalid_arguments) if the
    /// scale is not finite, or if the chain already holds a sum (dst is read once, before
    /// anything is written, so one sum is all a kernel needs to support).
    post_ops &append_sum(float scale = 1.f);

    int len() const { return static_cast<int>(entries_.size()); }
    bool empty() const { return entries_.empty(); }
    const post_op &operator[](int i) const { return entries_[static_cast<std::size_t>(i)]; }
    const std::vector<post_op> &entries() const { return entries_; }
    /// True if the chain holds a sum (the op then reads dst).
    bool has_sum() const;

    /// "sum:1+relu:0:0" style text for messages and verbose lines; "" for an empty chain.
    std::string str() const;

    bool operator==(const post_ops &o) const;

private:
    std::vector<post_op> entries_;
};

} // namespace blockdnn
