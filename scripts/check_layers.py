#!/usr/bin/env python3
"""Checks that the library's includes point only downward (docs/ARCHITECTURE.md).

The floors of src/, lowest first: core, sched, tensor, jit, ops. A file may include the
public headers (blockdnn/), its own floor and the floors below it; a file of ops/<op>/ may
include the ops' shared contract (the files directly under ops/, such as ops/op_table.hpp)
but no other op's folder, and the shared contract includes no op's folder.

Callers outside src/ (tools/, bench/, examples/, tests/, python/) use the public headers, testing/ and
the floors below ops/, never an op's folder; the one exception is an op's own white-box tests,
tests/ops/<op>/, which may include src/ops/<op>/. Exits 1 and names each offending line.
"""
import argparse
import pathlib
import re
import sys

FLOORS = ['core', 'sched', 'tensor', 'jit', 'ops']
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def floor_of(path):
    """The floor of a path relative to src/ (or of an include path), or None."""
    head = path.split('/', 1)[0]
    return FLOORS.index(head) if head in FLOORS else None


def op_of(path):
    """The op folder of a path under ops/ ('conv' for ops/conv/conv_fwd.cpp), else None (the
    shared contract directly under ops/, or another floor)."""
    parts = path.split('/')
    return parts[1] if parts[0] == 'ops' and len(parts) > 2 else None


def check_src(src):
    errors = []
    for f in sorted(src.rglob('*')):
        if f.suffix not in ('.cpp', '.hpp'):
            continue
        rel = f.relative_to(src).as_posix()
        own = floor_of(rel)
        if own is None:
            errors.append(f'src/{rel}: not inside one of the floors {", ".join(FLOORS)}')
            continue
        for n, line in enumerate(f.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1).startswith('blockdnn/'):
                continue
            inc = m.group(1)
            target = floor_of(inc)
            if target is None:
                errors.append(f'src/{rel}:{n}: includes "{inc}", which is not in the library')
            elif target > own:
                errors.append(f'src/{rel}:{n}: {FLOORS[own]} includes "{inc}" from {FLOORS[target]}, a floor above')
            elif target == own == FLOORS.index('ops') and op_of(inc) not in (None, op_of(rel)):
                who = f'ops/{op_of(rel)}' if op_of(rel) else 'the ops\' shared contract'
                errors.append(f'src/{rel}:{n}: {who} includes "{inc}", another op\'s internals')
    return errors


CALLERS = ['tools', 'bench', 'examples', 'tests', 'python']


def check_callers(root):
    errors = []
    for top in CALLERS:
        for f in sorted((root / top).rglob('*')):
            if f.suffix not in ('.cpp', '.hpp'):
                continue
            rel = f.relative_to(root).as_posix()
            parts = rel.split('/')
            own_op = parts[2] if parts[:2] == ['tests', 'ops'] and len(parts) > 3 else None
            for n, line in enumerate(f.read_text().splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                op = op_of(inc)
                if op is not None and op != own_op:
                    errors.append(f'{rel}:{n}: includes "{inc}", the internals of ops/{op} '
                                  f'(callers use include/blockdnn/; only tests/ops/{op}/ may)')
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('root', nargs='?', default=pathlib.Path(__file__).resolve().parent.parent, type=pathlib.Path)
    args = ap.parse_args()
    src = args.root / 'src'
    if not src.is_dir():
        print(f'check_layers: {src} is not a directory', file=sys.stderr)
        return 2
    errors = check_src(src) + check_callers(args.root)
    for e in errors:
        print(e)
    files = sum(1 for f in src.rglob('*') if f.suffix in ('.cpp', '.hpp'))
    print(f'check_layers: {files} files, {len(errors)} includes against the floors')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
