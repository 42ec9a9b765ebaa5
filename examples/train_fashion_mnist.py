# SPDX-License-Identifier: Apache-2.0
"""Trains the small ResNet of models.FashionResNet on Fashion-MNIST, then exports it for blockdnn.

    /usr/bin/python3 examples/train_fashion_mnist.py --out-dir=DIR [--epochs=1] [--train-images=60000]

Reads Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist/*-ubyte.gz, IDX format:
big-endian u32 magic 0x803 / 0x801, count, [rows, cols], then u8 values). Writes
- DIR/fashion.bdw: the trained parameters (state-dict names, as nets::fashion_resnet reads them);
- DIR/fashion_test.bdw: the 10,000 normalized test images "x" (10000, 1, 28, 28), their "labels"
  and PyTorch's float32 "logits" (10000, 10) in eval mode;
and prints PyTorch's test accuracy. Seeds are fixed and torch runs on 2 threads, so a rerun
trains the same model.
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bdw  # noqa: E402
import models  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530  # of the training images, pixel / 255


def read_idx(path, magic):
    with gzip.open(path, "rb") as f:
        data = f.read()
    m, n = np.frombuffer(data, ">u4", 2)
    if m != magic:
        raise ValueError("%s: magic %#x, expected %#x" % (path, m, magic))
    if magic == 0x803:
        rows, cols = np.frombuffer(data, ">u4", 2, 8)
        return np.frombuffer(data, np.uint8, n * rows * cols, 16).reshape(n, 1, rows, cols)
    return np.frombuffer(data, np.uint8, n, 8)


def load(split, data_dir):
    x = read_idx(os.path.join(data_dir, split + "-images-idx3-ubyte.gz"), 0x803)
    y = read_idx(os.path.join(data_dir, split + "-labels-idx1-ubyte.gz"), 0x801)
    x = (x.astype(np.float32) / 255.0 - MEAN) / STD
    return torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", required=True)
    p.add_argument("--data-dir", default=DATA)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--train-images", type=int, default=60000, help="use the first N training images")
    p.add_argument("--batch", type=int, default=128)
    a = p.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(0)
    xtr, ytr = load("train", a.data_dir)
    xte, yte = load("t10k", a.data_dir)
    xtr, ytr = xtr[:a.train_images], ytr[:a.train_images]

    model = models.FashionResNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    steps = a.epochs * ((len(xtr) + a.batch - 1) // a.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=steps)
    t0 = time.time()
    model.train()
    for epoch in range(a.epochs):
        perm = torch.randperm(len(xtr))
        for k in range(0, len(xtr), a.batch):
            idx = perm[k:k + a.batch]
            loss = torch.nn.functional.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        print("epoch %d: loss %.4f (%.0f s)" % (epoch + 1, loss.item(), time.time() - t0), flush=True)

    model.eval()
    with torch.no_grad():
        logits = torch.cat([model(xte[k:k + 500]) for k in range(0, len(xte), 500)])
    acc = (logits.argmax(1) == yte).float().mean().item()
    print("PyTorch test accuracy: %.2f%% (%d of %d)" % (100 * acc, int(round(acc * len(yte))), len(yte)))
    os.makedirs(a.out_dir, exist_ok=True)
    bdw.write(os.path.join(a.out_dir, "fashion.bdw"), models.state(model))
    bdw.write(os.path.join(a.out_dir, "fashion_test.bdw"), {"x": xte, "labels": yte.float(), "logits": logits})


if __name__ == "__main__":
    main()
