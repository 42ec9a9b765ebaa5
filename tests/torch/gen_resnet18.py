# SPDX-License-Identifier: Apache-2.0
"""PyTorch reference cases for whole networks: torchvision's ResNet-18 and one Bottleneck block.

Case resnet18/ (torchvision.models.resnet18(weights=None), seeded, eval mode, batch 2, 224x224):
- every entry of the state dict under its PyTorch name ("conv1.weight", "layer1.0.bn1.running_var",
  "fc.bias", ...; num_batches_tracked is left out), in PyTorch's logical order;
- x, the input (2, 3, 224, 224);
- logits32, PyTorch's float32 logits;
- the float64 re-run of the same model on the same input (parameters and input promoted
  exactly), rounded to float32 once at the end: stem (after the max pool), layer1 .. layer4,
  avgpool (2, 512, 1, 1) and logits. This is the near-exact answer.

Case bottleneck/: a torchvision Bottleneck(32, 16, stride 2) with a 1x1 stride-2 downsample,
on a (2, 32, 15, 15) input: its parameters under the block's names ("conv1.weight",
"downsample.0.weight", "downsample.1.running_mean", ...), x, y32 and y64.

Batch norm layers get weights in [0.5, 1.5), biases in [-0.5, 0.5) and running statistics from
two training-mode passes on other random inputs (cumulative average, momentum=None), so each
channel has its own mean and variance and activations stay O(1) through every layer.
"""
import os
import sys

import torch
import torchvision
from torchvision.models.resnet import Bottleneck, conv1x1

from torchcase import save

# The examples' seeding of batch norm and their state dict, so that both seed models alike.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
from models import seed_batchnorm, state  # noqa: E402


def _resnet18(outdir):
    torch.manual_seed(18)
    model = torchvision.models.resnet18(weights=None)
    seed_batchnorm(model, [torch.randn(2, 3, 224, 224) for _ in range(2)])
    x = torch.randn(2, 3, 224, 224)
    with torch.no_grad():
        logits32 = model(x)
        stages = {}
        hooks = [getattr(model, name).register_forward_hook(
                 lambda _m, _i, out, name=name: stages.__setitem__(name, out.float()))
                 for name in ("maxpool", "layer1", "layer2", "layer3", "layer4", "avgpool")]
        model64 = model.double()
        logits64 = model64(x.double())
        for h in hooks:
            h.remove()
        model.float()
    save(outdir, "resnet18", **state(model), x=x, logits32=logits32, logits=logits64, stem=stages["maxpool"],
         **{name: stages[name] for name in ("layer1", "layer2", "layer3", "layer4", "avgpool")})


def _bottleneck(outdir):
    torch.manual_seed(50)
    block = Bottleneck(32, 16, stride=2, downsample=torch.nn.Sequential(conv1x1(32, 64, 2), torch.nn.BatchNorm2d(64)))
    seed_batchnorm(block, [torch.randn(2, 32, 15, 15) for _ in range(2)])
    x = torch.randn(2, 32, 15, 15)
    with torch.no_grad():
        y32 = block(x)
        y64 = block.double()(x.double())
        block.float()
    save(outdir, "bottleneck", **state(block), x=x, y32=y32, y64=y64)


def generate(outdir):
    _resnet18(outdir)
    _bottleneck(outdir)
