// SPDX-License-Identifier: Apache-2.0
// Batch normalization internals, forward and backward: the validated problems every
// implementation sees, the run-time arguments, the implementation interface and the dispatch
// tables (the contract is ops/op_table.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "blockdnn/bnorm.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

/// A validated forward problem. mb, c and sp (= id * ih * iw, 1 for nc) come from desc.src.
struct bnorm_prb_t {
    bnorm_desc desc;
    dim_t mb = 0, c = 0, sp = 0;
    bool training = false, use_scale = false, use_shift = false, fuse_relu = false;
};

/// "training:nChw16c:2x17x5x5:nChw16c:eps1e-05:flags=scale+shift+relu", for verbose lines.
std::string to_string(const bnorm_prb_t &p);

/// Memory of one forward execution, already checked against the problem. Per-channel arrays
/// hold c floats. Inference reads mean and variance; training writes them (scratch when the
/// caller gave none). scale / shift are set with their flags, null without.
struct bnorm_args_t {
    const float *src = nullptr;
    float *dst = nullptr;
    float *mean = nullptr, *variance = nullptr;
    const float *scale = nullptr, *shift = nullptr;
};

/// One forward implementation, created once per op; execute() is const and may run
/// concurrently.
using bnorm_impl_t = impl_t<bnorm_args_t>;
using bnorm_row_t = op_row_t<bnorm_prb_t, bnorm_impl_t>;

/// The forward table (bnorm_fwd.cpp): jit:avx512_core, jit:avx2, ref.
std::span<const bnorm_row_t> bnorm_fwd_impls();

/// The reference (bnorm_ref.cpp): every problem, every layout.
std::unique_ptr<bnorm_impl_t> create_bnorm_fwd_ref(const bnorm_prb_t &prb);

// Helpers the forward and the backward share (bnorm_fwd.cpp); each message starts with `op`.

/// An execution's tensor `field`: with memory, and described as the op was created for.
/// `why`, when given, says why an optional tensor is required.
void check_bnorm_tensor(
        const char *op, const tensor &t, const char *field, const tensor_desc &expected, const char *why = nullptr);

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

/// Memory of one backward execution, already checked against the problem. Per-channel arrays
/// hold c floats: mean and variance are read, scale with use_scale; diff_scale / diff_shift
/// are written with their flags. dst_fwd (the forward's dst) is set with fuse_relu. The
/// pointers a flag does not use are null.
struct bnorm_bwd_args_t {
    const float *src = nullptr, *diff_dst = nullptr;
    float *diff_src = nullptr;
    const float *mean = nullptr, *variance = nullptr, *scale = nullptr, *dst_fwd = nullptr;
    float *diff_scale = nullptr, *diff_shift = nullptr;
};

/// One backward implementation, as bnorm_impl_t.
using bnorm_bwd_impl_t = impl_t<bnorm_bwd_args_t>;
using bnorm_bwd_row_t = op_row_t<bnorm_bwd_prb_t, bnorm_bwd_impl_t>;

/// The backward table (bnorm_bwd.cpp): jit:avx512_core, jit:avx2, ref.
std::span<const bnorm_bwd_row_t> bnorm_bwd_impls();

/// The reference backward (bnorm_bwd_ref.cpp).
std::unique_ptr<bnorm_bwd_impl_t> create_bnorm_bwd_ref(const bnorm_bwd_prb_t &prb);

/// The JIT rows' one-pass creates (bnorm_jit_impl.cpp), for avx512_core and avx2: init_conf
/// runs once; unimplemented with the reason when the JIT path does not take the problem.
template <isa level>
status create_bnorm_fwd_jit(const bnorm_prb_t &p, std::unique_ptr<bnorm_impl_t> &out, std::string &why);
template <isa level>
status create_bnorm_bwd_jit(const bnorm_bwd_prb_t &p, std::unique_ptr<bnorm_bwd_impl_t> &out, std::string &why);

} // namespace blockdnn::impl
