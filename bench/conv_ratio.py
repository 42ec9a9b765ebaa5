#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Reads bench_conv JSON output (--benchmark_out=F --benchmark_out_format=json, with
# --benchmark_repetitions=N) and prints, per <isa>/mb<N>/t<T> group, each layer's best time
# (the fastest iteration's wall time; with --cpu, the mean CPU time per thread instead),
# GFLOP/s and % of peak for blockdnn and oneDNN, the time ratio blockdnn/oneDNN, and the
# geometric mean of the ratios over the single layers. Rows differ only in their last path
# element. The resnet_50_chain row (all 53 layers in a row) is printed under the geomean line,
# outside it.
import argparse
import json
import math
import sys
from collections import defaultdict


def main(argv):
    ap = argparse.ArgumentParser(description="blockdnn / oneDNN ratios per layer from bench_conv JSON output")
    ap.add_argument("json", nargs="+", type=argparse.FileType("r"),
                    help="bench_conv --benchmark_out=F --benchmark_out_format=json output")
    ap.add_argument("--cpu", action="store_true", help="mean CPU time per thread instead of the fastest iteration")
    args = ap.parse_args(argv)
    cpu = args.cpu
    best = {}  # path -> (time_ms, gflop, peak)
    for f in args.json:
        for b in json.load(f)["benchmarks"]:
            if b.get("error_occurred"):
                continue
            name = b["run_name"] if "run_name" in b else b["name"]
            name = name.replace("/real_time", "")
            agg = b.get("aggregate_name")
            if agg not in (None, "min"):
                continue
            if "min_ms" in b and not cpu:
                t = b["min_ms"]  # fastest iteration, wall time (see bench_conv.cpp)
            else:  # mean CPU time per thread
                t = b["cpu_time"] * {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
                t /= b.get("nthr", 1.0)
            if name not in best or t < best[name][0]:
                best[name] = (t, b.get("gflop", 0.0), b.get("peak_gflops", 0.0))
    groups = defaultdict(dict)
    for name, v in best.items():
        parts = name.split("/")
        group, layer, impl = "/".join(parts[1:4]), parts[4], parts[5]
        groups[group].setdefault(layer, {})[impl] = v
    for group in sorted(groups):
        print(f"\n## {group}")
        print(f"{'layer':18s} {'blockdnn ms':>11s} {'GFLOP/s':>8s} {'%peak':>6s} {'oneDNN ms':>10s} {'GFLOP/s':>8s} {'%peak':>6s} {'ratio':>6s}")
        layers = groups[group]
        singles = [x for x in layers if not x.endswith("_chain")]
        ratios = [r for r in (print_row(x, layers[x]) for x in singles) if r]
        if ratios:
            gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            print(f"geomean ratio {gm:.3f}, worst {max(ratios):.3f}, layers {len(ratios)}")
        for x in layers:
            if x not in singles:
                print_row(x, layers[x])


def print_row(layer, impls):
    """Prints one layer's line; returns the ratio blockdnn/oneDNN, or None."""
    o, d = impls.get("blockdnn"), impls.get("onednn")
    cells = []
    for v in (o, d):
        if v:
            g = v[1] / (v[0] * 1e-3)
            cells += [f"{v[0]:11.3f}", f"{g:8.1f}", f"{100 * g / v[2]:6.1f}" if v[2] else "     -"]
        else:
            cells += [f"{'-':>11s}", f"{'-':>8s}", f"{'-':>6s}"]
    ratio = o[0] / d[0] if o and d else None
    r = f"{ratio:6.3f}" if ratio else ""
    print(f"{layer:18s} " + " ".join(cells) + f" {r:>6s}")
    return ratio


if __name__ == "__main__":
    main(sys.argv[1:])
