# SPDX-License-Identifier: Apache-2.0
"""Two streams with work of their own, synchronized: the blockdnn form of

    s1, s2 = torch.cpu.Stream(), torch.cpu.Stream()
    with torch.cpu.stream(s1):
        y1 = conv(x1)
    with torch.cpu.stream(s2):
        y2 = conv(x2)
    s1.synchronize()
    s2.synchronize()

blockdnn.streams(2) makes two streams that share out the library's threads, so the two convs
run side by side. Then an event orders a third step: s2 waits for s1's conv before it takes
the ReLUs of both results, which torch adds once both streams are synchronized. Each result,
and the sum, is checked against PyTorch; exits 1 on a mismatch.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/two_streams.py
"""
import sys

import torch

import blockdnn


def main():
    torch.manual_seed(0)
    ref = torch.nn.Conv2d(16, 16, 3, padding=1).eval()
    conv = blockdnn.nn.Conv2d.from_torch(ref)
    relu = blockdnn.nn.ReLU()
    x1, x2 = torch.randn(4, 16, 32, 32), torch.randn(4, 16, 32, 32)
    s1, s2 = blockdnn.streams(2)
    print(f'{blockdnn.get_num_threads()} threads: stream budgets {s1.threads} + {s2.threads}')
    with blockdnn.stream(s1):
        y1 = conv(x1)
    with blockdnn.stream(s2):
        y2 = conv(x2)
    done1 = s1.record()
    s2.wait(done1)                    # what s2 queues next starts after s1's conv
    with blockdnn.stream(s2):
        r1 = relu(y1)                 # reads s1's result: safe after the wait
        r2 = relu(y2)                 # s2's own result: queued after its conv
    s1.synchronize()
    s2.synchronize()
    total = r1 + r2                   # the ReLUs hold their values once s2 is synchronized
    with torch.no_grad():
        want1, want2 = ref(x1), ref(x2)
    want_total = torch.relu(want1) + torch.relu(want2)
    ok = True
    for name, got, want in (('y1', y1, want1), ('y2', y2, want2), ('relu(y1) + relu(y2)', total, want_total)):
        err = (got - want).abs().max().item()
        good = torch.allclose(got, want, rtol=1e-5, atol=1e-5)
        ok = ok and good
        print(f'{name}: max |blockdnn - torch| = {err:.2e} {"ok" if good else "MISMATCH"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
