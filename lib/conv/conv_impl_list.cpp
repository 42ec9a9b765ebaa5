// SPDX-License-Identifier: Apache-2.0
// The forward-convolution dispatch table, best first; "ref" last takes every problem.
#include "conv/conv_impl.hpp"

namespace blockdnn::impl {

namespace {

bool accept_any(const conv_prb_t &, std::string &) { return true; }

constexpr conv_impl_entry_t impls[] = {
        {"ref", isa::scalar, accept_any, create_conv_fwd_ref},
};

} // namespace

std::span<const conv_impl_entry_t> conv_fwd_impls() { return impls; }

} // namespace blockdnn::impl
