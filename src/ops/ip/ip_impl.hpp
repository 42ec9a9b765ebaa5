// SPDX-License-Identifier: Apache-2.0
// What a forward inner-product implementation sees: the validated problem, its arguments,
// the kernel interface and the dispatch table (defined in ip_fwd.cpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/inner_product.hpp"
#include "core/dispatch.hpp"

namespace blockdnn::impl {

struct ip_prb_t {
    inner_product_desc desc;
    tensor_desc src, wei, bia, dst; // bia.ndims() == 0 without bias
    post_ops po;
    std::string str() const;
};

struct ip_args_t {
    const float *src, *wei, *bia; // bia null without bias
    float *dst;
};

/// One created implementation; execute() is const and safe to call concurrently.
class ip_impl_t {
public:
    virtual ~ip_impl_t() = default;
    virtual void execute(const ip_args_t &args) const = 0;
    /// Called once when the op is created with its weights: `wei` (in prb.wei's layout) is
    /// the op's own copy, alive as long as the implementation, and every later execute()
    /// gets this same pointer in args.wei. An implementation may prepare it here (the GEMM
    /// packs its B panels once instead of on each call).
    virtual void take_weights(const float *wei) { (void)wei; }
};

using ip_create_fn_t = std::unique_ptr<ip_impl_t> (*)(const ip_prb_t &prb);
using ip_impl_entry_t = impl_entry_t<ip_prb_t, ip_create_fn_t>;

std::span<const ip_impl_entry_t> ip_fwd_impls();

/// On the JIT GEMM (src/ops/ip/ip_gemm.cpp): src and wei laid out as row-major matrices.
template <isa level>
bool accept_ip_fwd_gemm(const ip_prb_t &prb, std::string &why);
template <isa level>
std::unique_ptr<ip_impl_t> create_ip_fwd_gemm(const ip_prb_t &prb);

/// The reference (src/ops/ip/ip_ref.cpp): every problem, every layout.
std::unique_ptr<ip_impl_t> create_ip_fwd_ref(const ip_prb_t &prb);

} // namespace blockdnn::impl
