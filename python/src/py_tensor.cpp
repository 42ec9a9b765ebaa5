// SPDX-License-Identifier: Apache-2.0
// blockdnn.Tensor, DLPack in both directions, the buffer protocol, and the library's errors as
// Python exceptions.
#include <Python.h>
#include <dlpack/dlpack.h>

#include <array>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.hpp"

namespace blockdnn::python {

namespace {

// The names a DLPack capsule goes by: before a consumer takes it, and after.
constexpr const char *dltensor_name = "dltensor";
constexpr const char *used_dltensor_name = "used_dltensor";

std::string type_name(py::handle obj) { return py::str(py::type::of(obj).attr("__qualname__")); }

// A DLPack dtype as PyTorch and NumPy name it (float64, int32, bfloat16, ...).
std::string dtype_name(DLDataType t) {
    std::string kind;
    switch (t.code) {
    case kDLInt: kind = "int"; break;
    case kDLUInt: kind = "uint"; break;
    case kDLFloat: kind = "float"; break;
    case kDLBfloat: kind = "bfloat"; break;
    case kDLComplex: kind = "complex"; break;
    default: kind = "DLPack type code " + std::to_string(t.code) + " of "; break;
    }
    std::string name = kind + std::to_string(t.bits);
    if (t.lanes != 1) name += " x " + std::to_string(t.lanes) + " lanes";
    return name;
}

// Hands a consumed DLPack tensor back to its producer. The last holder may be a stream's
// thread, and producers such as NumPy drop Python references in their deleter, so it runs
// with the GIL; once the interpreter is going away there is nothing left to hand back to.
void release_managed(DLManagedTensor *managed) {
    if (!managed->deleter) return;
    if (!Py_IsInitialized() || _Py_IsFinalizing()) return;
    py::gil_scoped_acquire gil;
    managed->deleter(managed);
}

// The plain tag whose strides a DLPack view has, or undef: row-major, or channels last.
format_tag tag_of_strides(const DLTensor &dl) {
    const int n = dl.ndim;
    if (!dl.strides) return plain_tag_of_rank(n);
    auto matches = [&](const std::vector<int> &order) { // outermost dim first
        int64_t expect = 1;
        for (int k = n - 1; k >= 0; --k) {
            const int d = order[k];
            // A dim of size 1 may carry any stride (PyTorch gives such dims odd ones).
            if (dl.shape[d] != 1 && dl.strides[d] != expect) return false;
            expect *= dl.shape[d];
        }
        return true;
    };
    std::vector<int> row_major(n);
    for (int d = 0; d < n; ++d) row_major[d] = d;
    if (matches(row_major)) return plain_tag_of_rank(n);
    if (n >= 3) {
        std::vector<int> last {0};
        for (int d = 2; d < n; ++d) last.push_back(d);
        last.push_back(1);
        static constexpr std::array<format_tag, 3> channels_last {format_tag::nwc, format_tag::nhwc, format_tag::ndhwc};
        if (matches(last)) return channels_last[n - 3];
    }
    return format_tag::undef;
}

tensor from_capsule(py::capsule cap, const std::string &what, const char *arg) {
    const std::string name = cap.name() ? cap.name() : "";
    if (name == used_dltensor_name)
        throw py::value_error(std::string(arg) + ": the DLPack capsule of " + what
                + " was already consumed (DLPack capsules are read once)");
    if (name != dltensor_name)
        throw py::value_error(std::string(arg) + ": " + what + " is a capsule named '" + name
                + "', not a DLPack capsule ('" + dltensor_name + "')");
    auto *managed = static_cast<DLManagedTensor *>(cap.get_pointer());
    // Taken now, so that every error below still returns the memory to its producer.
    std::shared_ptr<DLManagedTensor> keep(managed, release_managed);
    PyCapsule_SetName(cap.ptr(), used_dltensor_name);
    const DLTensor &dl = managed->dl_tensor;
    if (dl.device.device_type != kDLCPU && dl.device.device_type != kDLCUDAHost)
        throw py::value_error(std::string(arg) + ": " + what + " is on DLPack device type "
                + std::to_string(dl.device.device_type) + "; blockdnn runs on the CPU (device type 1)");
    if (dl.dtype.code != kDLFloat || dl.dtype.bits != 32 || dl.dtype.lanes != 1)
        throw py::value_error(std::string(arg) + ": " + what + " has dtype " + dtype_name(dl.dtype)
                + "; blockdnn takes float32 (.float() converts a torch tensor)");
    if (dl.ndim < 1 || dl.ndim > 5)
        throw py::value_error(std::string(arg) + ": " + what + " has " + std::to_string(dl.ndim)
                + " dimensions; blockdnn takes 1 to 5");
    const std::span<const dim_t> shape(dl.shape, static_cast<std::size_t>(dl.ndim));
    // Checked before the strides: PyTorch gives an empty tensor strides no layout has.
    for (int d = 0; d < dl.ndim; ++d)
        if (dl.shape[d] < 1)
            throw py::value_error(std::string(arg) + ": " + what + " of shape " + shape_text(shape) + " has "
                    + std::to_string(dl.shape[d]) + " elements in dimension " + std::to_string(d)
                    + "; blockdnn takes tensors with at least 1 in every dimension");
    const format_tag tag = tag_of_strides(dl);
    if (tag == format_tag::undef)
        throw py::value_error(std::string(arg) + ": " + what + " of shape " + shape_text(shape) + " has strides "
                + shape_text({dl.strides, static_cast<std::size_t>(dl.ndim)})
                + ", neither contiguous nor channels last; call .contiguous() first");
    // The dims stay logical (n, c, spatial) for channels last too: the tag names the order.
    const dims_t dims(dl.shape, dl.shape + dl.ndim);
    void *data = static_cast<char *>(dl.data) + dl.byte_offset;
    return tensor(tensor_desc(dims, tag), data, std::shared_ptr<void>(keep, data));
}

// What a DLPack capsule made by blockdnn owns: a copy of the tensor (sharing its memory) and
// the shape and strides the DLTensor points to.
struct exported_t {
    tensor t;
    std::array<int64_t, max_ndims> shape {}, strides {};
    DLManagedTensor managed {};
};

void delete_exported(DLManagedTensor *managed) { delete static_cast<exported_t *>(managed->manager_ctx); }

void check_plain(const tensor &t, const char *what) {
    if (t.desc().is_blocked())
        throw py::value_error(std::string(what) + ": the tensor is in the blocked layout " + to_string(t.desc().tag())
                + ", which has no strided view; blockdnn.to_dense(x) gives a plain one");
}

py::capsule to_dlpack(const tensor &t) {
    check_plain(t, "__dlpack__");
    auto ex = std::make_unique<exported_t>();
    ex->t = t;
    const tensor_desc &d = t.desc();
    for (int k = 0; k < d.ndims(); ++k) {
        ex->shape[k] = d.dim(k);
        ex->strides[k] = d.stride(k);
    }
    DLTensor &dl = ex->managed.dl_tensor;
    dl.data = t.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = d.ndims();
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = ex->shape.data();
    dl.strides = ex->strides.data();
    dl.byte_offset = 0;
    ex->managed.manager_ctx = ex.get();
    ex->managed.deleter = delete_exported;
    DLManagedTensor *managed = &ex.release()->managed;
    // A capsule nobody consumed still owns the tensor; a consumed one was renamed, and its
    // consumer calls the deleter.
    return py::capsule(managed, dltensor_name, [](PyObject *cap) {
        if (PyCapsule_IsValid(cap, dltensor_name)) {
            auto *m = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(cap, dltensor_name));
            m->deleter(m);
        }
    });
}

// The shape and strides (in bytes) a Py_buffer points to, alive until the buffer is released.
struct buffer_dims_t {
    std::array<Py_ssize_t, max_ndims> shape {}, strides {};

