// SPDX-License-Identifier: Apache-2.0
// blockdnn._blockdnn: the compiled half of the Python package blockdnn (python/blockdnn/).
#include "bindings.hpp"

PYBIND11_MODULE(_blockdnn, m) {
    namespace bp = blockdnn::python;
    m.doc() = "blockdnn's CPU kernels and layouts; use the package blockdnn, which wraps this module";
    bp::bind_errors(m);
    bp::bind_tensor(m);
    bp::bind_ops(m);
    bp::bind_conv(m);
    bp::bind_pool(m);
    bp::bind_rnn(m);
    bp::bind_streams(m);
}
