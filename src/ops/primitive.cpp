// SPDX-License-Identifier: Apache-2.0
// blockdnn::primitive's queries, which every op answers from its state.
#include "blockdnn/primitive.hpp"
#include "core/utils.hpp"
#include "ops/op_state.hpp"

namespace blockdnn {

void primitive::throw_moved_from() {
    throw error(status::invalid_arguments,
            "blockdnn: this op was moved from and holds no state: assign a created op to it first");
}

const char *primitive::impl_name() const { return state<impl::op_state_base_t>().impl_name; }

std::string primitive::impl_info() const {
    const std::string info = state<impl::op_state_base_t>().info();
    return info.empty() ? std::string(impl_name()) : impl::cat(impl_name(), "\n", info);
}

std::string primitive::str() const { return state<impl::op_state_base_t>().str(); }

} // namespace blockdnn
