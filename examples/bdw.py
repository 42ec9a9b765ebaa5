# SPDX-License-Identifier: Apache-2.0
"""Reads and writes .bdw weights files (format: examples/nets/weights_file.hpp).

magic b"BDNW", u32 version 1, u32 count, then per tensor: u32 name length, name (UTF-8),
u32 ndims, ndims x i64 dims, prod(dims) x f32 (all little-endian, row-major).
"""
import struct

import numpy as np

MAGIC = b"BDNW"
VERSION = 1


def write(path, tensors):
    """Writes a dict name -> array-like (torch tensors are detached and made float32)."""
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<II", VERSION, len(tensors)))
        for name, t in tensors.items():
            a = t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)
            a = np.ascontiguousarray(a, dtype="<f4")
            b = name.encode()
            f.write(struct.pack("<I", len(b)) + b + struct.pack("<I", a.ndim))
            f.write(struct.pack("<%dq" % a.ndim, *a.shape))
            f.write(a.tobytes())


def read(path):
    """Returns a dict name -> float32 numpy array."""
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != MAGIC:
        raise ValueError(path + ": magic is not BDNW")
    version, count = struct.unpack_from("<II", data, 4)
    if version != VERSION:
        raise ValueError("%s: version %d" % (path, version))
    pos = 12
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos)
        name = data[pos + 4:pos + 4 + n].decode()
        pos += 4 + n
        (nd,) = struct.unpack_from("<I", data, pos)
        dims = struct.unpack_from("<%dq" % nd, data, pos + 4)
        pos += 4 + 8 * nd
        size = int(np.prod(dims)) if nd else 1
        out[name] = np.frombuffer(data, dtype="<f4", count=size, offset=pos).reshape(dims)
        pos += 4 * size
    return out
