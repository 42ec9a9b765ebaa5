#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# scripts/perf_report.py's conv floors on bench_conv files written here: a oneDNN row far
# slower than blockdnn's (a ratio under SUSPECT_RATIO) leaves the geomean and makes the floors
# it belongs to not checked, naming it, unless they fail with it (a trusted layer above the
# every-layer bound, a geomean or chain over the bound even so); with no suspect row the floors
# are judged as before.
#   python3 tests/scripts/test_perf_report.py   (exits non-zero on a failed check)
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import perf_report  # noqa: E402  (scripts/, on the path above)

GROUPS = ("mb1/t1", "mb1/t2", "mb16/t1")
failures = []


def row(name, ms):
    return {"name": name + "/real_time", "run_name": name + "/real_time", "run_type": "iteration",
            "repetitions": 1, "threads": 1, "real_time": ms, "cpu_time": ms, "time_unit": "ms",
            "min_ms": ms, "gflop": 1.0, "peak_gflops": 100.0, "nthr": 1.0}


def report(ratios, chain=0.85):
    """The floors section for avx2 conv files where every layer's blockdnn / oneDNN time is
    0.9 but as ratios {(group, layer): ratio} says; the chains at chain."""
    layers = list(perf_report.resnet_50_shapes()) + ["resnet_50_chain"]
    rows = []
    for g in GROUPS:
        for x in layers:
            r = chain if x == "resnet_50_chain" else ratios.get((g, x), 0.9)
            rows += [row(f"conv/avx2/{g}/{x}/blockdnn", 10.0 * r), row(f"conv/avx2/{g}/{x}/onednn", 10.0)]
    with tempfile.TemporaryDirectory() as d:
        Path(d, "conv_avx2.json").write_text(json.dumps({"context": {}, "benchmarks": rows}))
        perf_report.LOADED.clear()
        perf_report.UNREADABLE.clear()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            perf_report.main([d])
    return out.getvalue()


def floor(text, what):
    """The figure and verdict of the floor line that starts with what."""
    line = next((x for x in text.splitlines() if x.startswith(what)), None)
    if line is None:
        failures.append(f"no floor line '{what}'")
        return ""
    return line[len(what):].strip()


def check(cond, msg):
    if not cond:
        failures.append(msg)


def main():
    check(len(perf_report.resnet_50_shapes()) == 20, "tests/data/conv/shapes_resnet_50 gave no 20 layers")

    text = report({})
    check(floor(text, "conv avx2 geomean mb16 t1 <= 0.95").endswith("ok"), "all 0.9: geomean ok")
    check(floor(text, "conv avx2 every layer <= 1.10").endswith("ok"), "all 0.9: every layer ok")
    check(floor(text, "conv avx2 53-layer chain mb16 t1 <= 0.90").endswith("ok"), "chain 0.85 ok")
    check("fault of the run" not in text, "no suspect row named when none is suspect")

    # Two broken baseline rows would pass a geomean the other 18 layers fail.
    text = report({**{("mb16/t1", x): 0.97 for x in perf_report.resnet_50_shapes()},
                   ("mb16/t1", "conv1"): 0.07, ("mb16/t1", "res2a_branch1"): 0.04})
    g = floor(text, "conv avx2 geomean mb16 t1 <= 0.95")
    check(g.startswith("0.970 (18 layers)") and "not checked" in g and "conv1 0.070" in g
          and "res2a_branch1 0.040" in g, f"suspect rows: geomean line '{g}'")
    check(floor(text, "conv avx2 geomean mb1 t1 <= 0.95").endswith("ok"), "other groups judged as before")
    check("not checked" in floor(text, "conv avx2 every layer <= 1.10"), "every layer: suspect rows, not checked")
    check("mb16 t1: ratios under 0.25" in text, "the conv table names the suspect rows")

    # A trusted layer above the bound fails the every-layer floor whatever else is suspect.
    text = report({("mb16/t1", "conv1"): 0.07, ("mb1/t1", "res5a_branch2b"): 1.2})
    e = floor(text, "conv avx2 every layer <= 1.10")
    check(e.startswith("worst 1.200 res5a_branch2b mb1 t1") and e.endswith("FAIL"), f"every layer: '{e}'")

    text = report({}, chain=0.1)
    c = floor(text, "conv avx2 53-layer chain mb16 t1 <= 0.90")
    check("not checked (oneDNN's row suspect" in c, f"suspect chain: '{c}'")

    # The chain runs the suspect layers too: a pass is not checked, a fail fails.
    text = report({("mb16/t1", "conv1"): 0.07})
    c = floor(text, "conv avx2 53-layer chain mb16 t1 <= 0.90")
    check("not checked (layers with a suspect oneDNN row: conv1 0.070)" in c, f"chain over a suspect layer: '{c}'")
    check(floor(text, "conv avx2 53-layer chain mb1 t1 <= 0.90").endswith("ok"), "the other group's chain judged")
    text = report({("mb16/t1", "conv1"): 0.07}, chain=0.95)
    c = floor(text, "conv avx2 53-layer chain mb16 t1 <= 0.90")
    check(c.endswith("FAIL"), f"a failing chain over a suspect layer: '{c}'")

    # A geomean that fails with the suspect rows in it fails without them.
    text = report({**{(g, x): 1.1 for g in GROUPS for x in perf_report.resnet_50_shapes()},
                   ("mb16/t1", "conv1"): 0.24})
    g = floor(text, "conv avx2 geomean mb16 t1 <= 0.95")
    check(g.startswith("1.100 (19 layers)") and g.endswith("FAIL"), f"failing anyway: '{g}'")

    for f in failures:
        print("FAIL:", f)
    print(f"test_perf_report: {'ok' if not failures else f'{len(failures)} failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
