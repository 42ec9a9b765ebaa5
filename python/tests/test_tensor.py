"""Tensors between PyTorch, NumPy and blockdnn: no copies for plain layouts, reorders for
blocked ones, and clear errors for what blockdnn cannot view."""
import numpy as np
import pytest
import torch

import blockdnn


def test_from_dlpack_shares_memory_both_ways():
    x = torch.randn(2, 3, 5, 7)
    t = blockdnn.from_dlpack(x)
    assert t.shape == (2, 3, 5, 7)
    assert t.layout == 'nchw'
    assert t.data_ptr() == x.data_ptr()
    y = blockdnn.to_torch(t)
    assert y.data_ptr() == x.data_ptr()
    y[0, 0, 0, 0] = 42.0
    assert x[0, 0, 0, 0].item() == 42.0


def test_channels_last_is_nhwc():
    x = torch.randn(2, 3, 5, 7).to(memory_format=torch.channels_last)
    t = blockdnn.from_dlpack(x)
    assert t.layout == 'nhwc'
    assert t.shape == (2, 3, 5, 7)
    assert torch.equal(blockdnn.to_dense(blockdnn.to_blocked(t)), x.contiguous())


def test_view_outlives_the_torch_tensor():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = blockdnn.from_dlpack(x)
    del x
    assert np.array_equal(np.asarray(t), np.arange(12, dtype=np.float32).reshape(3, 4))


def test_numpy_buffer_protocol_without_copy():
    a = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    t = blockdnn.from_dlpack(a)
    assert t.data_ptr() == a.ctypes.data
    b = np.asarray(t)
    assert b.ctypes.data == a.ctypes.data
    assert np.array_equal(a, b)


@pytest.mark.parametrize('shape', [(1, 1, 1, 1), (2, 17, 5, 3), (3, 64, 7, 7), (1, 3, 4, 5, 6), (2, 20, 9)])
def test_blocked_round_trip(shape):
    x = torch.randn(*shape)
    xb = blockdnn.to_blocked(x)
    assert xb.is_blocked
    assert xb.shape == shape
    assert xb.layout.endswith('16c') or xb.layout.endswith('8c')
    assert torch.equal(blockdnn.to_dense(xb), x)


def test_blocked_layout_by_name():
    x = torch.randn(2, 20, 3, 3)
    xb = blockdnn.to_blocked(x, 'nChw8c')
    assert xb.layout == 'nChw8c'
    assert torch.equal(blockdnn.to_dense(xb), x)


def test_blocked_tensor_has_no_strided_view():
    xb = blockdnn.to_blocked(torch.randn(1, 16, 2, 2))
    with pytest.raises(ValueError, match='blocked layout'):
        torch.from_dlpack(xb)
    with pytest.raises(ValueError, match='blocked layout'):
        np.asarray(xb)
    with pytest.raises(ValueError, match='blocked layout'):
        memoryview(xb)


@pytest.mark.parametrize('bad, match', [
    (lambda: torch.zeros(2, 3, dtype=torch.float64), 'dtype float64; blockdnn takes float32'),
    (lambda: torch.zeros(2, 3, dtype=torch.int32), 'dtype int32'),
    (lambda: torch.zeros(2, 3, dtype=torch.bfloat16), 'dtype bfloat16'),
    (lambda: np.zeros((2, 3), dtype=np.uint8), 'dtype uint8'),
    (lambda: torch.zeros(4, 6)[:, ::2], 'neither contiguous'),
    (lambda: torch.zeros(()), '0 dimensions'),
    (lambda: torch.zeros(1, 1, 1, 1, 1, 1), '6 dimensions'),
    (lambda: torch.zeros(0, 3, 4, 4), r'shape \(0, 3, 4, 4\) has 0 elements in dimension 0'),
    (lambda: torch.zeros(2, 0, 4, 4), 'dimension 1'),
    (lambda: torch.zeros(0), 'dimension 0'),
])
def test_bad_tensors_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        blockdnn.from_dlpack(bad())


def test_not_a_tensor():
    with pytest.raises(TypeError, match='list'):
        blockdnn.from_dlpack([1.0, 2.0])


