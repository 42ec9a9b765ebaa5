# SPDX-License-Identifier: Apache-2.0
"""Times PyTorch on the example's model: prints "dense <items/s>" and "mkldnn <items/s>".

Run by build/examples/resnet --table --torch, with the same weights file, batch, input size and
thread count as the blockdnn row beside it. The mkldnn figure is the model after
torch.utils.mkldnn.to_mkldnn (blocked oneDNN layouts, as PyTorch offers them) with the input
converted by x.to_mkldnn() outside the timed region. The best of --iters runs is kept.
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def best_time(fn, iters):
    fn()
    best = float("inf")
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="resnet50")
    p.add_argument("--weights")
    p.add_argument("--mb", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--t", type=int, default=16)
    p.add_argument("--input", type=int, default=128)
    p.add_argument("--hidden", type=int, default=256)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    model = models.load(a.model, a.weights, a.size, a.input, a.hidden)
    if a.model == "lstm":
        x = torch.randn(a.t, a.mb, a.input)
    else:
        x = torch.randn(a.mb, 3, a.size, a.size)
    with torch.no_grad():
        print("dense %.3f" % (a.mb / best_time(lambda: model(x), a.iters)), flush=True)
        if a.model != "lstm":
            from torch.utils import mkldnn as mkldnn_utils
            mk = mkldnn_utils.to_mkldnn(model)
            xm = x.to_mkldnn()
            print("mkldnn %.3f" % (a.mb / best_time(lambda: mk(xm), a.iters)), flush=True)


if __name__ == "__main__":
    main()
