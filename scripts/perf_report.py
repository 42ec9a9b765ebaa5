#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The report of scripts/perf_report.sh: reads the benchmark JSON files and blockdnn-bench's
# machine lines that it left in DIR and prints one report of blockdnn against oneDNN, run in
# the same processes: a header (the CPU, its flags, the machine model, the commit), then conv
# per layer (bench/conv_ratio.py reads those files), blockdnn alone on nChw16c under an AVX2 cap
# (oneDNN has no kernel there: % of the ymm FMA peak per layer against the 85% floor of the 3x3
# and 1x1 layers), bnorm (on 1 and 2 threads), RNN, GEMM and conv creation time, a summary of
# the geometric means, and the speed floors (docs/tuning.md, "Speed floors"), each against this
# run's figures. A ratio is blockdnn's time / oneDNN's, each row's fastest repetition (below 1:
# blockdnn is faster); in parentheses the range of the ratios of the repetitions taken
# pairwise (the i-th of each row; the repetitions ran interleaved at random), which shows how
# much the machine disturbed the run.
#   python3 scripts/perf_report.py DIR
# Files in DIR (each optional; a missing one, or one that does not parse, prints "not run" and
# why): machine.txt (blockdnn-bench's output), conv_avx512.json, conv_avx2.json,
# conv_avx2_nChw16c.json, bnorm.json, rnn_avx512.json, rnn_avx2.json, gemm_avx512.json,
# gemm_avx2.json, create.json, run.txt (how the script ran the benchmarks).
import argparse
import contextlib
import datetime
import functools
import io
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import conv_ratio  # noqa: E402  (bench/, on the path above)

ISAS = ("avx512", "avx2")
ISA_LAYOUT = {"avx512": "nChw16c", "avx2": "nChw8c"}
CONV_GROUPS = ("mb1/t1", "mb1/t2", "mb16/t1")
# The flags that decide which kernels run; AVX-512 here means the four of avx512_core.
AVX512_CORE = ("avx512f", "avx512dq", "avx512bw", "avx512vl")
KEY_FLAGS = ("fma", "avx2") + AVX512_CORE + ("avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16")
UNIT_MS = conv_ratio.UNIT_MS
# The benchmark files of DIR, each read once by read_json_files(): name -> its parsed JSON, or
# for one that does not parse (a run killed midway leaves one cut short) name -> why in
# UNREADABLE, which every section treats as missing and names.
LOADED = {}
UNREADABLE = {}


# The numbers the sections read from a row, when it has them.
NUMBER_FIELDS = ("real_time", "cpu_time", "min_ms", "min_us", "gflop", "peak_gflops", "pct_peak", "bytes",
                 "kernels", "nthr", "family_index", "per_family_instance_index")


def check_rows(benchmarks):
    """Raises ValueError naming the first row a section could not read: not an object, no
    string name, a number field that is not a number (true, a string, null), an unknown
    time unit, or (a repetition that ran) no real_time or cpu_time. read_json_files then
    treats the file as unreadable, naming that row."""
    for i, b in enumerate(benchmarks):
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            raise ValueError(f"row {i} has no name")
        name = b["name"]
        if not isinstance(b.get("run_name", name), str):
            raise ValueError(f"row {name}: run_name is not a string")
        for k in NUMBER_FIELDS:
            if k in b and (isinstance(b[k], bool) or not isinstance(b[k], (int, float))):
                raise ValueError(f"row {name}: {k} is {b[k]!r}, not a number")
        if not isinstance(b.get("time_unit", "ns"), str) or b.get("time_unit", "ns") not in UNIT_MS:
            raise ValueError(f"row {name}: time_unit {b['time_unit']!r}")
        if not b.get("error_occurred") and b.get("run_type") != "aggregate":
            for k in ("real_time", "cpu_time"):  # Google Benchmark writes both
                if k not in b:
                    raise ValueError(f"row {name}: no {k}")


def is_wall(b):
    """Whether a row is timed in wall time (/real_time, /manual_time rows), as its rates are."""
    return b.get("run_name", b["name"]).endswith(("/real_time", "/manual_time"))


def bad_time(b):
    """'FIELD is VALUE' where a repetition row's time is zero, negative or not finite (a timer
    fault), else None. Only the times the sections read count: the fastest iteration's where
    the row has one (min_ms; min_us), and but for min_ms rows its wall time (/real_time,
    /manual_time rows) or else its CPU time, which for a wall-time row may be the waiting main
    thread's."""
    if b.get("error_occurred") or b.get("run_type") == "aggregate":
        return None
    # conv's rows (min_ms) are read by their fastest iteration alone; creation's (min_us) by it
    # and their mean wall time.
    fields = ("min_ms",) if "min_ms" in b else ("min_us", "real_time" if is_wall(b) else "cpu_time")
    for k in fields:
        if k in b and not (math.isfinite(b[k]) and b[k] > 0):
            return f"{k} is {b[k]!r}"
    return None


def drop_bad_times(benchmarks):
    """benchmarks without the repetitions whose time is unusable (bad_time) where another
    repetition of the row has a usable one; where none has, the row's repetitions stay, marked
    as rows that could not run, so that every section treats them so: left out of the tables,
    a floor failed on a blockdnn row and not checked on a oneDNN one."""
    why = {id(b): w for b in benchmarks if (w := bad_time(b))}
    timed = {row_name(b) for b in benchmarks if id(b) not in why and b.get("run_type") != "aggregate"
             and not b.get("error_occurred")}
    kept = []
    for b in benchmarks:
        if id(b) in why:
            if row_name(b) in timed:
                continue
            b["error_occurred"] = True
            b["error_message"] = f"{why[id(b)]}, not a time"
        kept.append(b)
    return kept


def read_json_files(out):
    for p in sorted(out.glob("*.json")):
        try:
            data = json.loads(p.read_text())
            if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
                raise ValueError("no list of benchmarks")
            # With the repetitions interleaved, Google Benchmark writes each row when its last
            # repetition ends, in a random order; the tables keep the benchmarks' own order.
            check_rows(data["benchmarks"])
            data["benchmarks"].sort(
                key=lambda b: (b.get("family_index", 0), b.get("per_family_instance_index", 0)))
            data["benchmarks"] = drop_bad_times(data["benchmarks"])
            LOADED[p.name] = data
        except (OSError, ValueError) as e:  # json's decode error is a ValueError
            UNREADABLE[p.name] = str(e)


def usable(p):
    return p.name in LOADED