def test_library_errors_carry_status():
    with pytest.raises(blockdnn.ArgumentError) as e:
        blockdnn.to_blocked(torch.zeros(2, 3, 4, 4), 'no_such_layout')
    assert e.value.status == 'invalid_arguments'
    assert isinstance(e.value, ValueError) and isinstance(e.value, blockdnn.Error)


def test_refusals_by_the_producer_carry_its_words_without_a_traceback():
    with pytest.raises(ValueError, match='has no DLPack view') as e:
        blockdnn.from_dlpack(torch.zeros(2, 3, requires_grad=True))
    assert 'At:' not in str(e.value) and 'require' in str(e.value)


def test_a_capsule_of_another_kind_is_named():
    import ctypes
    make = ctypes.pythonapi.PyCapsule_New
    make.restype, make.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    cap = make(ctypes.c_void_p(8), b'not_dltensor', None)
    with pytest.raises(ValueError, match="capsule named 'not_dltensor'"):
        blockdnn.from_dlpack(cap)
    used = torch.zeros(3).__dlpack__()
    torch.from_dlpack(used)
    with pytest.raises(ValueError, match='already consumed'):
        blockdnn.from_dlpack(used)


def _buffer_request(obj, flags):
    """Asks obj for a buffer with the given PyBUF flags, as a C consumer would: 0 or the error."""
    import ctypes

    class Py_buffer(ctypes.Structure):
        _fields_ = [('buf', ctypes.c_void_p), ('obj', ctypes.py_object), ('len', ctypes.c_ssize_t),
                    ('itemsize', ctypes.c_ssize_t), ('readonly', ctypes.c_int), ('ndim', ctypes.c_int),
                    ('format', ctypes.c_char_p), ('shape', ctypes.c_void_p), ('strides', ctypes.c_void_p),
                    ('suboffsets', ctypes.c_void_p), ('internal', ctypes.c_void_p)]

    view = Py_buffer()
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.POINTER(Py_buffer), ctypes.c_int]
    try:
        get(obj, ctypes.byref(view), flags)
    except BufferError as e:
        return e
    ctypes.pythonapi.PyBuffer_Release.argtypes = [ctypes.POINTER(Py_buffer)]
    ctypes.pythonapi.PyBuffer_Release(ctypes.byref(view))
    return 0


# CPython's PyBUF_* request flags (Include/pybuffer.h).
PyBUF_ND, PyBUF_STRIDES = 0x0008, 0x0008 | 0x0010
PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS, PyBUF_ANY_CONTIGUOUS = 0x0020 | PyBUF_STRIDES, 0x0040 | PyBUF_STRIDES, \
    0x0080 | PyBUF_STRIDES


@pytest.mark.parametrize('flags, nchw_ok, nhwc_ok', [
    (PyBUF_STRIDES, True, True),
    (PyBUF_ND, True, False),
    (PyBUF_C_CONTIGUOUS, True, False),
    (PyBUF_F_CONTIGUOUS, False, False),
    (PyBUF_ANY_CONTIGUOUS, True, False),
])
def test_buffer_requests_for_an_order_the_layout_lacks_are_refused(flags, nchw_ok, nhwc_ok):
    x = torch.randn(2, 3, 4, 5)
    for t, ok in ((blockdnn.from_dlpack(x), nchw_ok),
                  (blockdnn.from_dlpack(x.to(memory_format=torch.channels_last)), nhwc_ok)):
        r = _buffer_request(t, flags)
        if ok:
            assert r == 0
        else:
            assert isinstance(r, BufferError) and t.layout in str(r)
    # A 1-D tensor is both C- and Fortran-contiguous.
    assert _buffer_request(blockdnn.from_dlpack(torch.randn(7)), PyBUF_F_CONTIGUOUS) == 0


def test_a_blocked_tensor_has_to_dense_as_a_to_mkldnn_tensor_does():
    x = torch.randn(2, 20, 3, 5)
    y = blockdnn.to_blocked(x).to_dense()
    assert isinstance(y, torch.Tensor) and torch.equal(y, x)


def test_exceptions_are_named_where_users_import_them():
    assert blockdnn.Error.__module__ == blockdnn.ArgumentError.__module__ == 'blockdnn'
    assert str(blockdnn.ArgumentError) == "<class 'blockdnn.ArgumentError'>"
