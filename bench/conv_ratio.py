#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Reads bench_conv JSON output (--benchmark_out=F --benchmark_out_format=json, with
# --benchmark_repetitions=N) and prints, per <isa>/mb<N>/t<T> group, each layer's best time
# (the fastest iteration's wall time; with --cpu, the mean CPU time per thread instead),
# GFLOP/s and % of peak for blockdnn and oneDNN, the time ratio blockdnn/oneDNN, and the
# geometric mean of the ratios over the single layers. Rows differ only in their last path
# element. The resnet_50_chain row (all 53 layers in a row) is printed under the geomean line,
# outside it. scripts/perf_report.py imports load, group_layers and ratio_summary.
import argparse
import json
import math
import sys
from collections import defaultdict
from dataclasses import dataclass, field

UNIT_MS = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}


@dataclass
class Row:
    """One bench_conv row: its best time over the file(s), the work and peak counters (per
    iteration; the peak already times the thread count), and each repetition's time."""

    ms: float
    gflop: float
    peak: float
    reps: list = field(default_factory=list)


def load(files, cpu=False):
    """Row name (without /real_time) -> Row, from open bench_conv JSON files."""
    return rows_of([json.load(f) for f in files], cpu)


def rows_of(docs, cpu=False):
    """load()'s rows from bench_conv JSON documents already parsed."""
    best = {}
    for doc in docs:
        for b in doc["benchmarks"]:
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
                t = b["cpu_time"] * UNIT_MS[b.get("time_unit", "ns")]  # Google Benchmark's default
                t /= b.get("nthr", 1.0)
            if not (math.isfinite(t) and t > 0):
                continue  # a timer fault: no time to compare, as a row that did not run
            row = best.get(name)
            if row is None:
                row = best[name] = Row(t, b.get("gflop", 0.0), b.get("peak_gflops", 0.0))
            elif t < row.ms:
                row.ms, row.gflop, row.peak = t, b.get("gflop", 0.0), b.get("peak_gflops", 0.0)
            if agg is None:
                row.reps.append(t)
    return best


def group_layers(rows):
    """{"<isa>/mb<N>/t<T>": {layer: {"blockdnn": Row, "onednn": Row}}} from load()'s rows."""
    groups = defaultdict(dict)
    for name, v in rows.items():
        parts = name.split("/")
        group, layer, impl = "/".join(parts[1:4]), parts[4], parts[5]
        groups[group].setdefault(layer, {})[impl] = v
    return groups


def is_chain(layer):
    return layer.endswith("_chain")


def ratio(impls):
    """blockdnn / oneDNN best time, or None when either row is missing."""
    o, d = impls.get("blockdnn"), impls.get("onednn")
    return o.ms / d.ms if o and d else None


def geomean(xs):
    """Geometric mean of the values that are set (not None or 0); None when there are none."""
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ratio_summary(layers):
    """(geomean, worst ratio, worst layer, count) over the single layers that have both rows;
    None when none has."""
    ratios = {x: ratio(v) for x, v in layers.items() if not is_chain(x)}
    ratios = {x: r for x, r in ratios.items() if r}
    if not ratios:
        return None
    gm = geomean(ratios.values())
    worst = max(ratios, key=ratios.get)
    return gm, ratios[worst], worst, len(ratios)


def main(argv):
    ap = argparse.ArgumentParser(description="blockdnn / oneDNN ratios per layer from bench_conv JSON output")
    ap.add_argument("json", nargs="+", type=argparse.FileType("r"),
                    help="bench_conv --benchmark_out=F --benchmark_out_format=json output")
    ap.add_argument("--cpu", action="store_true", help="mean CPU time per thread instead of the fastest iteration")
    args = ap.parse_args(argv)
    groups = group_layers(load(args.json, args.cpu))
    for group in sorted(groups):
        print(f"\n## {group}")
        print(f"{'layer':18s} {'blockdnn ms':>11s} {'GFLOP/s':>8s} {'%peak':>6s} {'oneDNN ms':>10s} {'GFLOP/s':>8s} {'%peak':>6s} {'ratio':>6s}")
        layers = groups[group]
        singles = [x for x in layers if not is_chain(x)]
        for x in singles:
            print_row(x, layers[x])
        s = ratio_summary(layers)
        if s:
            print(f"geomean ratio {s[0]:.3f}, worst {s[1]:.3f}, layers {s[3]}")
        for x in layers:
            if x not in singles:
                print_row(x, layers[x])


def print_row(layer, impls):
    """Prints one layer's line."""
    cells = []
    for v in (impls.get("blockdnn"), impls.get("onednn")):
        if v:
            g = v.gflop / (v.ms * 1e-3)
            cells += [f"{v.ms:11.3f}", f"{g:8.1f}", f"{100 * g / v.peak:6.1f}" if v.peak else "     -"]
        else:
            cells += [f"{'-':>11s}", f"{'-':>8s}", f"{'-':>6s}"]
    r = ratio(impls)
    r = f"{r:6.3f}" if r else ""
    print(f"{layer:18s} " + " ".join(cells) + f" {r:>6s}")


if __name__ == "__main__":
    main(sys.argv[1:])
