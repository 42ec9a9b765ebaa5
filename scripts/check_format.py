#!/usr/bin/env python3
"""Checks that the C++ sources follow .clang-format, with Debian 12's clang-format-14.

Another clang-format version formats some constructs differently, so only clang-format-14 is
used; without it the check is skipped (exit 77, meson's code for a skipped test). Prints each
file that differs and how to fix it; exits 1 if any does.
"""
import pathlib
import shutil
import subprocess
import sys

FOLDERS = ['src', 'include', 'tests', 'tools', 'bench', 'examples', 'testing', 'baseline', 'python']


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    exe = shutil.which('clang-format-14')
    if not exe:
        print('check_format: clang-format-14 not found (apt-get install clang-format-14): skipped')
        return 77
    files = sorted(str(f) for d in FOLDERS for f in (root / d).rglob('*') if f.suffix in ('.cpp', '.hpp'))
    bad = []
    for i in range(0, len(files), 64):
        batch = files[i:i + 64]
        r = subprocess.run([exe, '--dry-run', '--Werror', f'--style=file:{root / ".clang-format"}', *batch],
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad += sorted({line.split(':', 1)[0] for line in r.stderr.splitlines() if ': error:' in line})
    for f in bad:
        print(f'{pathlib.Path(f).relative_to(root)}: not formatted (clang-format-14 -i {f})')
    print(f'check_format: {len(files)} files, {len(bad)} not formatted')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
