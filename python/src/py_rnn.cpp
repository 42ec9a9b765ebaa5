// SPDX-License-Identifier: Apache-2.0
#include "bindings.hpp"

namespace blockdnn::python {

void bind_rnn(py::module_ &) {}

} // namespace blockdnn::python
