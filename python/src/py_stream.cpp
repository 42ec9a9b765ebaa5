// SPDX-License-Identifier: Apache-2.0
#include "bindings.hpp"

namespace blockdnn::python {

void bind_streams(py::module_ &) {}

} // namespace blockdnn::python
