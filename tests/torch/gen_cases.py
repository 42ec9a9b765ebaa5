# SPDX-License-Identifier: Apache-2.0
"""Runs every tests/torch/gen_<area>.py generator: gen_cases.py OUTDIR STAMP.

Run with Debian's /usr/bin/python3 (it has python3-torch). Seeds are fixed in each generator,
so a rerun writes the same bytes. STAMP is touched last, for the build system.
"""
import glob
import importlib.util
import os
import sys

import torch


def main():
    outdir, stamp = sys.argv[1], sys.argv[2]
    torch.set_num_threads(1)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)  # generators import torchcase
    for path in sorted(glob.glob(os.path.join(here, "gen_*.py"))):
        if os.path.basename(path) == "gen_cases.py":
            continue
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.generate(outdir)
    with open(stamp, "w") as f:
        f.write("ok\n")


if __name__ == "__main__":
    main()
