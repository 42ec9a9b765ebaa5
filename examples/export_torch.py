# SPDX-License-Identifier: Apache-2.0
"""Exports a seeded PyTorch model's parameters into a .bdw weights file for the examples.

    /usr/bin/python3 examples/export_torch.py --model=resnet50 --out=resnet50.bdw [--reference=2]

--reference=N adds N random inputs "x" and PyTorch's float32 outputs "logits" for them (for
the LSTM: x (t, N, input) and its output (t, N, hidden)), which the example and the tests
compare against. Seeds are fixed: a rerun writes the same bytes.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bdw  # noqa: E402
import models  # noqa: E402


def export(model_name, out, reference=0, size=224, seed=0, t=16, input_size=128, hidden=256):
    model = models.build(model_name, seed, size, input_size, hidden)
    tensors = dict(models.state(model))
    if reference:
        g = torch.Generator().manual_seed(seed + 1)
        with torch.no_grad():
            if model_name == "lstm":
                x = torch.randn(t, reference, input_size, generator=g)
                y = model(x)[0]
            else:
                x = torch.randn(reference, 3, size, size, generator=g)
                y = model(x)
        tensors["x"], tensors["logits"] = x, y
    bdw.write(out, tensors)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, choices=["resnet18", "resnet50", "lstm"])
    p.add_argument("--out", required=True)
    p.add_argument("--reference", type=int, default=0, help="reference inputs and outputs to add")
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--t", type=int, default=16)
    p.add_argument("--input", type=int, default=128)
    p.add_argument("--hidden", type=int, default=256)
    a = p.parse_args()
    torch.set_num_threads(2)
    export(a.model, a.out, a.reference, a.size, 0, a.t, a.input, a.hidden)


if __name__ == "__main__":
    main()
