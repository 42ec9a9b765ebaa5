// SPDX-License-Identifier: Apache-2.0
// What a forward inner-product implementation sees: the validated problem, its arguments,
// the kernel interface and the dispatch table (defined in ip_fwd.cpp; the contract is
// ops/op_table.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/inner_product.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

struct ip_prb_t {
    inner_product_desc desc;
    tensor_desc src, wei, bia, dst; // bia.ndims() == 0 without bias
    post_ops po;
    bool wei_held = false; // weights given at creation, held in preferred_wei_tag()
    std::string str() const;
};

struct ip_args_t {
    const float *src, *wei, *bia; // bia null without bias
    float *dst;
};

/// One created implementation; execute() is const and safe to call concurrently. The GEMM
/// packs its B panels once in take_weights() instead of on each call.
class ip_impl_t : public impl_t<ip_args_t> {
public:
    /// The layout an op given weights at creation holds them in (and passes to
    /// take_weights()), or undef to hold them as given: an implementation created for held
    /// weights (prb.wei_held) reads this one, whatever prb.wei says.
    virtual format_tag preferred_wei_tag() const { return format_tag::undef; }
};

using ip_row_t = op_row_t<ip_prb_t, ip_impl_t>;

std::span<const ip_row_t> ip_fwd_impls();

/// On the JIT GEMM (src/ops/ip/ip_jit.cpp): src and wei laid out as row-major matrices (held
/// weights in any layout: it holds them in oi / oiw / oihw / oidhw).
template <isa level>
status create_ip_fwd_jit(const ip_prb_t &prb, std::unique_ptr<ip_impl_t> &out, std::string &why);

/// The reference (src/ops/ip/ip_ref.cpp): every problem, every layout.
std::unique_ptr<ip_impl_t> create_ip_fwd_ref(const ip_prb_t &prb);

} // namespace blockdnn::impl
