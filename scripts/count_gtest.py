#!/usr/bin/env python3
"""Sums GoogleTest case counts from meson's JUnit logs.

Usage: count_gtest.py BUILD_DIR [BUILD_DIR ...]
Prints one line per build dir, a line 'N skipped' when any case was skipped (a test of an ISA
this CPU lacks), and, last, 'N passed, N failed' over all of them: CI reads that last line as
it is. Exits 1 if a log is missing or any case failed.
"""
import json
import sys
import xml.etree.ElementTree as ET

total_pass = total_fail = total_skip = 0
ok = True
for build in sys.argv[1:]:
    path = f"{build}/meson-logs/testlog.junit.xml"
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"{build}: no test log ({e})")
        ok = False
        continue
    p = f = s = 0
    # meson nests each gtest executable's <testsuite> elements; count the <testcase> leaves,
    # skipping the wrapper cases meson adds for whole executables that have gtest children.
    for case in root.iter("testcase"):
        if case.get("classname") is None and list(case) == []:
            continue
        if case.find("failure") is not None or case.find("error") is not None:
            f += 1
        elif case.find("skipped") is not None:
            s += 1
        else:
            p += 1
    # A test executable that crashed or timed out may leave no gtest failure behind: count it.
    try:
        with open(f"{build}/meson-logs/testlog.json") as log:
            for line in log:
                t = json.loads(line)
                if t.get("result") not in ("OK", "EXPECTEDFAIL", "SKIP"):
                    print(f"{build}: meson test '{t.get('name')}' ended {t.get('result')}")
                    f += 1
    except OSError:
        pass
    print(f"{build}: {p} passed, {f} failed, {s} skipped")
    total_pass += p
    total_fail += f
    total_skip += s

if total_skip:
    print(f"{total_skip} skipped")
print(f"{total_pass} passed, {total_fail} failed")
sys.exit(0 if ok and total_fail == 0 else 1)
