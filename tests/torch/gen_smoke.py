# SPDX-License-Identifier: Apache-2.0
"""A case that checks the harness itself: a seeded tensor and values derived from it."""
import torch

from torchcase import save


def generate(outdir):
    torch.manual_seed(1)
    x = torch.randn(2, 3, 4)
    save(outdir, "smoke", x=x, x_sum_c=x.sum(dim=1), x_relu=torch.relu(x))