def missing(p):
    """Why there are no rows from p: 'no X.json', or 'X.json unreadable (...; see X.log)', the
    log named only where there is one."""
    if p.name in UNREADABLE:
        log = p.with_suffix(".log")
        see = f"; see {log.name}" if log.exists() else ""
        return f"{p.name} unreadable ({UNREADABLE[p.name]}{see})"
    return f"no {p.name}"


def row_name(b):
    """A benchmark row's name without Google Benchmark's timing suffix (/real_time, ...)."""
    name = b.get("run_name", b["name"])
    for suffix in ("/real_time", "/process_time", "/manual_time"):
        name = name.removesuffix(suffix)
    return name


def row_error(path, prefix, skip=None, impl="blockdnn"):
    """'ROW: message' of the first `impl` row (blockdnn's, or onednn's) of `path` under `prefix`
    (a row name's start) that could not run (rows whose name contains `skip` aside), or None.
    The tables leave such rows out; a floor fails on a blockdnn one and is not checked on a
    oneDNN one (no baseline)."""
    if not usable(path):
        return None
    for b in LOADED[path.name]["benchmarks"]:
        name = row_name(b)
        if (b.get("error_occurred") and name.startswith(prefix) and name.endswith(f"/{impl}")
                and not (skip and skip in name)):
            return f"{name.removesuffix(f'/{impl}')}: {b.get('error_message', 'error')}"
    return None


def od_note(error):
    """'; oneDNN ROW: why' for a floor's not-checked message where a oneDNN row could not run
    (row_error with impl="onednn"), else ''."""
    return f"; oneDNN {error}" if error else ""


def fmt_ratio(r, lo=None, hi=None):
    if r is None:
        return "-"
    if lo is None or hi is None or lo == hi:
        return f"{r:.3f}"
    return f"{r:.3f} ({lo:.3f}-{hi:.3f})"


def pair_range(a, b):
    """Lowest and highest ratio of repetition i of `a` to repetition i of `b`."""
    rs = [x / y for x, y in zip(a, b) if y]
    return (min(rs), max(rs)) if rs else (None, None)


# ---- the header -------------------------------------------------------------------------------

def cpuinfo():
    """The first processor's fields of /proc/cpuinfo, and the count of processors."""
    first, count = {}, 0
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return first, 0
    for block in text.split("\n\n"):
        if "processor" not in block:
            continue
        count += 1
        if not first:
            for line in block.splitlines():
                k, _, v = line.partition(":")
                first[k.strip()] = v.strip()
    return first, count