    // Whether the elements lie one after another with the last dim fastest (C order) or the
    // first (Fortran order); a dim of size 1 may have any stride.
    bool contiguous(int ndims, bool c_order) const {
        Py_ssize_t expect = sizeof(float);
        for (int i = 0; i < ndims; ++i) {
            const int k = c_order ? ndims - 1 - i : i;
            if (shape[k] != 1 && strides[k] != expect) return false;
            expect *= shape[k];
        }
        return true;
    }
};

bool asks_for(int flags, int request) { return (flags & request) == request; }

int get_buffer(PyObject *obj, Py_buffer *view, int flags) {
    view->obj = nullptr;
    try {
        const tensor &t = py::handle(obj).cast<const tensor &>();
        check_plain(t, "buffer protocol");
        const tensor_desc &d = t.desc();
        auto dims = std::make_unique<buffer_dims_t>();
        Py_ssize_t len = sizeof(float);
        for (int k = 0; k < d.ndims(); ++k) {
            dims->shape[k] = d.dim(k);
            dims->strides[k] = d.stride(k) * static_cast<Py_ssize_t>(sizeof(float));
            len *= d.dim(k);
        }
        view->buf = t.data();
        view->len = len;
        view->itemsize = sizeof(float);
        view->readonly = 0;
        view->ndim = d.ndims();
        view->format = (flags & PyBUF_FORMAT) ? const_cast<char *>("f") : nullptr;
        view->shape = (flags & PyBUF_ND) ? dims->shape.data() : nullptr;
        view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? dims->strides.data() : nullptr;
        view->suboffsets = nullptr;
        // A consumer that asks for no strides or for a contiguous buffer reads the elements in
        // that order without looking at strides: refuse rather than hand it nhwc as nchw.
        const bool c_order = dims->contiguous(d.ndims(), true), f_order = dims->contiguous(d.ndims(), false);
        const char *wanted = nullptr;
        if (asks_for(flags, PyBUF_C_CONTIGUOUS) && !c_order) wanted = "C-contiguous";
        if (asks_for(flags, PyBUF_F_CONTIGUOUS) && !f_order) wanted = "Fortran-contiguous";
        if (asks_for(flags, PyBUF_ANY_CONTIGUOUS) && !c_order && !f_order) wanted = "contiguous";
        if (!view->strides && (flags & PyBUF_ND) && !c_order) wanted = "C-ordered (no strides)";
        if (wanted)
            throw py::buffer_error("buffer protocol: the tensor is in the layout " + std::string(to_string(d.tag()))
                    + "; the consumer asked for a " + wanted + " buffer");
        view->internal = dims.release();
        view->obj = py::handle(obj).inc_ref().ptr();
        return 0;
    } catch (py::error_already_set &e) {
        e.restore();
    } catch (py::builtin_exception &e) {
        e.set_error();
    } catch (std::exception &e) {
        PyErr_SetString(PyExc_BufferError, e.what());
    }
    return -1;
}

void release_buffer(PyObject *, Py_buffer *view) { delete static_cast<buffer_dims_t *>(view->internal); }

py::tuple dims_tuple(const dims_t &dims) {
    py::tuple t(dims.size());
    for (std::size_t k = 0; k < dims.size(); ++k) t[k] = dims[k];
    return t;
}

} // namespace

