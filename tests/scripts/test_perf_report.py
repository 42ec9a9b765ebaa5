#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# scripts/perf_report.py's conv floors on bench_conv files written here: a oneDNN row far
# slower than blockdnn's (a ratio under SUSPECT_RATIO) leaves the geomean and makes the floors
# it belongs to not checked, naming it, unless they fail with it (a trusted layer above the
# every-layer bound, a geomean or chain over the bound even so); with no suspect row the floors
# are judged as before; a repetition with no usable time (0, negative, NaN, infinite) is
# dropped beside timed ones, and a row with none counts as one that could not run; a row no
# section could read (a null or text number, no time) makes its file unreadable.
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


def report(ratios, chain=0.85, onednn_ms=None, extra=()):
    """The floors section for avx2 conv files where every layer's blockdnn / oneDNN time is
    0.9 but as ratios {(group, layer): ratio} says; the chains at chain. oneDNN's rows take
    10 ms but as onednn_ms {(group, layer): ms} says; extra rows (more repetitions,
    aggregates) follow."""
    layers = list(perf_report.resnet_50_shapes()) + ["resnet_50_chain"]
    rows = []
    for g in GROUPS:
        for x in layers:
            r = chain if x == "resnet_50_chain" else ratios.get((g, x), 0.9)
            od = (onednn_ms or {}).get((g, x), 10.0)
            rows += [row(f"conv/avx2/{g}/{x}/blockdnn", 10.0 * r), row(f"conv/avx2/{g}/{x}/onednn", od)]
    rows += list(extra)
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

    # A row timed 0, NaN or infinite is a row that could not run: a blockdnn one fails its
    # floors, naming it; a oneDNN one leaves them not checked; neither stops the report.
    text = report({("mb1/t1", "res2a_branch2a"): 0.0})
    g = floor(text, "conv avx2 geomean mb1 t1 <= 0.95")
    check("res2a_branch2a: min_ms is 0.0, not a time" in g and g.endswith("FAIL"), f"blockdnn 0 ms: '{g}'")
    for bad in (float("nan"), float("inf"), 0.0):
        text = report({}, onednn_ms={("mb16/t1", "res4a_branch1"): bad})
        g = floor(text, "conv avx2 geomean mb16 t1 <= 0.95")
        check("not checked" in g and "res4a_branch1" in g, f"oneDNN {bad} ms: '{g}'")
        check(floor(text, "conv avx2 geomean mb1 t1 <= 0.95").endswith("ok"), f"oneDNN {bad} ms: other groups")
        e = floor(text, "conv avx2 every layer <= 1.10")
        check("not checked" in e and "oneDNN conv/avx2/mb16/t1/res4a_branch1" in e, f"oneDNN {bad} ms: '{e}'")

    # With no oneDNN layer row left, the every-layer floor still names one.
    text = report({}, onednn_ms={(g, x): 0.0 for g in GROUPS for x in perf_report.resnet_50_shapes()})
    e = floor(text, "conv avx2 every layer <= 1.10")
    check(e.endswith("not checked (no layer rows; oneDNN conv/avx2/mb1/t1/conv1: min_ms is 0.0, not a time)"),
          f"no oneDNN layer row: '{e}'")

    # A chain whose oneDNN row could not run names it.
    text = report({}, onednn_ms={("mb16/t1", "resnet_50_chain"): float("nan")})
    c = floor(text, "conv avx2 53-layer chain mb16 t1 <= 0.90")
    check("no mb16/t1 chain row; oneDNN conv/avx2/mb16/t1/resnet_50_chain: min_ms is nan" in c, f"chain: '{c}'")

    # One repetition without a usable time among timed ones is dropped, not the row; an
    # aggregate row (stddev: 0 is a value) is never judged.
    name = "conv/avx2/mb1/t1/res2a_branch2a/blockdnn"
    text = report({}, extra=[row(name, 0.0), row(name, -1.0),
                             {**row(name, 0.0), "run_type": "aggregate", "aggregate_name": "stddev"}])
    g = floor(text, "conv avx2 geomean mb1 t1 <= 0.95")
    check(g.startswith("0.900 (20 layers)") and g.endswith("ok"), f"one bad repetition: '{g}'")
    check(perf_report.bad_time(row(name, -1.0)) == "min_ms is -1.0", "a negative time is not a time")
    # drop_bad_times itself, as every section sees its rows (rnn's, say: CPU time, no min_ms):
    # repetitions at 0, NaN and inf beside a timed one go; the min aggregate stays, unjudged; a
    # row with no timed repetition stays, marked.
    def cpu_row(n, ms, **kw):
        return {"name": n, "run_name": n, "run_type": "iteration", "real_time": 1.0, "cpu_time": ms,
                "time_unit": "ms", **kw}
    kept = perf_report.drop_bad_times(
        [cpu_row("a", 2.0), cpu_row("a", 0.0), cpu_row("a", float("nan")), cpu_row("a", float("inf")),
         cpu_row("a", 0.0, run_type="aggregate", aggregate_name="min"), cpu_row("b", 0.0), cpu_row("b", -1.0)])
    check([(b["name"], b["cpu_time"], b.get("aggregate_name")) for b in kept if b["name"] == "a"]
          == [("a", 2.0, None), ("a", 0.0, "min")], f"row a kept {kept}")
    check([b.get("error_message") for b in kept if b["name"] == "b"]
          == ["cpu_time is 0.0, not a time", "cpu_time is -1.0, not a time"], f"row b kept {kept}")

    # Only the times a section reads count: a wall-time row's CPU time (the waiting main
    # thread's) may be 0; a CPU-time row's may not.
    for suffix in ("/real_time", "/manual_time"):
        check(perf_report.bad_time({"name": "x" + suffix, "real_time": 1.0, "cpu_time": 0.0}) is None,
              f"a {suffix} row with cpu_time 0 is judged")
        check(perf_report.bad_time({"name": "x" + suffix, "real_time": 0.0, "cpu_time": 1.0}) == "real_time is 0.0",
              f"a {suffix} row with real_time 0 could not run")
    check(perf_report.bad_time({"name": "x", "real_time": 1.0, "cpu_time": 0.0}) == "cpu_time is 0.0",
          "a CPU-time row with cpu_time 0 could not run")

    # A row no section could read (null or text where a number goes, no time, no name) makes
    # its file unreadable, naming the row, rather than stopping the report.
    for bad, why in ((dict(row("r", 1.0), real_time=None), "row r/real_time: real_time is None, not a number"),
                     (dict(row("r", 1.0), gflop="1"), "row r/real_time: gflop is '1', not a number"),
                     ({k: v for k, v in row("r", 1.0).items() if k != "cpu_time"}, "row r/real_time: no cpu_time"),
                     (dict(row("r", 1.0), time_unit="xs"), "row r/real_time: time_unit 'xs'"),
                     (dict(row("r", 1.0), time_unit=["ms"]), "row r/real_time: time_unit ['ms']"),
                     (42, "row 1 has no name")):
        try:
            perf_report.check_rows([row("ok", 1.0), bad])
            check(False, f"check_rows took {bad!r}")
        except ValueError as e:
            check(str(e) == why, f"check_rows: '{e}', not '{why}'")
    perf_report.check_rows([row("ok", 1.0), {"name": "x", "run_type": "aggregate", "real_time": 0.0},
                            {"name": "e", "error_occurred": True, "error_message": "x"}])

    # An unreadable file's message points to its log only where there is one.
    with tempfile.TemporaryDirectory() as d:
        p = Path(d, "bnorm.json")
        perf_report.UNREADABLE[p.name] = "cut short"
        check(perf_report.missing(p) == "bnorm.json unreadable (cut short)", "no log named without one")
        Path(d, "bnorm.log").write_text("")
        check(perf_report.missing(p) == "bnorm.json unreadable (cut short; see bnorm.log)", "the log named")
        perf_report.UNREADABLE.clear()

    for f in failures:
        print("FAIL:", f)
    print(f"test_perf_report: {'ok' if not failures else f'{len(failures)} failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
