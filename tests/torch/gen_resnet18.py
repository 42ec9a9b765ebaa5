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
import torch
import torchvision
from torchvision.models.resnet import Bottleneck, conv1x1

from torchcase import save

BN = torch.nn.BatchNorm2d


def _seed_batchnorm(model, stats_inputs):
    """Random affine parameters, then running statistics gathered in training mode."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, BN):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.reset_running_stats()
                m.momentum = None  # cumulative average over the passes
        model.train()
        for x in stats_inputs:
            model(x)
        model.eval()


def _params(model):
    return {k: v for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}


def _resnet18(outdir):
    torch.manual_seed(18)
    model = torchvision.models.resnet18(weights=None)
    _seed_batchnorm(model, [torch.randn(2, 3, 224, 224) for _ in range(2)])
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
    save(outdir, "resnet18", **_params(model), x=x, logits32=logits32, logits=logits64, stem=stages["maxpool"],
         **{name: stages[name] for name in ("layer1", "layer2", "layer3", "layer4", "avgpool")})


def _bottleneck(outdir):
    torch.manual_seed(50)
    block = Bottleneck(32, 16, stride=2, downsample=torch.nn.Sequential(conv1x1(32, 64, 2), BN(64)))
    _seed_batchnorm(block, [torch.randn(2, 32, 15, 15) for _ in range(2)])
    x = torch.randn(2, 32, 15, 15)
    with torch.no_grad():
        y32 = block(x)
        y64 = block.double()(x.double())
        block.float()
    save(outdir, "bottleneck", **_params(block), x=x, y32=y32, y64=y64)


def generate(outdir):
    _resnet18(outdir)
    _bottleneck(outdir)