format_tag plain_tag_of_rank(int ndims) {
    static constexpr std::array<format_tag, 5> tags {
            format_tag::x, format_tag::nc, format_tag::ncw, format_tag::nchw, format_tag::ncdhw};
    if (ndims < 1 || ndims > 5) throw py::value_error("no plain layout of rank " + std::to_string(ndims));
    return tags[ndims - 1];
}

tensor as_tensor(py::handle obj, const char *arg) {
    if (py::isinstance<tensor>(obj)) return obj.cast<tensor>();
    if (py::isinstance<py::capsule>(obj))
        return from_capsule(py::reinterpret_borrow<py::capsule>(obj), "the capsule", arg);
    if (py::hasattr(obj, "__dlpack__")) {
        const std::string what = "a " + type_name(obj);
        py::object cap;
        try {
            cap = obj.attr("__dlpack__")();
        } catch (py::error_already_set &e) {
            // PyTorch refuses tensors that require grad, NumPy read-only arrays: say which, in
            // the producer's words without its traceback.
            throw py::value_error(
                    std::string(arg) + ": " + what + " has no DLPack view: " + std::string(py::str(e.value())));
        }
        return from_capsule(cap.cast<py::capsule>(), what, arg);
    }
    throw py::type_error(
            std::string(arg) + ": expected a torch tensor, a NumPy array or a blockdnn.Tensor, got " + type_name(obj));
}

