#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ResNet images/s through the Python API: blockdnn.from_torch beside PyTorch and to_mkldnn.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_speed.py [--quick]

For each model, mb and thread count: the same seeded torch model (examples/models.py: random
init, batch norm with its own statistics per channel) run three ways on the same input, under
torch.no_grad(): blockdnn (blockdnn.from_torch(model), torch tensor in and out), PyTorch dense
(model(x)) and PyTorch's oneDNN path as its users write it (torch.utils.mkldnn.to_mkldnn(model)
with x.to_mkldnn() made before timing, the result left blocked). torch.set_num_threads and
blockdnn.set_num_threads set the threads. Each round times every engine in turn, each over
calls in a row for at least --min-time seconds (one call if it takes longer: a lone short call
would time the wake-up of threads the other engines left idle); a row prints the median
images/s over the rounds, the spread ((max - min) / median of the rounds: a large one marks
rounds another process disturbed; run the row again) and the ratio blockdnn / to_mkldnn of the
medians. The issue's floor: 1.2x in every row. --quick takes about a minute on 2 cores;
--models, --mb and --threads pick rows.

The last line is the Python call overhead of blockdnn.nn.ReLU on a 1x16x8x8 torch tensor (and
on a blocked one): timeit per call, the median of --overhead-repeats runs. The floor: under 5 us.
"""
import argparse
import copy
import os
import statistics
import sys
import time
import timeit

import torch
from torch.utils import mkldnn as mkldnn_utils

import blockdnn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'examples'))
import models as example_models  # noqa: E402


def cpu_name():
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return 'unknown CPU'


def images_per_s(fn, mb, min_time):
    calls = 0
    t0 = time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time:
            return mb * calls / elapsed


def measure(nets, mb, threads, size, rounds, min_time):
    """Images/s of each engine, a list over the rounds; and blockdnn's largest error, relative
    to the largest logit."""
    torch.set_num_threads(threads)
    blockdnn.set_num_threads(threads)
    model, bd, mk = nets
    x = torch.randn(mb, 3, size, size, generator=torch.Generator().manual_seed(1))
    xm = x.to_mkldnn()
    engines = {'blockdnn': lambda: bd(x), 'dense': lambda: model(x), 'mkldnn': lambda: mk(xm)}
    with torch.no_grad():
        y = bd(x)
        ref = model(x)
        # A wrong result would make the speed meaningless.
        err = (y - ref).abs().max().item() / max(ref.abs().max().item(), 1e-30)
        for fn in engines.values():  # warm-up: op creation, JIT, caches
            fn()
        got = {k: [] for k in engines}
        for _ in range(rounds):
            for k, fn in engines.items():
                got[k].append(images_per_s(fn, mb, min_time))
    return got, err


def relu_overhead(repeats):
    relu = blockdnn.nn.ReLU()
    x = torch.randn(1, 16, 8, 8)
    xb = blockdnn.to_blocked(x)
    out = {}
    for what, arg in (('plain', x), ('blocked', xb)):
        number = 20000
        relu(arg)
        runs = timeit.repeat(lambda: relu(arg), number=number, repeat=repeats)
        out[what] = statistics.median(runs) / number * 1e6
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--models', default='resnet18,resnet50')
    p.add_argument('--mb', default='1,16', help='batch sizes, comma-separated')
    p.add_argument('--threads', default='1,2', help='thread counts, comma-separated')
    p.add_argument('--size', type=int, default=224)
    p.add_argument('--rounds', type=int, default=7, help='rounds per row (each times every engine once)')
    p.add_argument('--min-time', type=float, default=1.0, help='seconds of calls per engine per round')
    p.add_argument('--overhead-repeats', type=int, default=7)
    p.add_argument('--quick', action='store_true', help='5 rounds of 0.25 s per engine (a 2-core machine)')
    p.add_argument('--no-overhead', action='store_true', help='leave out the ReLU overhead line')
    a = p.parse_args()
    if a.quick:
        a.rounds, a.min_time = 5, 0.25
    print('CPU: %s; torch %s; %s rounds' % (cpu_name(), torch.__version__, a.rounds), flush=True)
    head = '%-9s %3s %2s | %9s %9s %9s | %7s | %s' % ('model', 'mb', 't', 'blockdnn', 'dense', 'mkldnn',
                                                       'bd/mkl', 'spread (bd, dense, mkl)')
    print(head)
    print('-' * len(head))
    ratios = []
    for name in a.models.split(','):
        model = example_models.build(name, size=a.size)
        # to_mkldnn swaps the children of the module it is given: it gets a copy.
        nets = (model, blockdnn.from_torch(model), mkldnn_utils.to_mkldnn(copy.deepcopy(model)))
        for mb in (int(v) for v in a.mb.split(',')):
            for threads in (int(v) for v in a.threads.split(',')):
                got, err = measure(nets, mb, threads, a.size, a.rounds, a.min_time)
                med = {k: statistics.median(v) for k, v in got.items()}
                spread = {k: (max(v) - min(v)) / med[k] for k, v in got.items()}
                ratio = med['blockdnn'] / med['mkldnn']
                ratios.append(ratio)
                print('%-9s %3d %2d | %9.2f %9.2f %9.2f | %6.2fx | %3.0f%% %3.0f%% %3.0f%%%s' % (
                    name, mb, threads, med['blockdnn'], med['dense'], med['mkldnn'], ratio,
                    100 * spread['blockdnn'], 100 * spread['dense'], 100 * spread['mkldnn'],
                    '' if err < 1e-3 else '  (max error %.2g of the largest logit!)' % err), flush=True)
    if ratios:
        print('blockdnn / to_mkldnn: min %.2fx, max %.2fx (floor 1.2x)' % (min(ratios), max(ratios)))
    if not a.no_overhead:
        torch.set_num_threads(1)
        blockdnn.set_num_threads(1)
        o = relu_overhead(a.overhead_repeats)
        print('ReLU 1x16x8x8 per call: %.2f us (torch tensor), %.2f us (blocked blockdnn.Tensor); floor 5 us'
              % (o['plain'], o['blocked']))


if __name__ == '__main__':
    main()
