# SPDX-License-Identifier: Apache-2.0
"""Batch normalization backward cases from PyTorch autograd, for test_bnorm_bwd_ref.

Each case: x (N, C, H, W), gamma, beta, dy, the statistics used (mean, biased var), and the
gradients dx, dgamma, dbeta of sum(dy * y) where y = [relu](batch_norm(x)). Training cases use
batch statistics; eval cases use fixed (running) statistics.
"""
import torch
import torch.nn.functional as F

from torchcase import save

EPS = 1e-5


def one(outdir, name, shape, training, relu, seed):
    g = torch.Generator().manual_seed(seed)
    c = shape[1]
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    gamma = (torch.rand(c, generator=g, dtype=torch.float64) + 0.5)
    beta = torch.randn(c, generator=g, dtype=torch.float64)
    dy = torch.randn(shape, generator=g, dtype=torch.float64)
    if training:
        mean = x.mean(dim=(0, 2, 3))
        var = x.var(dim=(0, 2, 3), unbiased=False)
    else:
        mean = torch.randn(c, generator=g, dtype=torch.float64) * 0.1
        var = torch.rand(c, generator=g, dtype=torch.float64) + 0.5
    # Round the inputs to float32 first so the C++ side sees exactly these values; autograd
    # runs in float64 on them.
    x, gamma, beta, dy = (t.float().double() for t in (x, gamma, beta, dy))
    mean, var = mean.float().double(), var.float().double()
    x.requires_grad_(True)
    gamma.requires_grad_(True)
    beta.requires_grad_(True)
    if training:
        y = F.batch_norm(x, None, None, gamma, beta, training=True, eps=EPS)
        mean = x.detach().mean(dim=(0, 2, 3)).float().double()
        var = x.detach().var(dim=(0, 2, 3), unbiased=False).float().double()
    else:
        y = F.batch_norm(x, mean, var, gamma, beta, training=False, eps=EPS)
    if relu:
        y = torch.relu(y)
    (y * dy).sum().backward()
    save(outdir, name, x=x.detach(), gamma=gamma.detach(), beta=beta.detach(), dy=dy, mean=mean, var=var,
         dx=x.grad, dgamma=gamma.grad, dbeta=beta.grad)


def generate(outdir):
    one(outdir, "bnbwd_train", (2, 5, 4, 3), True, False, 1)
    one(outdir, "bnbwd_train_relu", (3, 4, 5, 5), True, True, 2)
    one(outdir, "bnbwd_eval", (2, 6, 3, 4), False, False, 3)
    one(outdir, "bnbwd_eval_relu", (2, 3, 7, 2), False, True, 4)
