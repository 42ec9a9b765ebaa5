// SPDX-License-Identifier: Apache-2.0
// What a binary_fwd implementation sees: the validated problem, its arguments, the kernel
// interface and the dispatch table (defined in binary_fwd.cpp; the contract is ops/op_table.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/binary.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

struct binary_prb_t {
    binary_desc desc;
    tensor_desc src0, src1, dst;
    post_ops po;
    std::string str() const;
};

struct binary_args_t {
    const float *src0, *src1;
    float *dst;
};

using binary_impl_t = impl_t<binary_args_t>;
using binary_row_t = op_row_t<binary_prb_t, binary_impl_t>;

std::span<const binary_row_t> binary_fwd_impls();

/// The reference (src/ops/binary/binary_ref.cpp): every problem, every layout.
std::unique_ptr<binary_impl_t> create_binary_fwd_ref(const binary_prb_t &prb);
/// The JIT row at `level` (src/ops/binary/binary_jit.cpp): dst with at most one inner block;
/// src0 in dst's layout, or in another of its family where no sum post-op reads dst; src1 read
/// in place or of dst's family.
template <isa level>
status create_binary_fwd_jit(const binary_prb_t &prb, std::unique_ptr<binary_impl_t> &out, std::string &why);

} // namespace blockdnn::impl
