// SPDX-License-Identifier: Apache-2.0
// What a forward-softmax implementation sees: the validated problem, its arguments, the
// kernel interface and the dispatch table (defined in softmax_fwd.cpp; the contract is
// ops/op_table.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/softmax.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

struct softmax_prb_t {
    softmax_desc desc;
    tensor_desc src, dst;
    std::string str() const;
};

struct softmax_args_t {
    const float *src;
    float *dst;
};

using softmax_impl_t = impl_t<softmax_args_t>;
using softmax_row_t = op_row_t<softmax_prb_t, softmax_impl_t>;

std::span<const softmax_row_t> softmax_fwd_impls();

/// The reference (src/ops/softmax/softmax_ref.cpp): every problem, every layout.
std::unique_ptr<softmax_impl_t> create_softmax_fwd_ref(const softmax_prb_t &prb);
/// The JIT row at `level` (src/ops/softmax/softmax_jit.cpp): src and dst of one family, the
/// kernel in a layout whose axis is not blocked, between reorders where they are not in it.
template <isa level>
status create_softmax_fwd_jit(const softmax_prb_t &prb, std::unique_ptr<softmax_impl_t> &out, std::string &why);

} // namespace blockdnn::impl
