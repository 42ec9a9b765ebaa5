#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the convolution shape lists of test_conv_jit_shapes (tests/data/conv/shapes_*) from
oneDNN benchdnn's inputs/conv directory (commit 3f27bec2, Apache-2.0).

Usage: gen_shapes.py BENCHDNN_CONV_DIR [OUT_DIR]   (OUT_DIR: this script's directory)

Each list keeps every problem descriptor of its benchdnn file, in order: '#' starts a comment
to the end of the line (so commented-out lines are left out), blanks separate descriptors,
option tokens ('--...') are left out, and a descriptor already seen in the same file is left
out. Each output file starts with a '#' line naming the source.
"""
import os
import sys

# ResNet-50, GoogLeNet v1, MobileNet, shapes_3d and the lists set_conv_3d includes.
LISTS = [
    "shapes_resnet_50",
    "shapes_googlenet_v1",
    "shapes_mobilenet",
    "shapes_3d",
    "shapes_3d_1st_strided_padding",
    "shapes_3d_1x1_strided_no-padding",
    "shapes_3d_1x1_strided_padding",
    "shapes_3d_1x1_unit-stride_no-padding",
    "shapes_3d_1x1_unit-stride_padding",
    "shapes_3d_2d_strided_padding",
    "shapes_3d_strided_no-padding",
    "shapes_3d_strided_padding",
    "shapes_3d_unit-stride_no-padding",
    "shapes_3d_unit-stride_padding",
]

HEADER = "# oneDNN benchdnn inputs/conv/{name}, commit 3f27bec2, Apache-2.0 (tests/data/conv/gen_shapes.py)\n"


def descriptors(text):
    """The problem descriptors of a benchdnn batch file's text, duplicates left out."""
    seen, out = set(), []
    for line in text.splitlines():
        for tok in line.split("#", 1)[0].split():
            if tok.startswith("--") or tok in seen:
                continue
            seen.add(tok)
            out.append(tok)
    return out


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    src = argv[1]
    dst = argv[2] if len(argv) == 3 else os.path.dirname(os.path.abspath(__file__))
    for name in LISTS:
        with open(os.path.join(src, name), encoding="utf-8") as f:
            descs = descriptors(f.read())
        if not descs:
            sys.exit(f"{name}: no problem descriptors")
        with open(os.path.join(dst, name), "w", encoding="utf-8", newline="\n") as f:
            f.write(HEADER.format(name=name))
            f.writelines(d + "\n" for d in descs)


if __name__ == "__main__":
    main(sys.argv)
