// SPDX-License-Identifier: Apache-2.0
// What a forward-softmax implementation sees: the validated problem, its arguments, the
// kernel interface and the dispatch table (defined in softmax_fwd.cpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/softmax.hpp"
#include "core/dispatch.hpp"

namespace blockdnn::impl {

struct softmax_prb_t {
    tensor_desc src, dst;
    int axis = 0;
    std::string str() const;
};

struct softmax_args_t {
    const float *src;
    float *dst;
};

/// One created implementation; execute() is const and safe to call concurrently.
class softmax_impl_t {
public:
    virtual ~softmax_impl_t() = default;
    virtual void execute(const softmax_args_t &args) const = 0;
};

using softmax_create_fn_t = std::unique_ptr<softmax_impl_t> (*)(const softmax_prb_t &prb);
using softmax_impl_entry_t = impl_entry_t<softmax_prb_t, softmax_create_fn_t>;

std::span<const softmax_impl_entry_t> softmax_fwd_impls();

/// The reference (src/ops/softmax/softmax_ref.cpp): every problem, every layout.
std::unique_ptr<softmax_impl_t> create_softmax_fwd_ref(const softmax_prb_t &prb);

} // namespace blockdnn::impl
