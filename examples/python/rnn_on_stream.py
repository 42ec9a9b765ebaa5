# SPDX-License-Identifier: Apache-2.0
"""RNN(10, 10) on a (100, 10) sequence on a stream, checked against PyTorch:

    rnn = torch.nn.RNN(10, 10)
    with torch.cpu.stream(s):
        out, h_n = rnn(x)
    s.synchronize()

An unbatched sequence of 100 steps of 10 features; blockdnn.RNN.from_torch takes the module's
weights once. Exits 1 on a mismatch.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/rnn_on_stream.py
"""
import sys

import torch

import blockdnn


def main():
    torch.manual_seed(0)
    ref = torch.nn.RNN(10, 10).eval()
    rnn = blockdnn.RNN.from_torch(ref)
    x = torch.randn(100, 10)
    s = blockdnn.Stream()
    with blockdnn.stream(s):
        out, h_n = rnn(x)
    s.synchronize()
    with torch.no_grad():
        want, want_h = ref(x)
    err = max((out - want).abs().max().item(), (h_n - want_h).abs().max().item())
    ok = (out.shape == want.shape and h_n.shape == want_h.shape and torch.allclose(out, want, atol=1e-5)
          and torch.allclose(h_n, want_h, atol=1e-5))
    print(f'RNN(10, 10) on {tuple(x.shape)} on a stream: output {tuple(out.shape)}, h_n {tuple(h_n.shape)}, '
          f'max |blockdnn - torch| = {err:.2e} {"ok" if ok else "MISMATCH"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
