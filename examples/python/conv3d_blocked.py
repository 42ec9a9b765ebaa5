# SPDX-License-Identifier: Apache-2.0
"""A Conv3d on blocked tensors, checked against PyTorch: the blockdnn form of

    conv = torch.nn.Conv3d(16, 32, 3, padding=1).to_mkldnn()   # weights reordered once
    y = conv(x.to_mkldnn()).to_dense()

A blockdnn.Tensor in the blocked layout (nCdhw16c / nCdhw8c) in gives one in the same layout
family out, so layers chain without reorders; to_dense reads the result back. Exits 1 on a
mismatch.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/conv3d_blocked.py
"""
import sys

import torch

import blockdnn


def main():
    torch.manual_seed(0)
    ref = torch.nn.Conv3d(16, 32, 3, padding=1).eval()
    conv = blockdnn.nn.Conv3d.from_torch(ref)
    relu = blockdnn.nn.ReLU()
    x = torch.randn(2, 16, 8, 12, 12)
    xb = blockdnn.to_blocked(x)
    yb = relu(conv(xb))               # blocked in, blocked out: no reorder between the two
    y = blockdnn.to_dense(yb)
    with torch.no_grad():
        want = torch.relu(ref(x))
    err = (y - want).abs().max().item()
    ok = isinstance(yb, blockdnn.Tensor) and yb.is_blocked and torch.allclose(y, want, rtol=1e-4, atol=1e-5)
    print(f'Conv3d(16, 32, 3, padding=1) + ReLU on {xb.layout} {tuple(x.shape)}: {yb.layout} {yb.shape}, '
          f'max |blockdnn - torch| = {err:.2e} {"ok" if ok else "MISMATCH"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
