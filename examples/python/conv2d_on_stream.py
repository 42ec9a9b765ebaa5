# SPDX-License-Identifier: Apache-2.0
"""Conv2d(1, 1, 3) on a 1x1x100x100 input on a stream, checked against PyTorch:

    conv = torch.nn.Conv2d(1, 1, 3)
    with torch.cpu.stream(s):
        y = conv(x)
    s.synchronize()

blockdnn.nn.Conv2d.from_torch takes the module's weights once; the call inside the block is
queued on s and y holds the result after s.synchronize(). Exits 1 on a mismatch.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/conv2d_on_stream.py
"""
import sys

import torch

import blockdnn


def main():
    torch.manual_seed(0)
    ref = torch.nn.Conv2d(1, 1, 3).eval()
    conv = blockdnn.nn.Conv2d.from_torch(ref)
    x = torch.randn(1, 1, 100, 100)
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        y = conv(x)
    s.synchronize()
    with torch.no_grad():
        want = ref(x)
    err = (y - want).abs().max().item()
    ok = y.shape == want.shape and torch.allclose(y, want, rtol=1e-5, atol=1e-5)
    print(f'Conv2d(1, 1, 3) on {tuple(x.shape)} on a stream: output {tuple(y.shape)}, '
          f'max |blockdnn - torch| = {err:.2e} {"ok" if ok else "MISMATCH"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