def git(*args):
    try:
        return subprocess.run(["git", "-C", str(ROOT)] + list(args), capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine_lines(out):
    p = out / "machine.txt"
    return p.read_text(errors="replace").splitlines() if p.exists() else []


def detected_isas(lines):
    """The ISAs blockdnn detected (its 'isa: detected X' line), None when there is no line."""
    for line in lines:
        m = re.match(r"isa: detected (\S+?),", line)
        if m:
            d = m.group(1)
            return {"avx512", "avx2"} if d.startswith("avx512") else {"avx2"} if d == "avx2" else set()
    return None


def header(out, lines):
    info, nproc = cpuinfo()
    flags = set(info.get("flags", "").split())
    avx512 = all(f in flags for f in AVX512_CORE)
    print("# blockdnn / oneDNN performance report (scripts/perf_report.sh)")
    print(f"cpu: {info.get('model name', 'unknown')}")
    print(f"family {info.get('cpu family', '?')} model {info.get('model', '?')} stepping "
          f"{info.get('stepping', '?')}; {nproc} logical processor{'s' if nproc != 1 else ''}, "
          f"{len(os.sched_getaffinity(0))} usable by this process")
    print(f"AVX-512: {'yes' if avx512 else 'no'}; flags: "
          + " ".join(f if f in flags else f"no-{f}" for f in KEY_FLAGS))
    model = [x for x in lines if x.startswith("model:")]
    if model:
        print(model[0])
    else:
        print("model: (no blockdnn-bench machine line: " + ("see machine.txt)" if (out / "machine.txt").exists()
                                                               else "no machine.txt)"))
    peaks = fma_peaks(out)
    if peaks:
        print("FMA peak per core (bench_conv's probe): " + ", ".join(f"{k} {v:.1f} GFLOP/s" for k, v in peaks))
    # perf_report.sh writes the commit when the build starts; without it, the tree's now.
    built = out / "commit.txt"
    if built.exists():
        print(f"commit (when the build started): {built.read_text().strip()}")
    else:
        head = git("log", "-1", "--format=%h %s")
        dirty = git("status", "--porcelain", "--untracked-files=no")
        print(f"commit: {head or 'unknown'}{' (with uncommitted changes)' if dirty else ''}")
    print(f"date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
    run = out / "run.txt"
    if run.exists():
        print(run.read_text().strip())


def context_gflops(data, k):
    """The FMA peak a bench process measured (its JSON context, a string there), or 0 where it
    has none or not a number."""
    ctx = data.get("context")
    try:
        v = float(ctx.get(f"fma_peak_gflops_{k}", 0)) if isinstance(ctx, dict) else 0.0
    except (TypeError, ValueError):
        return 0.0
    return v if math.isfinite(v) else 0.0


def fma_peaks(out):
    for name in [f"conv_{isa}" for isa in ISAS] + ["conv_avx2_nChw16c"]:
        p = out / f"{name}.json"
        if usable(p):
            return [(k, v) for k in ("zmm", "ymm") if (v := context_gflops(LOADED[p.name], k)) > 0]
    return []


# ---- conv -------------------------------------------------------------------------------------

def parse_conv_spatial(desc):
    """[(i, o, k, s, p, dl)] per spatial dim (h, w) of a 2-D benchdnn conv descriptor, by
    benchdnn's rules (include/blockdnn/conv.hpp, parse_conv_desc)."""
    keys = {k: int(v) for k, v in re.findall(r"([a-z]+)(\d+)", desc.split('n"')[0])}
    dims = []
    for d in ("h", "w"):
        # A dim without keys of its own copies h's (benchdnn's rule for w).
        src = d if any(k + d in keys for k in ("i", "o", "k", "s", "p", "d")) else "h"

        def get(key, src=src):
            return keys.get(key + src)

        i, k = get("i"), get("k")
        s, dl = get("s") or 1, get("d") or 0
        ext_k = (k - 1) * (dl + 1) + 1
        o, p = get("o"), get("p")
        if o is None:
            p = p or 0
            o = (i + 2 * p - ext_k) // s + 1
        elif p is None:
            p = ((o - 1) * s - i + ext_k) // 2
        dims.append((i, o, k, s, p, dl))
    return dims


def inside_fraction(desc):
    """conv_desc::flops (the taps that read inside the input) over the count with every tap."""
    inside = every = 1
    for i, o, k, s, p, dl in parse_conv_spatial(desc):
        n = 0
        for kk in range(k):
            off = kk * (dl + 1) - p  # input index = o * s + off
            lo = max(0, -(off // s))
            hi = min(o - 1, (i - 1 - off) // s)
            n += max(0, hi - lo + 1)
        inside *= n
        every *= o * k
    return inside / every


@functools.cache
def resnet_50_shapes():
    """Layer name -> descriptor, from benchdnn's shapes_resnet_50 list in tests/data (read once;
    callers do not change it)."""
    shapes = {}
    path = ROOT / "tests/data/conv/shapes_resnet_50"
    if not path.exists():
        return shapes
    for line in path.read_text().splitlines():
        m = re.match(r'\s*([^#\s]\S*?)n"(?:resnet_50:)?([^"*]+)', line)
        if m:
            shapes[m.group(2)] = m.group(1)
    return shapes


def resnet_50_fractions():
    """Layer name -> inside_fraction, from benchdnn's shapes_resnet_50 list in tests/data."""
    return {x: inside_fraction(d) for x, d in resnet_50_shapes().items()}


def conv_rows(out, isa):
    p = out / f"conv_{isa}.json"
    if not usable(p):
        return None
    return conv_ratio.group_layers(conv_ratio.rows_of([LOADED[p.name]]))


def pct_inside(v, fraction):
    """% of the FMA peak of bench_conv row v, counting the taps inside the input; None without
    a peak or a fraction."""
    return 100 * v.gflop * fraction / (v.ms * 1e-3) / v.peak if v.peak and fraction else None


def conv_cell(impls, fraction):
    """'ratio (lo-hi) b/o' for one layer and group: %peak with the inside taps' FLOPs."""
    b, o = impls.get("blockdnn"), impls.get("onednn")
    r = conv_ratio.ratio(impls)
    if r is None:
        return "-"
    lo, hi = pair_range(b.reps, o.reps)

    def pct(v):
        x = pct_inside(v, fraction)
        return f"{x:.0f}" if x is not None else "-"

    return f"{fmt_ratio(r, lo, hi)} {pct(b)}/{pct(o)}"


# A ratio under this bound on a conv layer or chain (oneDNN's row over 4 times blockdnn's
# time) is taken for a fault of the run, not a baseline: both libraries run kernels of one
# design on the same layout, and such a row only flatters blockdnn. Its layer leaves the
# geomean, and the floors it belongs to (its group's chain too, which runs it) are not checked,
# unless they fail even so: a geomean or chain over its bound with the row in it, or another
# layer above the every-layer bound (docs/tuning.md, "Speed floors").
SUSPECT_RATIO = 0.25


def trusted(layers):
    """(the layers whose oneDNN row is not suspect, {layer: ratio} of those whose row is)."""
    suspect = {x: r for x, v in layers.items() if (r := conv_ratio.ratio(v)) is not None and r < SUSPECT_RATIO}
    return {x: v for x, v in layers.items() if x not in suspect}, suspect


def suspect_list(suspect):
    return ", ".join(f"{x} {r:.3f}" for x, r in suspect.items())


def conv_section(out, available, summary, notes):
    """Prints the per-layer tables; returns {isa: {group: {layer: impls}}} of the ISAs that ran.
    Appends to notes a line for each summary row that leaves suspect layers out."""
    ran = {}
    fractions = resnet_50_fractions()
    print("\n## conv: ResNet-50 layers, forward, blockdnn time / oneDNN time (< 1: blockdnn faster)")
    print("Each cell: the ratio of the fastest repetitions (the range over repetitions), then % of")
    print("the FMA peak of blockdnn / oneDNN, counting only the taps inside the input (conv_desc::flops).")
    for isa in ISAS:
        title = f"\n### conv {isa} ({ISA_LAYOUT[isa]})"
        if available is not None and isa not in available:
            print(f"{title}: not run (no {'AVX-512' if isa == 'avx512' else 'AVX2'})")
            continue
        rows = conv_rows(out, isa)
        if rows is None:
            print(f"{title}: not run ({missing(out / f'conv_{isa}.json')})")
            continue
        print(title)
        groups = {g: rows[f"{isa}/{g}"] for g in CONV_GROUPS if f"{isa}/{g}" in rows}
        ran[isa] = groups
        cols = list(groups)
        layers = []
        for g in cols:
            layers += [x for x in groups[g] if x not in layers]
        singles = [x for x in layers if not conv_ratio.is_chain(x)]
        w = 29
        print(f"{'layer':16s} " + " ".join(f"{g.replace('/', ' '):{w}s}" for g in cols))
        for x in singles:
            cells = [conv_cell(groups[g].get(x, {}), fractions.get(x)) for g in cols]
            print(f"{x:16s} " + " ".join(f"{c:{w}s}" for c in cells))
        split = {g: trusted(groups[g]) for g in cols}
        sums = {g: conv_ratio.ratio_summary(kept) for g, (kept, _) in split.items()}
        print(f"{'geomean':16s} " + " ".join(
            f"{fmt_ratio(sums[g][0]) + f' ({sums[g][3]} layers)' if sums[g] else '-':{w}s}" for g in cols))
        print(f"{'worst':16s} " + " ".join(
            f"{f'{sums[g][1]:.3f} {sums[g][2]}' if sums[g] else '-':{w}s}" for g in cols))
        chains = [x for x in layers if conv_ratio.is_chain(x)]
        chain_ratios = {}
        for x in chains:
            cells = []
            for g in cols:
                impls = groups[g].get(x, {})
                r = conv_ratio.ratio(impls)
                lo, hi = pair_range(impls["blockdnn"].reps, impls["onednn"].reps) if r else (None, None)
                cells.append(fmt_ratio(r, lo, hi))
                chain_ratios[g] = r
            print(f"{'chain (53)':16s} " + " ".join(f"{c:{w}s}" for c in cells))
        suspects = {g: sus for g, (_, sus) in split.items()}
        for g in cols:
            if suspects[g]:
                print(f"{g.replace('/', ' ')}: ratios under {SUSPECT_RATIO}, oneDNN's row taken for a fault of the "
                      f"run (left out of the geomean and the summary's chain; the floors say what they check): "
                      f"{suspect_list(suspects[g])}")
        for g in cols:
            name = f"conv {isa} {g.replace('/', ' ')}"
            summary.append((name + " layers", isa, sums[g][0] if sums[g] else None))
            if suspects[g] and sums[g]:
                notes.append(f"{name} layers: the geomean of the {sums[g][3]} layers with a trusted oneDNN row")
            # A chain runs the suspect layers too, so its ratio is no better a figure.
            if chain_ratios.get(g) and not suspects[g]:
                summary.append((name + " chain", isa, chain_ratios[g]))
    return ran


# The floor for nChw16c under an AVX2 cap (docs/tuning.md, "Speed floors"): every 3x3 and 1x1
# layer at this share of the ymm FMA peak or more, counting the taps inside the input
# (benchdnn's count).
CAP_FLOOR_PCT = 85.0


def kernel_of(desc):
    """'3x3', '1x1', ... of a descriptor (kh x kw); '?' without one."""
    return "x".join(str(k) for _, _, k, _, _, _ in parse_conv_spatial(desc)) if desc else "?"


def cap_section(out, available):
    """blockdnn alone (oneDNN 2.6 has no AVX2 kernel for nChw16c): % of the ymm FMA peak per
    ResNet-50 layer at mb 16 t1, from conv_avx2_nChw16c.json. Returns {layer: %} of its 3x3 and
    1x1 layers (0 for one blockdnn could not run), or why there are none."""
    group = "avx2_nChw16c/mb16/t1"
    title = "\n## conv avx2 cap, nChw16c, mb 16 t1: blockdnn's % of the ymm FMA peak (no oneDNN kernel)"
    if available is not None and "avx2" not in available:
        print(f"{title}\nnot run (no AVX2)")
        return "no AVX2"
    p = out / "conv_avx2_nChw16c.json"
    if not usable(p):
        print(f"{title}\nnot run ({missing(p)})")
        return missing(p)
    data = LOADED[p.name]
    layers = conv_ratio.group_layers(conv_ratio.rows_of([data])).get(group, {})
    # A row blockdnn could not run (no AVX2 kernel took the layer) fails the floor, not the table.
    errors = {}
    for r in data["benchmarks"]:
        parts = row_name(r).split("/")
        if r.get("error_occurred") and len(parts) == 6 and "/".join(parts[1:4]) == group:
            errors.setdefault(parts[4], r.get("error_message", "error"))
    print(title)
    print("FLOPs: only the taps inside the input (conv_desc::flops); % of the peak of the fastest")
    print(f"repetition (the range over repetitions); '< {CAP_FLOOR_PCT:.0f}': a 3x3 or 1x1 layer below the floor.")
    # This process's probe, which can differ from the header's (another process) by several %.
    peak = context_gflops(data, "ymm")
    if peak > 0:
        print(f"ymm FMA peak measured by this run: {peak:.1f} GFLOP/s per core")
    shapes = resnet_50_shapes()
    print(f"{'layer':16s} {'kernel':>6s} {'ms':>8s} {'GFLOP/s':>8s} {'%peak':>18s}")
    floored = {}  # 3x3 and 1x1 layers -> % of the peak
    for x, impls in layers.items():
        b = impls.get("blockdnn")
        if conv_ratio.is_chain(x) or b is None:
            continue
        desc = shapes.get(x)
        kernel = kernel_of(desc)
        fraction = inside_fraction(desc) if desc else None
        if fraction is None or not b.peak:
            print(f"{x:16s} {kernel:>6s} {b.ms:8.3f} {'-':>8s} {'-':>18s}")
            continue
        gflops = b.gflop * fraction / (b.ms * 1e-3)
        pct = 100 * gflops / b.peak
        reps = [100 * b.gflop * fraction / (t * 1e-3) / b.peak for t in b.reps]
        # One decimal: the mark and the summary compare it unrounded (84.6 is below 85).
        cell = f"{pct:.1f}" + (f" ({min(reps):.1f}-{max(reps):.1f})" if len(reps) > 1 else "")
        mark = ""
        if kernel in ("3x3", "1x1"):
            floored[x] = pct
            mark = f" < {CAP_FLOOR_PCT:.0f}" if pct < CAP_FLOOR_PCT else ""
        print(f"{x:16s} {kernel:>6s} {b.ms:8.3f} {gflops:8.1f} {cell:>18s}{mark}")
    for x, why in errors.items():
        if x in layers:
            continue
        kernel = kernel_of(shapes.get(x))
        if kernel in ("3x3", "1x1"):
            floored[x] = 0.0
        print(f"{x:16s} {kernel:>6s} not run: {why}")
    if not floored:
        print("no 3x3 or 1x1 layer ran")
        return "no 3x3 or 1x1 layer ran"
    low = min(floored, key=floored.get)
    met = sum(v >= CAP_FLOOR_PCT for v in floored.values())
    lowest = "not run" if low in errors and low not in layers else f"{floored[low]:.1f}%"
    print(f"3x3 and 1x1 layers at {CAP_FLOOR_PCT:.0f}% of the ymm peak or more: {met} of {len(floored)}; "
          f"lowest {lowest} ({low})")
    return floored


# ---- bnorm, rnn, gemm: Google Benchmark rows --------------------------------------------------

def bench_rows(path):
    """Row name (row_name: without its timing suffix) -> {"ms": best, "reps": [ms...], "c":
    counters of the best repetition}. Rows timed in wall time (is_wall) use it, the others
    CPU time, as their rates do."""
    rows = {}
    if not usable(path):
        return None
    for b in LOADED[path.name]["benchmarks"]:
        if b.get("error_occurred") or b.get("run_type") == "aggregate":
            continue
        name = row_name(b)
        ms = (b["real_time"] if is_wall(b) else b["cpu_time"]) * UNIT_MS[b.get("time_unit", "ns")]
        r = rows.setdefault(name, {"ms": ms, "reps": [], "c": b})
        r["reps"].append(ms)
        if ms < r["ms"]:
            r["ms"], r["c"] = ms, b
    return rows


def pair(rows, a, b):
    """(ratio, lo, hi) of rows a / b, or None."""
    if a not in rows or b not in rows:
        return None
    lo, hi = pair_range(rows[a]["reps"], rows[b]["reps"])
    return rows[a]["ms"] / rows[b]["ms"], lo, hi


def pct_peak(rows, name):
    r = rows.get(name)
    return f"{r['c']['pct_peak']:.0f}" if r and "pct_peak" in r["c"] else "-"


def bnorm_section(out, available, summary):
    rows = bench_rows(out / "bnorm.json")
    print("\n## bnorm: blockdnn time / oneDNN time (oneDNN at its best ISA, nChw16c with AVX-512, else nChw8c); % of the NT copy")
    print("%nt: GB/s that must cross memory (inference, training: 2 x the tensor; backward: 3 x)")
    print("as % of a non-temporal copy of the same tensor with the same threads; '-' where that")
    print("copy ran slower on 2 threads than on 1 (a tensor too small to split), so no rate to compare.")
    if rows is None:
        print(f"not run ({missing(out / 'bnorm.json')})")
        return
    names = [n for n in rows if n.startswith("bnorm/") and n.endswith("/blockdnn") and n.count("/") == 5]
    keys = []  # (t, shape, mode) in the bench's order
    for n in names:
        _, _, t, shape, mode, _ = n.split("/")
        if (t, shape, mode) not in keys:
            keys.append((t, shape, mode))
    # The oneDNN rows run at its best ISA: without AVX-512 blockdnn's AVX2 rows are the pair.
    isa = "avx512" if available is None or "avx512" in available else "avx2"
    if isa == "avx2":
        print("avx512 rows: not run (no AVX-512); the ratio is of blockdnn's avx2 rows.")
    print(f"{'threads shape':22s} {'direction':10s} {isa + ' ratio':22s} {'%nt':>4s} {'oneDNN %nt':>10s}"
          + (f" {'avx2 %nt':>8s}" if isa == "avx512" else ""))
    by_t_mode = {}
    for t, shape, mode in keys:

        def pct_nt(name, t=t, shape=shape):
            x = pct_of_nt_copy(rows, t, shape, name)
            return f"{x:.0f}" if x is not None else "-"

        ours = f"bnorm/{isa}/{t}/{shape}/{mode}/blockdnn"
        od = f"bnorm/avx512/{t}/{shape}/{mode}/onednn"  # oneDNN's best ISA, whatever the row's name
        p = pair(rows, ours, od)
        if p:
            by_t_mode.setdefault((t, mode), []).append(p[0])
        avx2 = f" {pct_nt(f'bnorm/avx2/{t}/{shape}/{mode}/blockdnn'):>8s}" if isa == "avx512" else ""
        print(f"{t + ' ' + shape:22s} {mode:10s} {fmt_ratio(*p) if p else '-':22s} {pct_nt(ours):>4s} "
              f"{pct_nt(od):>10s}" + avx2)
    for (t, mode), rs in by_t_mode.items():
        summary.append((f"bnorm {t} {mode}", isa, conv_ratio.geomean(rs)))


def pct_of_nt_copy(rows, t, shape, name):
    """Row name's GB/s as % of the NT copy of the same shape and threads; None without either
    row, or where that copy ran slower on its threads than on 1 (a tensor too small to split)."""
    nt = rows.get(f"copy/{t}/{shape}/nt")
    nt_t1 = rows.get(f"copy/t1/{shape}/nt")
    r = rows.get(name)
    if not r or not nt or (nt_t1 and nt["ms"] > nt_t1["ms"]) or not bytes_per_iter(nt):
        return None
    return 100 * nt["ms"] / r["ms"] * bytes_per_iter(r) / bytes_per_iter(nt)


def bytes_per_iter(r):
    """The bytes counter is a rate over the row's time: back to bytes per iteration."""
    return r["c"].get("bytes", 0) * r["ms"] * 1e-3


def paired_section(out, kind, title, key_title, summary, available, per_key):
    """RNN and GEMM: rows <kind>/<isa>/t<n>/<path...>/{blockdnn,onednn}, one file per ISA."""
    print(f"\n## {title}")
    files = {isa: bench_rows(out / f"{kind}_{isa}.json") for isa in ISAS}
    if all(f is None for f in files.values()):
        print("not run (" + "; ".join(missing(out / f"{kind}_{isa}.json") for isa in ISAS) + ")")
        return
    for isa in ISAS:
        if files[isa] is None:
            print(f"{isa}: not run ({missing(out / f'{kind}_{isa}.json')})")
    keys = []
    for isa in ISAS:
        for n in files[isa] or {}:
            if n.startswith(kind + "/") and n.endswith("/blockdnn"):
                k = "/".join(n.split("/")[2:-1])
                if k not in keys:
                    keys.append(k)
    w = 30
    head = []
    for isa in ISAS:
        head.append(f"{isa + ' ratio  %pk b/o':{w}s}")
    print(f"{key_title:34s} " + " ".join(head))
    ratios = {isa: {} for isa in ISAS}
    for k in keys:
        cells = []
        for isa in ISAS:
            rows = files[isa]
            if available is not None and isa not in available:
                cells.append(f"{'not run (no ' + ('AVX-512' if isa == 'avx512' else 'AVX2') + ')':{w}s}")
                continue
            if rows is None:
                cells.append(f"{'not run':{w}s}")
                continue
            b, o = f"{kind}/{isa}/{k}/blockdnn", f"{kind}/{isa}/{k}/onednn"
            p = pair(rows, b, o)
            if p:
                ratios[isa].setdefault(per_key(k), []).append(p[0])
            cells.append(f"{(fmt_ratio(*p) if p else '-') + ' ' + pct_peak(rows, b) + '/' + pct_peak(rows, o):{w}s}")
        print(f"{k.replace('/', ' '):34s} " + " ".join(cells))
    for isa in ISAS:
        for group, rs in ratios[isa].items():
            summary.append((f"{kind} {group}", isa, conv_ratio.geomean(rs)))


def create_section(out):
    """blockdnn's conv_fwd creation (bench_create): the JIT generation of its kernels with the
    cache empty, and a whole creation whose kernels are cached. Returns {(isa, kind, problem):
    (mean us of the fastest repetition, fastest iteration us, kernels or -1)}, or why there are
    none."""
    print("\n## creation: blockdnn conv_fwd, us per creation (bench_create)")
    print("jit_gen_cold: the JIT generation of every kernel a creation makes (AVX2 direct convs make")
    print("a twin without prefetches), the cache emptied each time; cached: a whole creation whose")
    print("kernels are in the cache. mean: of the fastest repetition; fastest: one iteration.")
    p = out / "create.json"
    if not usable(p):
        print(f"not run ({missing(p)})")
        return missing(p)
    found = {}
    for b in LOADED[p.name]["benchmarks"]:
        if b.get("error_occurred") or b.get("run_type") == "aggregate":
            continue
        parts = row_name(b).split("/")
        if len(parts) != 6 or parts[0] != "create" or parts[1] != "conv" or parts[5] != "blockdnn":
            continue
        key = (parts[2], parts[3], parts[4])
        mean = b["real_time"] * UNIT_MS[b.get("time_unit", "ns")] * 1e3
        fastest = b.get("min_us", mean)
        kernels = b.get("kernels", -1)  # jit_gen_cold rows count what they generated
        kernels = int(kernels) if math.isfinite(kernels) else -1
        old = found.get(key)
        found[key] = (min(mean, old[0]), min(fastest, old[1]), kernels) if old else (mean, fastest, kernels)
    if not found:
        print("no conv rows in create.json")
        return "no conv rows in create.json"
    print(f"{'isa':7s} {'kind':13s} {'problem':34s} {'mean':>8s} {'fastest':>8s} {'kernels':>7s}")
    for (isa, kind, prb), (mean, fastest, kernels) in found.items():
        print(f"{isa:7s} {kind:13s} {prb:34s} {mean:8.2f} {fastest:8.2f} {kernels if kernels >= 0 else '-':>7}")
    return found


def summary_table(summary, notes):
    print("\n## summary: geometric means of blockdnn time / oneDNN time (< 1: blockdnn faster)")
    names = []
    for name, _, _ in summary:
        label = name.replace(" avx512", "").replace(" avx2", "")
        if label not in names:
            names.append(label)
    cell = {}
    for name, isa, r in summary:
        cell[(name.replace(" avx512", "").replace(" avx2", ""), isa)] = r
    print(f"{'':34s} {'avx512':>8s} {'avx2':>8s}")
    for n in names:
        vals = [cell.get((n, isa)) for isa in ISAS]
        print(f"{n:34s} " + " ".join(f"{v:8.3f}" if v else f"{'-':>8s}" for v in vals))
    for note in notes:
        print(note)


# ---- the speed floors ---------------------------------------------------------------------------
# The floors docs/tuning.md lists (section "Speed floors"), each against this run's figures: a
# bound changes there and here together. Ratios are blockdnn / oneDNN time; % of peak counts
# conv's taps inside the input.
CONV_GEOMEAN_MAX = 0.95
CONV_LAYER_MAX = 1.10
CONV_3X3_PCT_MIN = 88.0
CHAIN_MAX = 0.90
BNORM_NT_PCT_MIN = 95.0
BNORM_TRAINING_MAX = 0.8
BNORM_ANY_MAX = 1.0
BNORM_SHAPES = ("mb16ic64ih56", "mb16ic256ih56", "mb1ic512ih7")  # bench_bnorm's, all of them
BNORM_DIRECTIONS = ("inference", "training", "backward")
RNN_MAX = {"lstm": 0.95, "rnn": 0.95, "gru": 0.8, "lbr_gru": 0.8}
RNN_SHAPE = "l1t50mb64sic512"
GEMM_PCT_MIN = 88.0
GEMM_SHAPES = ("M512N512K512", "lstm_layer_t50mb64sic512", "lstm_iter_t50mb64sic512")
JIT_GEN_US_MAX = 100.0
CACHED_CREATE_US_MAX = 1.5


def floors_section(out, available, conv, cap, created):
    """One line per floor: what, the figure, and ok / FAIL, or 'not checked' and why."""
    print("\n## speed floors (docs/tuning.md): this run's figures against each bound")
    print("Ratios: blockdnn / oneDNN time, conv's of the fastest iterations, the others' of the fastest")
    print("repetitions; % of peak: of the FMA peak the benchmark's process measured, conv counting only")
    print("the taps inside the input; bnorm at t1 and t2, the best ISA's rows; rnn and gemm at t1;")
    print(f"gemm shapes: {', '.join(GEMM_SHAPES)};")
    print("creation: the mean us of the fastest repetition, the slowest of the problems run.")
    print("Figures print rounded; the bounds compare them unrounded.")
    lines = []

    def add(what, figure, ok, why=None, error=None, isa=None):
        """error: a blockdnn row the floor covers that could not run, which fails it, unless
        the floor's ISA is one this CPU lacks."""
        if error and not (isa and isa_missing(isa)):
            lines.append((what, f"blockdnn: {error}", "FAIL"))
            return
        verdict = f"not checked ({why})" if why else ("ok" if ok else "FAIL")
        lines.append((what, figure, verdict))

    def isa_missing(isa):
        return available is not None and isa not in available

    def no_isa(isa):
        return f"no {'AVX-512' if isa == 'avx512' else 'AVX2'} on this CPU"

    fractions = resnet_50_fractions()
    shapes = resnet_50_shapes()
    n_layers = len(shapes)  # a table with fewer (--quick) checks nothing about the rest

    def partial(n, of, suspect=None, od_error=None):
        if n >= of:
            return None
        od = od_note(od_error)
        if suspect:
            return f"{n} of the {of} layers ran with a trusted oneDNN row; suspect: {suspect_list(suspect)}{od}"
        return f"{n} of the {of} layers ran{od}"

    for isa in ISAS:
        tag = f"conv {isa}"
        groups = conv.get(isa)
        path = out / f"conv_{isa}.json"
        why = (no_isa(isa) if isa_missing(isa) else None if groups
               else f"no rows of {', '.join(CONV_GROUPS)} in {path.name}" if usable(path) else missing(path))
        split = {g: trusted(groups[g]) for g in CONV_GROUPS if groups and g in groups}
        split = {g: (kept, {x: r for x, r in sus.items() if not conv_ratio.is_chain(x)})
                 for g, (kept, sus) in split.items()}
        sums = {g: conv_ratio.ratio_summary(kept) for g, (kept, _) in split.items()}
        errs = {g: row_error(path, f"conv/{isa}/{g}/", skip="_chain/") for g in CONV_GROUPS}
        od_errs = {g: row_error(path, f"conv/{isa}/{g}/", skip="_chain/", impl="onednn") for g in CONV_GROUPS}
        for g in CONV_GROUPS:
            sm = sums.get(g)
            suspect = split[g][1] if g in split else {}
            # Suspect rows only lower a geomean: one that fails with them fails without them.
            with_suspect = conv_ratio.ratio_summary(groups[g]) if suspect else None
            fails_anyway = with_suspect is not None and with_suspect[0] > CONV_GEOMEAN_MAX
            add(f"{tag} geomean {g.replace('/', ' ')} <= {CONV_GEOMEAN_MAX}",
                f"{sm[0]:.3f} ({sm[3]} layers)" if sm else "-", sm and sm[0] <= CONV_GEOMEAN_MAX,
                why or (None if fails_anyway else partial(sm[3], n_layers, suspect, od_errs[g]) if sm
                        else f"only suspect {g} rows: {suspect_list(suspect)}" if suspect
                        else f"no {g} rows" + od_note(od_errs[g])),
                errs[g], isa)
        worst = [(sm[1], sm[2], g) for g, sm in sums.items() if sm]
        w = max(worst) if worst else None
        ran_all = all(sm and sm[3] >= n_layers for sm in sums.values()) and len(sums) == len(CONV_GROUPS)
        od_any = od_note(next((e for e in od_errs.values() if e), None))
        if why or (w and (ran_all or w[0] > CONV_LAYER_MAX)):
            layer_why = why
        elif w:
            layer_why = ("not every layer and group ran with a trusted oneDNN row"
                         + "".join(f"; {g.replace('/', ' ')} oneDNN suspect: {suspect_list(sus)}"
                                   for g, (_, sus) in split.items() if sus) + od_any)
        else:
            layer_why = "no layer rows" + od_any
        add(f"{tag} every layer <= {CONV_LAYER_MAX:.2f}",
            f"worst {w[0]:.3f} {w[1]} {w[2].replace('/', ' ')}" if w else "-", w and w[0] <= CONV_LAYER_MAX,
            layer_why, next((e for e in errs.values() if e), None), isa)
        for g in ("mb1/t1", "mb16/t1"):
            impls = next((v for x, v in (groups or {}).get(g, {}).items() if conv_ratio.is_chain(x)), {})
            r = conv_ratio.ratio(impls)
            # The chain runs every layer, so a layer's suspect oneDNN row flatters it too (one that
            # fails even so fails).
            in_chain = split[g][1] if g in split and r and r <= CHAIN_MAX else {}
            add(f"{tag} 53-layer chain {g.replace('/', ' ')} <= {CHAIN_MAX:.2f}", f"{r:.3f}" if r else "-",
                r is not None and r <= CHAIN_MAX,
                why or (f"oneDNN's row suspect, a ratio under {SUSPECT_RATIO}" if r and r < SUSPECT_RATIO
                        else f"layers with a suspect oneDNN row: {suspect_list(in_chain)}" if r and in_chain
                        else None if r else f"no {g} chain row"
                        + od_note(row_error(path, f"conv/{isa}/{g}/resnet_50_chain", impl="onednn"))),
                row_error(path, f"conv/{isa}/{g}/resnet_50_chain"), isa)
        if isa == "avx512":
            pcts = {x: pct_inside(v["blockdnn"], fractions.get(x))
                    for x, v in (groups or {}).get("mb16/t1", {}).items()
                    if "blockdnn" in v and kernel_of(shapes.get(x)) == "3x3"}
            pcts = {x: v for x, v in pcts.items() if v is not None}
            low = min(pcts, key=pcts.get) if pcts else None
            n_3x3 = sum(kernel_of(d) == "3x3" for d in shapes.values())
            add(f"{tag} mb16 t1 3x3 layers >= {CONV_3X3_PCT_MIN:.0f}% of peak",
                f"lowest {pcts[low]:.1f}% {low}" if low else "-", low and pcts[low] >= CONV_3X3_PCT_MIN,
                why or ((partial(len(pcts), n_3x3) if pcts[low] >= CONV_3X3_PCT_MIN else None) if low
                        else "no 3x3 rows with a peak"),
                next((e for x, d in shapes.items() if kernel_of(d) == "3x3"
                      and (e := row_error(path, f"conv/{isa}/mb16/t1/{x}/"))), None), isa)
    if isinstance(cap, dict):
        low = min(cap, key=cap.get)
        n_floored = sum(kernel_of(d) in ("3x3", "1x1") for d in shapes.values())
        # cap_section scores a layer blockdnn could not run 0; its table says why.
        add(f"conv avx2 cap nChw16c mb16 t1 3x3, 1x1 >= {CAP_FLOOR_PCT:.0f}% of peak",
            f"lowest {cap[low]:.1f}% {low}" if cap[low] > 0 else f"{low} did not run (see the table)",
            cap[low] >= CAP_FLOOR_PCT,
            partial(len(cap), n_floored) if cap[low] >= CAP_FLOOR_PCT else None)
    else:
        add(f"conv avx2 cap nChw16c mb16 t1 3x3, 1x1 >= {CAP_FLOOR_PCT:.0f}% of peak", "-", False, cap)

    rows = bench_rows(out / "bnorm.json")
    isa = "avx512" if available is None or "avx512" in available else "avx2"
    for t in ("t1", "t2"):
        why = None if rows is not None else missing(out / "bnorm.json")
        name = f"bnorm/{isa}/{t}/mb16ic256ih56/inference/blockdnn"
        x = pct_of_nt_copy(rows, t, "mb16ic256ih56", name) if rows else None
        has = rows is not None and name in rows and f"copy/{t}/mb16ic256ih56/nt" in rows
        add(f"bnorm {t} mb16ic256ih56 inference >= {BNORM_NT_PCT_MIN:.0f}% of NT copy",
            f"{x:.0f}%" if x is not None else "-", x is not None and x >= BNORM_NT_PCT_MIN,
            why or (None if x is not None else "no NT copy rate to compare, see the bnorm table" if has
                    else f"no {name} or copy/{t}/mb16ic256ih56/nt row"),
            row_error(out / "bnorm.json", f"bnorm/{isa}/{t}/mb16ic256ih56/inference"))
        for shape in ("mb16ic256ih56", "mb16ic64ih56"):
            p = pair(rows, f"bnorm/{isa}/{t}/{shape}/training/blockdnn", f"bnorm/avx512/{t}/{shape}/training/onednn") \
                if rows else None
            od_error = row_error(out / "bnorm.json", f"bnorm/avx512/{t}/{shape}/training", impl="onednn")
            add(f"bnorm {t} {shape} training <= {BNORM_TRAINING_MAX}", f"{p[0]:.3f}" if p else "-",
                p and p[0] <= BNORM_TRAINING_MAX, why or (None if p else f"oneDNN {od_error}" if od_error else "no rows"),
                row_error(out / "bnorm.json", f"bnorm/{isa}/{t}/{shape}/training"))
        ratios = []
        for n in rows or {}:
            parts = n.split("/")
            if len(parts) == 6 and parts[0] == "bnorm" and parts[1] == isa and parts[2] == t and parts[5] == "blockdnn":
                p = pair(rows, n, "/".join(["bnorm", "avx512"] + parts[2:5] + ["onednn"]))
                if p:
                    ratios.append((p[0], f"{parts[3]} {parts[4]}"))
        w = max(ratios) if ratios else None
        expected = len(BNORM_SHAPES) * len(BNORM_DIRECTIONS)
        od = od_note(row_error(out / "bnorm.json", f"bnorm/avx512/{t}/", impl="onednn"))
        if why or (w and (len(ratios) >= expected or w[0] > BNORM_ANY_MAX)):
            shape_why = why
        else:
            shape_why = (f"{len(ratios)} of the {expected} rows ran" if w else "no rows") + od
        add(f"bnorm {t} every shape, direction <= {BNORM_ANY_MAX}", f"worst {w[0]:.3f} {w[1]}" if w else "-",
            w and w[0] <= BNORM_ANY_MAX, shape_why, row_error(out / "bnorm.json", f"bnorm/{isa}/{t}/"))

    for isa in ISAS:
        path = out / f"rnn_{isa}.json"
        rows = bench_rows(path)
        why = no_isa(isa) if isa_missing(isa) else None if rows is not None else missing(path)
        for cell, bound in RNN_MAX.items():
            p = pair(rows, f"rnn/{isa}/t1/{cell}/{RNN_SHAPE}/blockdnn", f"rnn/{isa}/t1/{cell}/{RNN_SHAPE}/onednn") \
                if rows else None
            od_error = row_error(path, f"rnn/{isa}/t1/{cell}/{RNN_SHAPE}", impl="onednn")
            add(f"rnn {isa} t1 {cell} {RNN_SHAPE} <= {bound}", f"{p[0]:.3f}" if p else "-", p and p[0] <= bound,
                why or (None if p else f"oneDNN {od_error}" if od_error else f"no {cell} {RNN_SHAPE} rows"),
                row_error(path, f"rnn/{isa}/t1/{cell}/{RNN_SHAPE}"), isa)
        path = out / f"gemm_{isa}.json"
        rows = bench_rows(path)
        why = no_isa(isa) if isa_missing(isa) else None if rows is not None else missing(path)
        pk = {}
        for shape in GEMM_SHAPES:
            r = (rows or {}).get(f"gemm/{isa}/t1/{shape}/blockdnn")
            if r and "pct_peak" in r["c"]:
                pk[shape] = r["c"]["pct_peak"]
        low = min(pk, key=pk.get) if pk else None
        absent = [x for x in GEMM_SHAPES if x not in pk]
        add(f"gemm {isa} t1 (gemm shapes) >= {GEMM_PCT_MIN:.0f}% of peak",
            f"lowest {pk[low]:.1f}% {low}" if low else "-", low and pk[low] >= GEMM_PCT_MIN,
            why or (f"no row of {', '.join(absent)}" if absent and (not low or pk[low] >= GEMM_PCT_MIN) else None),
            next((e for x in GEMM_SHAPES if (e := row_error(path, f"gemm/{isa}/t1/{x}"))), None), isa)

    for isa in ISAS:
        why = no_isa(isa) if isa_missing(isa) else None if isinstance(created, dict) else created
        found = created if isinstance(created, dict) else {}
        gen = [(v[0], prb, v[2]) for (i, kind, prb), v in found.items() if i == isa and kind == "jit_gen_cold"
               and kernel_of(prb) == "3x3"]
        w = max(gen) if gen else None
        path = out / "create.json"
        # A creation that generated no kernel (a fallback to the reference) did not meet the floor.
        no_kernel = next((f"create/conv/{isa}/jit_gen_cold/{prb}: no kernel generated"
                          for _, prb, k in gen if k == 0), None)
        kernels = (f"{w[2]} kernel{'s' if w[2] != 1 else ''}" if w[2] >= 0 else "kernels ?") if w else ""
        add(f"creation {isa} 3x3 conv JIT generation <= {JIT_GEN_US_MAX:.0f} us",
            f"{w[0]:.1f} us ({kernels}) {w[1]}" if w else "-",
            w and w[0] <= JIT_GEN_US_MAX,
            why or (None if w else "no row"),
            no_kernel or row_error(path, f"create/conv/{isa}/jit_gen_cold"), isa)
        cached = [(v[0], prb) for (i, kind, prb), v in found.items() if i == isa and kind == "cached"]
        w = max(cached) if cached else None
        add(f"creation {isa} cached conv_fwd <= {CACHED_CREATE_US_MAX} us",
            f"worst {w[0]:.2f} us {w[1]}" if w else "-", w and w[0] <= CACHED_CREATE_US_MAX,
            why or (None if w else "no row"), row_error(path, f"create/conv/{isa}/cached"), isa)

    wf = max(len(x[0]) for x in lines)
    wm = max(len(x[1]) for x in lines)
    for what, figure, verdict in lines:
        print(f"{what:{wf}s}  {figure:{wm}s}  {verdict}")
    checked = [v for _, _, v in lines if not v.startswith("not checked")]
    print(f"{sum(v == 'ok' for v in checked)} of {len(checked)} checked floors hold; "
          f"{len(lines) - len(checked)} not checked")


def main(argv):
    ap = argparse.ArgumentParser(description="one report of blockdnn beside oneDNN from perf_report.sh's files")
    ap.add_argument("dir", type=Path, help="the directory perf_report.sh wrote (its --out)")
    out = ap.parse_args(argv).dir
    if not out.is_dir():
        ap.error(f"{out}: no such directory")
    read_json_files(out)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):  # the tables' cells are padded: strip the line ends
        lines = machine_lines(out)
        available = detected_isas(lines)
        header(out, lines)
        summary, notes = [], []
        conv = conv_section(out, available, summary, notes)
        cap = cap_section(out, available)
        bnorm_section(out, available, summary)
        paired_section(out, "rnn", "rnn: one layer forward, blockdnn time / oneDNN time; % of the FMA peak",
                       "threads cell shape", summary, available, lambda k: " ".join(k.split("/")[:2]))
        paired_section(out, "gemm", "gemm: blockdnn time / oneDNN (dnnl_sgemm) time; % of the FMA peak",
                       "threads shape", summary, available, lambda k: k.split("/")[0])
        created = create_section(out)
        summary_table(summary, notes)
        floors_section(out, available, conv, cap, created)
    for line in text.getvalue().splitlines():
        print(line.rstrip())


if __name__ == "__main__":
    main(sys.argv[1:])
