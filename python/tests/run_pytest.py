#!/usr/bin/env python3
"""Runs pytest over a folder for `meson test`, as meson runs a GoogleTest program.

Usage: run_pytest.py TEST_DIR [--gtest_output=xml:FILE] [pytest arguments...]
meson's gtest protocol adds --gtest_output=xml:FILE and merges FILE, a JUnit report, into its
own log, where scripts/count_gtest.py counts the cases; pytest writes that report with
--junitxml. No cache or bytecode is written into the source tree.
"""
import sys

import pytest

args = []
for a in sys.argv[1:]:
    if a.startswith('--gtest_output=xml:'):
        args.append('--junitxml=' + a[len('--gtest_output=xml:'):])
    elif not a.startswith('--gtest'):
        args.append(a)
sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-o', 'junit_family=xunit1'] + args))
