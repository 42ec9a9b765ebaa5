// SPDX-License-Identifier: Apache-2.0
// The Python extension blockdnn._blockdnn: what its files share. Each file binds one area with
// a bind_<area>(module) function, called once from module.cpp; tensors cross from Python to the
// library through as_tensor() and back through to_python().
//
// The GIL: every call that runs an op, reorders, waits for a stream or creates an op that reads
// tensors releases it (py::gil_scoped_release) after its arguments are converted, so Python
// threads and streams run side by side; so does RnnStack's import of its weights. The op
// objects' copies of their parameters (own_copy in py_ops.cpp, when an object is made or a
// parameter assigned) keep it. Work queued on a stream holds its tensors; the last holder of a
// tensor viewed through DLPack may be a stream's thread, which takes the GIL to hand the memory
// back (see as_tensor).
#pragma once

#include <span>
#include <string>

#include <pybind11/pybind11.h>

#include "blockdnn/blockdnn.hpp"

namespace blockdnn::python {

namespace py = pybind11;

/// The library tensor behind a Python argument, without a copy: a blockdnn.Tensor as it is, or
/// any object with `__dlpack__` (a torch tensor, a NumPy array) or a DLPack capsule, viewed in
/// place and kept alive by the returned tensor and its copies. The view is float32 on the CPU,
/// in a plain layout: row-major strides give the plain tag of its rank (x, nc, ncw, nchw,
/// ncdhw); channels-last strides of rank 3 to 5 give nwc, nhwc, ndhwc. `arg` names the argument
/// in errors: a TypeError for an object that is neither, a ValueError for another dtype, device,
/// rank (0 or above 5) or strides that are neither, naming what was given.
tensor as_tensor(py::handle obj, const char *arg);

/// The same memory as `t`, described as `tag` (a plain tag of the same rank and the same
/// physical order: nchw as abcd, tnc as ncw, ldnc as abcd): a view that keeps `t`'s memory alive.
/// Throws ValueError naming `arg` when the layouts differ.
tensor view_as(const tensor &t, format_tag tag, const char *arg);

/// A result for Python: a blockdnn.Tensor that owns (shares) the memory of `t`. The pure-Python
/// layer turns plain ones into torch tensors with torch.from_dlpack, without a copy.
py::object to_python(const tensor &t);

/// The plain row-major tag of a rank (1: x, 2: nc, 3: ncw, 4: nchw, 5: ncdhw).
format_tag plain_tag_of_rank(int ndims);

/// The memory of `t` described as `desc` (which the caller has checked fits it), in a tensor
/// that keeps `t`'s memory alive as long as it or a copy lives.
tensor rewrap(const tensor &t, const tensor_desc &desc);

/// A shape as Python prints a tuple, for messages: "(2, 3)", "(5,)", "()".
std::string shape_text(std::span<const dim_t> dims);

void bind_errors(py::module_ &m);
void bind_tensor(py::module_ &m);
void bind_ops(py::module_ &m);
void bind_conv(py::module_ &m);
void bind_pool(py::module_ &m);
void bind_rnn(py::module_ &m);
void bind_streams(py::module_ &m);

} // namespace blockdnn::python
