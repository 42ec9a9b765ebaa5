// SPDX-License-Identifier: Apache-2.0
// Internals of the eltwise op shared by its implementations, the dispatch table and
// kernelgen: the problem, the implementation interface and the factories (the contract is
// ops/op_table.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blockdnn/eltwise.hpp"
#include "blockdnn/eltwise_alg.hpp"
#include "blockdnn/isa.hpp"
#include "blockdnn/status.hpp"
#include "blockdnn/tensor.hpp"
#include "jit/jit_kernel_cache.hpp"
#include "ops/op_table.hpp"

namespace blockdnn::impl {

/// A validated eltwise problem: the fields of eltwise_desc, with the layout src and dst share
/// (desc.dims() are eltwise_desc::dims).
struct eltwise_prb_t {
    eltwise_alg alg = eltwise_alg::relu;
    float alpha = 0.f, beta = 0.f;
    tensor_desc desc;
    /// "alg:gelu_tanh alpha:0 beta:0 nChw16c:2x17x5x7", for verbose lines and messages.
    std::string str() const;
    /// The public problem: {alg, alpha, beta, desc.dims()}.
    eltwise_desc op_desc() const { return {alg, alpha, beta, desc.dims()}; }
};

/// Throws blockdnn::error (invalid_arguments) naming the field and value if prb breaks a
/// rule of eltwise_fwd: prb.op_desc().validate().
void check_eltwise_prb(const eltwise_prb_t &prb);

/// The problem of eltwise_fwd(desc, src_tag, dst_tag): validates desc, checks that src_tag
/// describes desc.dims and that dst_tag equals src_tag. Throws blockdnn::error
/// (invalid_arguments) naming the field, value and rule.
eltwise_prb_t make_eltwise_prb(const eltwise_desc &desc, format_tag src_tag, format_tag dst_tag);

/// The problem from benchdnn's fields as text: an alg name (eltwise_alg_from_string), alpha,
/// beta, dims ("8x16x56x56", parse_dims) and a tag (parse_tag: abx, axb, aBx16b, nchw, ...).
/// parse_eltwise_prb and kernelgen's --alg/--alpha/--beta/--tag/dims build problems through
/// it. Throws blockdnn::error (invalid_arguments) as those parsers and make_eltwise_prb do.
eltwise_prb_t eltwise_prb_from_fields(
        const std::string &alg, float alpha, float beta, const std::string &dims, const std::string &tag);

/// The problem of parse_eltwise_desc(text, &tag) (src/ops/eltwise/eltwise_parse.cpp), through
/// eltwise_prb_from_fields. Throws as parse_eltwise_desc does.
eltwise_prb_t parse_eltwise_prb(std::string_view text);

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

/// The reference (src/ops/eltwise/eltwise_ref.cpp): every problem, every layout.
std::unique_ptr<eltwise_impl_t> create_eltwise_fwd_ref(const eltwise_prb_t &prb);
/// The JIT row at `level` (src/ops/eltwise/eltwise_jit.cpp).
template <isa level>
status create_eltwise_fwd_jit(const eltwise_prb_t &prb, std::unique_ptr<eltwise_impl_t> &out, std::string &why);

/// The kernels the JIT implementation at `level` uses for prb (from the kernel cache): the
/// regular one, then, for tensors larger than the last-level cache, the streaming-store one.
/// kernelgen prints exactly these.
status eltwise_jit_kernels(const eltwise_prb_t &prb, isa level, std::vector<kernel_ptr> &out, std::string &why);

} // namespace blockdnn::impl