tensor view_as(const tensor &t, format_tag tag, const char *arg) {
    const tensor_desc &d = t.desc();
    if (d.tag() == tag) return t;
    const tensor_desc want(d.dims(), d.dt(), tag);
    bool same = !d.is_blocked() && !want.is_blocked() && d.ndims() == want.ndims();
    for (int k = 0; same && k < d.ndims(); ++k) same = d.dim(k) == 1 || d.stride(k) == want.stride(k);
    if (!same) throw py::value_error(std::string(arg) + ": expected layout " + to_string(tag) + ", got " + d.str());
    return rewrap(t, want);
}

tensor rewrap(const tensor &t, const tensor_desc &desc) {
    // The owner holds a copy of the original, so the view keeps its memory alive whether the
    // original owns it or views memory kept by another owner.
    auto hold = std::make_shared<tensor>(t);
    return tensor(desc, t.data(), std::shared_ptr<void>(hold, t.data()));
}

std::string shape_text(std::span<const dim_t> dims) {
    std::ostringstream s;
    s << "(";
    for (std::size_t k = 0; k < dims.size(); ++k) s << (k ? ", " : "") << dims[k];
    s << (dims.size() == 1 ? ",)" : ")");
    return s.str();
}

py::object to_python(const tensor &t) { return py::cast(t); }

void bind_errors(py::module_ &m) {
    // blockdnn.Error for every library error (its `status` names the kind), and
    // blockdnn.ArgumentError, also a ValueError, for invalid arguments.
    static py::exception<error> base(m, "Error", PyExc_RuntimeError);
    static py::handle argument_error;
    py::tuple bases = py::make_tuple(base, py::handle(PyExc_ValueError));
    argument_error = PyErr_NewException("blockdnn._blockdnn.ArgumentError", bases.ptr(), nullptr);
    if (!argument_error) throw py::error_already_set();
    m.attr("ArgumentError") = argument_error;
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const error &e) {
            py::handle type = e.code() == status::invalid_arguments ? argument_error : py::handle(base);
            py::object exc =
                    py::reinterpret_steal<py::object>(PyObject_CallOneArg(type.ptr(), py::str(e.what()).ptr()));
            if (!exc) return; // the call set its own error
            exc.attr("status") = to_string(e.code());
            PyErr_SetObject(type.ptr(), exc.ptr());
        }
    });
}

