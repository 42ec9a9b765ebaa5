// SPDX-License-Identifier: Apache-2.0
#include "tensor/launch.hpp"

namespace blockdnn::impl {

void run_op(const char *op, denormals_mode dm, const std::string &line, sched::fn_ref_t<void()> work) {
    const double t0 = line.empty() ? 0 : now_ms();
    run_impl(op, dm, work);
    if (!line.empty()) verbose_print(cat(line, ",", now_ms() - t0));
}

} // namespace blockdnn::impl
