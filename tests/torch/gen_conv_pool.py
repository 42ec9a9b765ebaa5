# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference cases for the reference conv, pooling, linear and softmax ops.

Each case saves its seeded float32 inputs, PyTorch's float32 output `y32` and the output
computed in float64 from the same float32 inputs, `y64` (the near-exact answer), plus
`desc.txt`: "<op> <alg> <benchdnn descriptor>" in blockdnn's conventions (dilation 0 = dense,
i.e. PyTorch's dilation - 1; begin pads given, end pads implied by the output size).
"""
import os

import torch
import torch.nn.functional as F

from torchcase import save


def _desc(outdir, case, text):
    with open(os.path.join(outdir, case, "desc.txt"), "w") as f:
        f.write(text + "\n")


def _spatial(prefix, values):
    """'ih5iw7' style keys for the last len(values) of the d, h, w dims."""
    letters = "dhw"[3 - len(values):]
    return "".join(f"{prefix}{l}{v}" for l, v in zip(letters, values))


def _conv_case(outdir, case, seed, n, c, m, spatial, k, stride=1, pad=0, dil=1, groups=1, bias=True,
               asym=None, residual=False):
    """Conv{1,2,3}d. `asym` = per-dim (begin, end) pads applied with F.pad instead of `pad`.
    `residual` saves r and y = relu(conv(x) + r) (the sum + relu post-op chain)."""
    torch.manual_seed(seed)
    nsp = len(spatial)
    as_tuple = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * nsp
    k, stride, dil = as_tuple(k), as_tuple(stride), as_tuple(dil)
    x = torch.randn(n, c, *spatial)
    w = torch.randn(m, c // groups, *k) * (1.0 / (c // groups * torch.tensor(k).prod().item()) ** 0.5)
    b = torch.randn(m) if bias else None
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nsp]
    if asym is None:
        pads = [(p, p) for p in as_tuple(pad)]
    else:
        pads = list(asym)
    # F.pad takes (last dim begin, last dim end, previous dim begin, ...).
    flat = [v for pe in reversed(pads) for v in pe]

    def run(dt):
        xp = F.pad(x.to(dt), flat)
        return conv(xp, w.to(dt), None if b is None else b.to(dt), stride=stride, dilation=dil, groups=groups)

    y32, y64 = run(torch.float32), run(torch.float64)
    tensors = dict(x=x, w=w, y32=y32, y64=y64)
    if b is not None:
        tensors["b"] = b
    if residual:
        r = torch.randn(y32.shape)
        tensors.update(r=r, y32=torch.relu(y32 + r), y64=torch.relu(y64 + r.double()))
    save(outdir, case, **tensors)
    out = list(y32.shape[2:])
    desc = (f"g{groups}mb{n}ic{c}" + _spatial("i", spatial) + f"oc{m}" + _spatial("o", out) + _spatial("k", k)
            + _spatial("s", stride) + _spatial("p", [p[0] for p in pads]) + _spatial("d", [d - 1 for d in dil]))
    _desc(outdir, case, ("conv_residual_relu " if residual else "conv ") + ("bias " if bias else "nobias ") + desc)


def _pool_case(outdir, case, seed, kind, n, c, spatial, k, stride, pad=0, dil=1, ceil=False, include_pad=False):
    torch.manual_seed(seed)
    nsp = len(spatial)
    as_tuple = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * nsp
    k, stride, pad, dil = as_tuple(k), as_tuple(stride), as_tuple(pad), as_tuple(dil)
    x = torch.randn(n, c, *spatial)

    def run(dt):
        xd = x.to(dt)
        if kind == "max":
            f = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nsp]
            return f(xd, k, stride, pad, dil, ceil_mode=ceil)
        f = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[nsp]
        return f(xd, k, stride, pad, ceil_mode=ceil, count_include_pad=include_pad)

    y32, y64 = run(torch.float32), run(torch.float64)
    save(outdir, case, x=x, y32=y32, y64=y64)
    alg = "max" if kind == "max" else ("avg_include_pad" if include_pad else "avg_exclude_pad")
    desc = (f"mb{n}ic{c}" + _spatial("i", spatial) + _spatial("o", list(y32.shape[2:])) + _spatial("k", k)
            + _spatial("s", stride) + _spatial("p", pad) + _spatial("d", [d - 1 for d in dil]))
    _desc(outdir, case, f"pool {alg} {desc}")


def generate(outdir):
    # convolution: groups, dilation, stride 2 with asymmetric padding, 3-D, 1-D, depthwise
    # with a channel multiplier, and a fused residual add + relu
    _conv_case(outdir, "conv2d_groups", 1, 2, 8, 12, (9, 7), 3, pad=1, groups=4)
    _conv_case(outdir, "conv2d_dilated", 2, 2, 5, 6, (12, 11), 3, pad=2, dil=2)
    _conv_case(outdir, "conv2d_s2_asym_pad", 3, 2, 4, 8, (10, 10), 3, stride=2, asym=[(1, 0), (0, 1)])
    _conv_case(outdir, "conv3d", 4, 2, 3, 4, (6, 7, 5), (3, 2, 3), stride=(2, 1, 2), pad=(1, 0, 1))
    _conv_case(outdir, "conv1d_dilated_strided", 5, 3, 6, 4, (20,), 5, stride=3, pad=2, dil=2, bias=False)
    _conv_case(outdir, "conv2d_depthwise_x2", 6, 2, 6, 12, (8, 8), 3, stride=2, pad=1, groups=6)
    _conv_case(outdir, "conv2d_residual_relu", 7, 2, 4, 4, (6, 6), 3, pad=1, residual=True)
    # pooling
    _pool_case(outdir, "maxpool2d_k3s2p1", 11, "max", 2, 5, (11, 11), 3, 2, 1)
    _pool_case(outdir, "maxpool2d_ceil", 12, "max", 2, 3, (10, 10), 3, 2, ceil=True)
    _pool_case(outdir, "maxpool1d_dilated", 13, "max", 2, 4, (17,), 4, 2, 1, dil=2)
    _pool_case(outdir, "maxpool3d", 14, "max", 1, 3, (7, 6, 5), 3, 2, 1)
    _pool_case(outdir, "avgpool2d_include_pad", 15, "avg", 2, 5, (9, 8), 3, 2, 1, include_pad=True)
    _pool_case(outdir, "avgpool2d_exclude_pad", 16, "avg", 2, 5, (9, 8), 3, 2, 1)
    _pool_case(outdir, "avgpool2d_exclude_pad_ceil", 17, "avg", 2, 3, (10, 10), 3, 2, 1, ceil=True)
    _pool_case(outdir, "avgpool3d_exclude_pad", 18, "avg", 2, 3, (5, 6, 7), 3, 2, 1)
    torch.manual_seed(19)
    x = torch.randn(2, 7, 5, 6)
    save(outdir, "global_avgpool", x=x, y32=F.adaptive_avg_pool2d(x, 1),
         y64=F.adaptive_avg_pool2d(x.double(), 1))
    _desc(outdir, "global_avgpool", "global_pool avg_exclude_pad mb2ic7ih5iw6")
    # the classifier end of a network: linear and softmax
    torch.manual_seed(20)
    x, w, b = torch.randn(4, 2048), torch.randn(10, 2048) * 0.02, torch.randn(10)
    save(outdir, "linear", x=x, w=w, b=b, y32=F.linear(x, w, b), y64=F.linear(x.double(), w.double(), b.double()))
    _desc(outdir, "linear", "linear bias mb4ic2048oc10")
    torch.manual_seed(21)
    x = torch.randn(4, 10) * 5
    save(outdir, "softmax", x=x, y32=F.softmax(x, dim=1), y64=F.softmax(x.double(), dim=1))
    _desc(outdir, "softmax", "softmax axis1 mb4ic10")
