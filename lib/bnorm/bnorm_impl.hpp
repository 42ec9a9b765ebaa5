// SPDX-License-Identifier: Apache-2.0
// Batch normalization internals: the validated problem every implementation sees, the
// implementation interface (a virtual execute, so JIT entries can hold generated code) and
// the dispatch table of factories.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/bnorm.hpp"
#include "common/dispatch.hpp"

namespace blockdnn::impl {

/// A validated forward problem. mb, c and sp (= id * ih * iw, 1 for nc) come from desc.src.
struct bnorm_prb_t {
    bnorm_desc desc;
    dim_t mb = 0, c = 0, sp = 0;
    bool training = false, use_scale = false, use_shift = false, fuse_relu = false;
};

/// "training:nChw16c:2x17x5x5:nChw16c:eps1e-05:flags=scale+shift+relu", for verbose lines.
std::string to_string(const bnorm_prb_t &p);

/// Memory of one execution, already checked against the problem. mean and variance always
/// point to c floats (scratch when the caller gave none in training); scale / shift are null
/// when their flag is off.
struct bnorm_fwd_mem_t {
    const float *src = nullptr;
    float *dst = nullptr;
    float *mean = nullptr;
    float *variance = nullptr;
    const float *scale = nullptr;
    const float *shift = nullptr;
};

/// One forward implementation, built for one problem. execute() may run many times and from
/// several threads at once, so it must not change the object.
class bnorm_fwd_impl_t {
public:
    virtual ~bnorm_fwd_impl_t() = default;
    virtual void execute(const bnorm_fwd_mem_t &mem) const = 0;
};

/// Builds the implementation for an accepted problem.
using bnorm_fwd_create_t = std::unique_ptr<bnorm_fwd_impl_t> (*)(const bnorm_prb_t &prb);
using bnorm_fwd_entry_t = impl_entry_t<bnorm_prb_t, bnorm_fwd_create_t>;

/// Forward implementations, best first; the last is "ref".
std::span<const bnorm_fwd_entry_t> bnorm_fwd_impl_list();

/// The reference (bnorm_ref.cpp).
std::unique_ptr<bnorm_fwd_impl_t> create_bnorm_fwd_ref(const bnorm_prb_t &prb);

} // namespace blockdnn::impl
