// SPDX-License-Identifier: Apache-2.0
#include "blockdnn/status.hpp"

namespace blockdnn {

const char *to_string(status s) {
    switch (s) {
    case status::success: return "success";
    case status::invalid_arguments: return "invalid_arguments";
    case status::unimplemented: return "unimplemented";
    case status::out_of_memory: return "out_of_memory";
    case status::runtime_error: return "runtime_error";
    }
    return "unknown";
}

} // namespace blockdnn
