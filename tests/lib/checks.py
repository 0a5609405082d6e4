#!/usr/bin/env python3
"""The shell tests' checks of copbench's files, in one place.

A result file (`copbench run --out`, a campaign's raw/*.json) is Google Benchmark JSON:
"context" plus "benchmarks", whose aggregate entries carry run_name and aggregate_name.
A shell test runs a check as a command:

    python3 tests/lib/checks.py COMMAND ARGS...

and a longer, test-specific check imports the loaders (PYTHONPATH=tests/lib). A failed
check exits non-zero with one line, "FAIL: why", on stderr.

Commands:
    whole RESULT...                     each file is a whole result (context and benchmarks)
    field JSON KEY                      prints a top-level field of a JSON file
    length JSON KEY                     prints how many items a top-level list field has
    median-within RESULT POINT WANT F   POINT's median (real_time) is within F x WANT of WANT
    csv-cell CSV ROW COLUMN TEXT        the first row whose first cell starts with ROW has TEXT in COLUMN
"""
import csv
import json
import sys


def fail(why):
    sys.exit(f"FAIL: {why}")


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def result(path):
    """A whole result file: its JSON, with a context object and a benchmarks list."""
    j = load_json(path)
    if not isinstance(j.get("context"), dict) or not isinstance(j.get("benchmarks"), list):
        fail(f"{path}: not a whole result (no context or no benchmarks)")
    return j


def aggregates(j):
    """The aggregate entries of a result, one per point: {run_name: entry}."""
    return {b["run_name"]: b for b in j["benchmarks"] if b.get("run_type") == "aggregate"}


def median(j, point):
    """The median time (real_time, in the result's time unit) of point `point`."""
    got = [b["real_time"] for b in j["benchmarks"]
           if b.get("aggregate_name") == "median" and b.get("run_name") == point]
    if not got:
        fail(f"no median of {point} in the result")
    return got[0]


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def csv_cell(path, row, column):
    """The cell in `column` of the first row whose first cell starts with `row`."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or column not in rows[0]:
        fail(f"{path}: no column '{column}' in {rows[0] if rows else 'an empty file'}")
    got = [r for r in rows[1:] if r and r[0].startswith(row)]
    if not got:
        fail(f"{path}: no row '{row}'")
    return got[0][rows[0].index(column)]


def main(argv):
    if not argv:
        fail("usage: checks.py COMMAND ARGS... (see the file's top)")
    command, args = argv[0], argv[1:]
    if command == "whole" and args:
        for path in args:
            result(path)
    elif command == "field" and len(args) == 2:
        j = load_json(args[0])
        if args[1] not in j:
            fail(f"{args[0]}: no field {args[1]}")
        print(j[args[1]])
    elif command == "length" and len(args) == 2:
        print(len(load_json(args[0]).get(args[1], [])))
    elif command == "median-within" and len(args) == 4:
        path, point, want, fraction = args[0], args[1], float(args[2]), float(args[3])
        got = median(result(path), point)
        print(f"{point}: median {got:.3f}, expected {want} within {fraction:.0%}")
        if abs(got - want) > fraction * want:
            fail(f"{point}: {got} is not within {fraction:.0%} of {want}")
    elif command == "csv-cell" and len(args) == 4:
        cell = csv_cell(args[0], args[1], args[2])
        if cell != args[3]:
            fail(f"{args[0]}: row '{args[1]}', column '{args[2]}' is '{cell}', expected '{args[3]}'")
    else:
        fail(f"unknown command or wrong arguments: {' '.join(argv)} (see the file's top)")


if __name__ == "__main__":
    main(sys.argv[1:])
