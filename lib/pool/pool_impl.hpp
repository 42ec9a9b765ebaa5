// SPDX-License-Identifier: Apache-2.0
// What a forward-pooling implementation sees: the validated problem, its arguments, the
// kernel interface and the dispatch table (defined in pool_fwd.cpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/pool.hpp"
#include "common/dispatch.hpp"

namespace blockdnn::impl {

struct pool_prb_t {
    pool_desc desc;
    tensor_desc src, dst;
    std::string str() const; // "alg:max src:nchw dst:nchw mb2ic16ih8oh4kh3sh2ph1"
};

struct pool_args_t {
    const float *src;
    float *dst;
};

/// One created implementation; execute() is const and safe to call concurrently.
class pool_impl_t {
public:
    virtual ~pool_impl_t() = default;
    virtual void execute(const pool_args_t &args) const = 0;
};

using pool_create_fn_t = std::unique_ptr<pool_impl_t> (*)(const pool_prb_t &prb);
using pool_impl_entry_t = impl_entry_t<pool_prb_t, pool_create_fn_t>;

std::span<const pool_impl_entry_t> pool_fwd_impls();

/// Max pooling on one channel-blocked layout for src and dst (lib/pool/pool_blocked.cpp).
bool accept_pool_fwd_max_blocked(const pool_prb_t &prb, std::string &why);
std::unique_ptr<pool_impl_t> create_pool_fwd_max_blocked(const pool_prb_t &prb);

/// The reference (lib/pool/pool_ref.cpp): every problem, every layout.
std::unique_ptr<pool_impl_t> create_pool_fwd_ref(const pool_prb_t &prb);

} // namespace blockdnn::impl
