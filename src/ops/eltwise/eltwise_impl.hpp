// SPDX-License-Identifier: Apache-2.0
// Internals of the eltwise op shared by its implementations, the dispatch table and
// kernelgen: the problem, the implementation interface and the factories (the contract is
// ops/op_table.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "blockdnn/eltwise_alg.hpp"
#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"
#include "blockdnn/tensor.hpp"
#include "jit/jit_kernel_cache.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

/// A validated eltwise problem.
struct eltwise_prb_t {
    eltwise_alg alg = eltwise_alg::relu;
    float alpha = 0.f, beta = 0.f;
    tensor_desc desc;
    /// "alg:gelu_tanh alpha:0 beta:0 nChw16c:2x17x5x7", for verbose lines and messages.
    std::string str() const;
};

/// Throws blockdnn::error (invalid_arguments) naming the field and value if prb breaks a
/// rule of eltwise_fwd: alg out of range, empty desc, alpha or beta not finite.
void check_eltwise_prb(const eltwise_prb_t &prb);

/// Parses benchdnn's eltwise problem syntax: "[--alg=ALG] [--alpha=F] [--beta=F] [--tag=TAG]
/// DIMS", e.g. "--alg=gelu_tanh 8x16x56x56" (alg relu, alpha and beta 0, tag abx by default;
/// tags as parse_tag takes them). Validates with check_eltwise_prb. Throws blockdnn::error
/// (invalid_arguments) naming the bad token.
eltwise_prb_t parse_eltwise_desc(const std::string &text);

struct eltwise_args_t {
    const float *src;
    float *dst;
};

/// One implementation, created once per op. execute() runs over desc.nelems_padded() floats
/// and leaves dst's padding zero.
using eltwise_impl_t = impl_t<eltwise_args_t>;
using eltwise_row_t = op_row_t<eltwise_prb_t, eltwise_impl_t>;

/// The dispatch table (defined in eltwise_fwd.cpp): jit:avx512_core, jit:avx2, ref.
std::span<const eltwise_row_t> eltwise_fwd_impls();

status create_eltwise_ref(const eltwise_prb_t &prb, std::unique_ptr<eltwise_impl_t> &out, std::string &why);
template <isa level>
status create_eltwise_jit(const eltwise_prb_t &prb, std::unique_ptr<eltwise_impl_t> &out, std::string &why);

/// The kernels the JIT implementation at `level` uses for prb (from the kernel cache): the
/// regular one, then, for tensors larger than the last-level cache, the streaming-store one.
/// kernelgen prints exactly these.
status eltwise_jit_kernels(const eltwise_prb_t &prb, isa level, std::vector<kernel_ptr> &out, std::string &why);

} // namespace blockdnn::impl
