# SPDX-License-Identifier: Apache-2.0
"""Writes PyTorch reference cases for the C++ tests.

A case is a folder <outdir>/<case>/ holding, per tensor, <name>.f32 (float32, little-endian,
C-contiguous in PyTorch's logical order) and <name>.shape (the dims, space-separated, one line).
tests/torch/torch_data.hpp reads them back. Generators are modules gen_<area>.py beside this
file with a function generate(outdir); gen_cases.py runs them all.
"""
import os

import numpy as np


def save(outdir, case, **tensors):
    """Saves each keyword tensor (torch.Tensor or numpy array) of one case."""
    folder = os.path.join(outdir, case)
    os.makedirs(folder, exist_ok=True)
    for name, t in tensors.items():
        a = t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)
        a = np.ascontiguousarray(a, dtype="<f4")
        a.tofile(os.path.join(folder, name + ".f32"))
        with open(os.path.join(folder, name + ".shape"), "w") as f:
            f.write(" ".join(str(d) for d in a.shape) + "\n")
