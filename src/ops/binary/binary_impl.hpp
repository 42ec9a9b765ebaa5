// SPDX-License-Identifier: Apache-2.0
// What a binary implementation sees: the validated problem, its arguments, the kernel
// interface and the dispatch table (defined in binary.cpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/binary.hpp"
#include "core/dispatch.hpp"

namespace blockdnn::impl {

struct binary_prb_t {
    binary_alg alg = binary_alg::add;
    tensor_desc src0, src1, dst;
    post_ops po;
    std::string str() const;
};

struct binary_args_t {
    const float *src0, *src1;
    float *dst;
};

/// One created implementation; execute() is const and safe to call concurrently.
class binary_impl_t {
public:
    virtual ~binary_impl_t() = default;
    virtual void execute(const binary_args_t &args) const = 0;
};

using binary_create_fn_t = std::unique_ptr<binary_impl_t> (*)(const binary_prb_t &prb);
using binary_impl_entry_t = impl_entry_t<binary_prb_t, binary_create_fn_t>;

std::span<const binary_impl_entry_t> binary_impls();

/// The reference (src/ops/binary/binary_ref.cpp): every problem, every layout.
std::unique_ptr<binary_impl_t> create_binary_ref(const binary_prb_t &prb);

} // namespace blockdnn::impl
