#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Pairs blockdnn and oneDNN rows of a Google Benchmark JSON file (rows named .../blockdnn and
# .../onednn, differing in that one path element) and prints a table: time of each, GFLOP/s,
# percent of the FMA peak and the ratio blockdnn / oneDNN (below 1: blockdnn is faster).
# With --benchmark_repetitions, the "min" aggregate is used when the rows have one.
# The time is the one the row's rates use: CPU time (the process's for rows named
# .../process_time, whose threads it adds up), or wall time for rows named .../real_time; a
# row whose time is 0 or not finite is left out, as one that could not run.
#   build/bench/bench_rnn --benchmark_filter=/t1/ --benchmark_repetitions=3 \
#       --benchmark_out=rnn.json --benchmark_out_format=json
#   python3 scripts/bench_compare.py rnn.json
import argparse
import json
import math

UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def rows(f):
    data = json.load(f)
    picked = {}
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        agg = b.get("aggregate_name", "")
        if agg not in ("", "min"):
            continue
        wall = name.endswith("/real_time")
        base = name
        for suffix in ("/real_time", "/process_time"):  # how the row's time is measured
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        ms = (b["real_time"] if wall else b["cpu_time"]) * UNIT[b.get("time_unit", "ns")]
        if not (math.isfinite(ms) and ms > 0):
            continue  # a timer fault: no time to compare, as a row that did not run
        # A min aggregate wins over single repetitions of the same row.
        if base in picked and picked[base]["agg"] == "min" and agg != "min":
            continue
        gflops, pct = b.get("GFLOPS"), b.get("pct_peak")
        # A min aggregate takes each counter's own minimum, so its GFLOPS is the slowest
        # repetition's: rows that give their work (gflop) and peak get rates from the time.
        # (The CPU time of an n-thread row is n times its wall time, as in the counters.)
        if b.get("gflop"):
            gflops = b["gflop"] * (1.0 if wall else b.get("nthr", 1.0)) / (ms * 1e-3)
            pct = 100 * gflops / b["peak_gflops"] if b.get("peak_gflops") else pct
        picked[base] = {"agg": agg, "ms": ms, "gflops": gflops, "pct": pct}
    return picked


def main():
    ap = argparse.ArgumentParser(description="blockdnn / oneDNN rows of a Google Benchmark JSON file, paired")
    ap.add_argument("results", type=argparse.FileType("r"), help="--benchmark_out=F --benchmark_out_format=json output")
    r = rows(ap.parse_args().results)
    print(f"{'row (.../blockdnn vs .../onednn)':58} {'blockdnn ms':>12} {'oneDNN ms':>12} {'ratio':>7} "
          f"{'GFLOP/s':>8} {'%peak':>6} {'oneDNN %peak':>12}")
    for name in sorted(r):
        if not name.endswith("/blockdnn"):
            continue
        base = name[: -len("/blockdnn")]
        a, o = r[name], r.get(base + "/onednn")
        ratio = f"{a['ms'] / o['ms']:.2f}" if o else "-"
        gf = f"{a['gflops']:.1f}" if a["gflops"] else "-"
        pct = f"{a['pct']:.1f}" if a["pct"] else "-"
        opct = f"{o['pct']:.1f}" if o and o["pct"] else "-"
        oms = f"{o['ms']:.4f}" if o else "-"
        print(f"{base:58} {a['ms']:12.4f} {oms:>12} {ratio:>7} {gf:>8} {pct:>6} {opct:>12}")


if __name__ == "__main__":
    main()