void bind_tensor(py::module_ &m) {
    auto cls = py::class_<tensor>(
            m, "Tensor", py::buffer_protocol(), R"(A blockdnn tensor: float32 memory in a plain or blocked layout.

Plain ones (nchw, nhwc, nc, ...) convert to and from torch tensors and NumPy arrays without a
copy (DLPack, the buffer protocol); blocked ones (nChw16c, nCdhw8c, ...) are what the ops
prefer, made by blockdnn.to_blocked and read back with blockdnn.to_dense.)")
                       .def_property_readonly(
                               "shape", [](const tensor &t) { return dims_tuple(t.desc().dims()); },
                               "the logical dims, outermost first (n, c, h, w for nchw and for nChw16c)")
                       .def_property_readonly(
                               "layout", [](const tensor &t) { return std::string(to_string(t.desc().tag())); },
                               "the format tag: nchw, nhwc, nChw16c, tnc, ldigo, ...")
                       .def_property_readonly("is_blocked", [](const tensor &t) { return t.desc().is_blocked(); })
                       .def_property_readonly(
                               "dtype", [](const tensor &t) { return std::string(to_string(t.desc().dt())); })
                       .def_property_readonly(
                               "nbytes", [](const tensor &t) { return t.desc().size_bytes(); },
                               "bytes of memory, the padding of blocked layouts included")
                       .def("data_ptr", [](const tensor &t) { return reinterpret_cast<std::uintptr_t>(t.data()); })
                       .def(
                               "__dlpack__", [](const tensor &t, py::object) { return to_dlpack(t); },
                               py::arg("stream") = py::none(),
                               "a DLPack capsule viewing this plain tensor (no copy); ValueError for a blocked one")
                       .def(
                               "__array__",
                               [](py::object self, py::object) {
                                   // NumPy reaches this only when the buffer protocol refused (a blocked
                                   // tensor); without it np.asarray would make a 0-d object array.
                                   const tensor &t = self.cast<const tensor &>();
                                   check_plain(t, "numpy.asarray");
                                   const tensor_desc &d = t.desc();
                                   std::vector<py::ssize_t> shape, strides;
                                   for (int k = 0; k < d.ndims(); ++k) {
                                       shape.push_back(d.dim(k));
                                       strides.push_back(d.stride(k) * static_cast<py::ssize_t>(sizeof(float)));
                                   }
                                   return py::array(py::dtype::of<float>(), shape, strides, t.data(), self);
                               },
                               py::arg("dtype") = py::none())
                       .def("__dlpack_device__", [](const tensor &) { return py::make_tuple(int(kDLCPU), 0); })
                       .def("__repr__", [](const tensor &t) { return "blockdnn.Tensor(" + t.desc().str() + ")"; });
    // The buffer protocol by hand: pybind11's def_buffer cannot refuse a request (an exception
    // there ends the process), and a blocked tensor must be refused.
    auto *heap = reinterpret_cast<PyHeapTypeObject *>(cls.ptr());
    heap->as_buffer.bf_getbuffer = get_buffer;
    heap->as_buffer.bf_releasebuffer = release_buffer;

    m.def(
            "from_dlpack", [](py::handle obj) { return as_tensor(obj, "from_dlpack"); }, py::arg("x"),
            R"(A blockdnn.Tensor viewing x's memory without a copy: a torch tensor, a NumPy array, any
object with __dlpack__, or a DLPack capsule. x must be float32 on the CPU, contiguous or
channels last (nhwc); the tensor keeps x's memory alive.)");
    m.def(
            "to_blocked",
            [](py::handle x, const std::string &layout) {
                const tensor src = as_tensor(x, "to_blocked");
                py::gil_scoped_release nogil;
                return layout.empty() ? blockdnn::to_blocked(src) : reorder(src, format_tag_from_string(layout));
            },
            py::arg("x"), py::arg("layout") = "",
            R"(x (a plain torch tensor, array or blockdnn.Tensor) reordered into a blocked layout: the one
the ops prefer on this CPU (nChw16c with AVX-512, nChw8c with AVX2, and the 1-D and 3-D
forms), or `layout` when given. Queued on the current stream inside blockdnn.stream(s).)");
    m.def(
            "to_dense",
            [](py::handle x) {
                const tensor src = as_tensor(x, "to_dense");
                py::gil_scoped_release nogil;
                return blockdnn::to_dense(src);
            },
            py::arg("x"), "x reordered into the plain layout of its rank (nChw16c -> nchw); a plain x as it is");
}

} // namespace blockdnn::python
