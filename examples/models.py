# SPDX-License-Identifier: Apache-2.0
"""The PyTorch models the examples run, with their seeded parameters.

- resnet18 / resnet50: torchvision.models.resnet18/50(weights=None). Pretrained weights cannot
  be downloaded here, so parameters are seeded: torchvision's own initialization, then batch
  norm scales in [0.5, 1.5), shifts in [-0.5, 0.5) and running statistics from two
  training-mode passes over random images (so every channel has its own mean and variance).
- lstm: torch.nn.LSTM(input, hidden, num_layers=2), PyTorch's default initialization.
- fashion: the small ResNet of train_fashion_mnist.py (nets::fashion_resnet in C++).
"""
import torch
import torchvision
from torchvision.models.resnet import BasicBlock


class FashionResNet(torch.nn.Module):
    """3x3 stride-2 stem to 16 channels (14x14), BasicBlocks of 16, 32 (7x7), 64 (4x4) planes,
    global average pool, 10 classes. State-dict names match torchvision's ResNet."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, 2, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(16)
        self.relu = torch.nn.ReLU(inplace=True)

        def down(i, o):
            return torch.nn.Sequential(torch.nn.Conv2d(i, o, 1, 2, bias=False), torch.nn.BatchNorm2d(o))

        self.layer1 = torch.nn.Sequential(BasicBlock(16, 16))
        self.layer2 = torch.nn.Sequential(BasicBlock(16, 32, 2, down(16, 32)))
        self.layer3 = torch.nn.Sequential(BasicBlock(32, 64, 2, down(32, 64)))
        self.avgpool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(64, 10)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def seed_batchnorm(model, stats_inputs):
    """Random affine parameters, then running statistics gathered in training mode."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.reset_running_stats()
                m.momentum = None  # cumulative average over the passes
        model.train()
        for x in stats_inputs:
            model(x)
        model.eval()


def state(model):
    """The state dict without num_batches_tracked (blockdnn does not need it)."""
    return {k: v for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}


def build(name, seed=0, size=224, input_size=128, hidden=256, seed_bn=True):
    """A seeded model in eval mode (seed_bn=False: batch norm left at its defaults)."""
    torch.manual_seed(seed)
    if name in ("resnet18", "resnet50"):
        model = getattr(torchvision.models, name)(weights=None)
        if seed_bn:
            seed_batchnorm(model, [torch.randn(2, 3, size, size) for _ in range(2)])
    elif name == "lstm":
        model = torch.nn.LSTM(input_size, hidden, num_layers=2)
    elif name == "fashion":
        model = FashionResNet()
    else:
        raise ValueError("unknown model " + name)
    return model.eval()


def load(name, weights, size=224, input_size=128, hidden=256):
    """The model with the parameters of a .bdw file (or seeded ones if weights is None)."""
    import bdw
    model = build(name, 0, size, input_size, hidden, seed_bn=not weights)
    if weights:
        params = bdw.read(weights)
        sd = model.state_dict()
        for k in sd:
            if k in params:
                sd[k] = torch.from_numpy(params[k].copy())
            elif not k.endswith("num_batches_tracked"):
                raise KeyError("%s: no %s" % (weights, k))
        model.load_state_dict(sd)
    return model.eval()
