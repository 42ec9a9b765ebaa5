# SPDX-License-Identifier: Apache-2.0
"""A tensor copied on a stream: the blockdnn form of

    s = torch.cpu.Stream()
    with torch.cpu.stream(s):
        y = x.clone()
    s.synchronize()

blockdnn copies by reordering: into the blocked layout its ops prefer and back to a plain one.
Both calls are queued on s and return at once; y holds the copy after s.synchronize().
Exits 1 if the copy differs from x.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/copy_on_stream.py
"""
import sys

import torch

import blockdnn


def main():
    torch.manual_seed(0)
    x = torch.randn(8, 64, 28, 28)
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        xb = blockdnn.to_blocked(x)   # queued: xb is not written yet
        y = blockdnn.to_dense(xb)     # queued after it, reads what it writes
    s.synchronize()
    ok = torch.equal(y, x) and y.data_ptr() != x.data_ptr()
    print(f'copied {tuple(x.shape)} through {xb.layout} on a stream: {"same" if ok else "DIFFERENT"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
