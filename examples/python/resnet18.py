# SPDX-License-Identifier: Apache-2.0
"""torchvision's ResNet-18 converted once and run on one image, checked against PyTorch: the
blockdnn form of

    model = torchvision.models.resnet18().eval()
    y = model.to_mkldnn()(x.to_mkldnn()).to_dense()

blockdnn.from_torch reads the model's modules and reorders the weights once: each BatchNorm is
folded into the convolution before it, the ReLUs become post-ops, and a residual block's add
(with the ReLU after it) is its last convolution's sum post-op. The converted model takes and
returns torch tensors; between layers the activations stay blocked. The weights are random
(no download); exits 1 on a mismatch.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/resnet18.py
"""
import sys

import torch
import torchvision

import blockdnn


def main():
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    converted = blockdnn.from_torch(model)
    x = torch.randn(1, 3, 224, 224)
    y = converted(x)
    with torch.no_grad():
        want = model(x)
    # A logit sums thousands of f32 products whose order differs from PyTorch's, so the
    # tolerance is relative to the largest logit.
    scale = want.abs().max().item()
    err = (y - want).abs().max().item()
    ok = y.shape == want.shape and torch.allclose(y, want, rtol=1e-3, atol=1e-3 * scale)
    same_top5 = torch.equal(y.topk(5).indices, want.topk(5).indices)
    print(f'resnet18 on {tuple(x.shape)}: logits {tuple(y.shape)}, max |blockdnn - torch| = {err:.2e} '
          f'(largest logit {scale:.2e}), top-5 classes {"agree" if same_top5 else "differ"} '
          f'{"ok" if ok else "MISMATCH"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
