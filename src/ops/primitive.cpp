// SPDX-License-Identifier: Apache-2.0
// blockdnn::primitive's queries, which every op answers from its state.
#include "blockdnn/primitive.hpp"
#include "core/utils.hpp"
#include "ops/op_state.hpp"

namespace blockdnn {

// A moved-from op has no state; its queries answer empty rather than crash.
const char *primitive::impl_name() const { return st_ ? st_->impl_name : ""; }

std::string primitive::impl_info() const {
    if (!st_) return {};
    const std::string info = st_->info();
    return info.empty() ? std::string(impl_name()) : impl::cat(impl_name(), "\n", info);
}

std::string primitive::str() const { return st_ ? st_->str() : std::string(); }

} // namespace blockdnn
