# SPDX-License-Identifier: Apache-2.0
"""PyTorch batch-norm cases: nn.BatchNorm1d/2d/3d in train and eval mode.

The 1000-offset case normalizes the float inputs in float64 (see case()).

Case bnorm_<name>/ holds x, weight, bias (absent without affine), the running statistics before
(rm0, rv0) and after (rm1, rv1) the forward, y, and meta = [train, affine, relu, eps, momentum].
Train mode normalizes with the batch statistics and updates the running ones (unbiased
variance); eval mode normalizes with the running statistics.
"""
import torch

from torchcase import save


def case(outdir, name, module, shape, train, relu=False, offset=0.0, seed=0, double=False):
    torch.manual_seed(seed)
    c = shape[1]
    with torch.no_grad():
        if module.affine:
            module.weight.uniform_(0.5, 2.0)
            module.bias.uniform_(-1.0, 1.0)
        module.running_mean.uniform_(-1.0, 1.0)
        module.running_var.uniform_(0.5, 2.0)
    rm0, rv0 = module.running_mean.clone(), module.running_var.clone()
    x = torch.randn(*shape) * 2.0 + offset
    module.train(train)
    with torch.no_grad():
        # double: the float32 inputs normalized in float64, for inputs whose float path loses
        # digits (float's own mean of values near 1000 is off by ~ulp(1000) = 6e-5).
        y = module.double()(x.double()).float() if double else module(x)
        if relu:
            y = torch.relu(y)
    tensors = dict(x=x, rm0=rm0, rv0=rv0, rm1=module.running_mean.float(), rv1=module.running_var.float(), y=y,
                   meta=torch.tensor([float(train), float(module.affine), float(relu), module.eps,
                                      module.momentum]))
    if module.affine:
        tensors.update(weight=module.weight.float(), bias=module.bias.float())
    assert c == module.num_features
    save(outdir, "bnorm_" + name, **tensors)


def generate(outdir):
    nn = torch.nn
    for train in (True, False):
        mode = "train" if train else "eval"
        case(outdir, "1d_nc_" + mode, nn.BatchNorm1d(7), (16, 7), train, seed=1)
        case(outdir, "1d_ncw_" + mode, nn.BatchNorm1d(5), (4, 5, 9), train, seed=2)
        case(outdir, "2d_" + mode, nn.BatchNorm2d(19), (3, 19, 6, 5), train, seed=3)
        case(outdir, "2d_noaffine_" + mode, nn.BatchNorm2d(4, affine=False, eps=1e-3), (2, 4, 3, 3), train, seed=4)
        case(outdir, "2d_relu_momentum_" + mode, nn.BatchNorm2d(8, momentum=0.3), (2, 8, 4, 4), train,
             relu=True, seed=5)
        case(outdir, "3d_" + mode, nn.BatchNorm3d(6), (2, 6, 3, 4, 5), train, seed=6)
    # A large offset: float E[x^2] - E[x]^2 would lose the variance here. Reference in double.
    case(outdir, "2d_offset_train", nn.BatchNorm2d(3), (4, 3, 8, 8), True, offset=1000.0, seed=7, double=True)
