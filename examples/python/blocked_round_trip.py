# SPDX-License-Identifier: Apache-2.0
"""x = torch.randn(100, 32, 56, 56) to the blocked layout and back: the blockdnn form of

    xb = x.to_mkldnn()
    y = xb.to_dense()

blockdnn.to_blocked picks the layout blockdnn's ops prefer on this CPU (nChw16c with AVX-512,
nChw8c with AVX2); blockdnn.to_dense gives a plain torch tensor again. Exits 1 if the round
trip changes a value.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/blocked_round_trip.py
"""
import sys

import torch

import blockdnn


def main():
    torch.manual_seed(0)
    x = torch.randn(100, 32, 56, 56)
    xb = blockdnn.to_blocked(x)
    y = blockdnn.to_dense(xb)
    ok = torch.equal(y, x) and torch.equal(x.to_mkldnn().to_dense(), y)
    print(f'{tuple(x.shape)} -> {xb.layout} ({xb.nbytes / 2**20:.1f} MiB) -> nchw: '
          f'{"same as x and as to_mkldnn().to_dense()" if ok else "DIFFERENT"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
