// SPDX-License-Identifier: Apache-2.0
// Batch normalization internals, forward and backward: the validated problem every
// implementation sees, the implementation interface (a virtual execute, so JIT entries can
// hold generated code) and the dispatch tables of factories.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/bnorm.hpp"
#include "core/dispatch.hpp"

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

// Checks the forward and the backward share (bnorm.cpp); each message starts with `op`.

/// A descriptor's activation tensor `field`: not empty, an activation layout of 2 to 5 dims.
void check_bnorm_act(const char *op, const tensor_desc &d, const char *field);

/// epsilon finite and >= 0; no flag bits but use_scale, use_shift and fuse_relu.
void check_bnorm_eps_flags(const char *op, float epsilon, bnorm_flags flags);

/// An execution's tensor `field`: with memory, and described as the op was created for.
/// `why`, when given, says why an optional tensor is required.
void check_bnorm_tensor(const char *op, const tensor &t, const char *field, const tensor_desc &expected,
        const char *why = nullptr);

/// "scale+shift+relu", the flags set, or "none", for verbose lines.
std::string bnorm_flags_str(bool use_scale, bool use_shift, bool fuse_relu);

/// A validated backward problem (diff_dst / diff_src filled in).
struct bnorm_bwd_prb_t {
    bnorm_bwd_desc desc;
    dim_t mb = 0, c = 0, sp = 0;
    bool use_scale = false, use_shift = false, fuse_relu = false;
};

/// "bwd:nChw16c:2x17x5x5:nChw16c:nChw16c:eps1e-05:flags=scale+shift:global", for verbose lines.
std::string to_string(const bnorm_bwd_prb_t &p);

/// Memory of one backward execution, checked against the problem. scale is null without
/// use_scale, dst null without fuse_relu; diff_scale / diff_shift null without their flags.
struct bnorm_bwd_mem_t {
    const float *src = nullptr, *diff_dst = nullptr, *dst = nullptr;
    const float *mean = nullptr, *variance = nullptr, *scale = nullptr;
    float *diff_src = nullptr, *diff_scale = nullptr, *diff_shift = nullptr;
};

/// One backward implementation; execute() is const and may run concurrently.
class bnorm_bwd_impl_t {
public:
    virtual ~bnorm_bwd_impl_t() = default;
    virtual void execute(const bnorm_bwd_mem_t &mem) const = 0;
};

using bnorm_bwd_create_t = std::unique_ptr<bnorm_bwd_impl_t> (*)(const bnorm_bwd_prb_t &prb);
using bnorm_bwd_entry_t = impl_entry_t<bnorm_bwd_prb_t, bnorm_bwd_create_t>;

/// Backward implementations, best first; the last is "ref".
std::span<const bnorm_bwd_entry_t> bnorm_bwd_impl_list();

/// The reference backward (bnorm_bwd_ref.cpp).
std::unique_ptr<bnorm_bwd_impl_t> create_bnorm_bwd_ref(const bnorm_bwd_prb_t &prb);

/// The JIT entries (bnorm_jit_impl.cpp), for avx512_core and avx2.
template <isa level>
bool accept_bnorm_fwd_jit(const bnorm_prb_t &p, std::string &why);
template <isa level>
std::unique_ptr<bnorm_fwd_impl_t> create_bnorm_fwd_jit(const bnorm_prb_t &p);
template <isa level>
bool accept_bnorm_bwd_jit(const bnorm_bwd_prb_t &p, std::string &why);
template <isa level>
std::unique_ptr<bnorm_bwd_impl_t> create_bnorm_bwd_jit(const bnorm_bwd_prb_t &p);

} // namespace blockdnn::impl
