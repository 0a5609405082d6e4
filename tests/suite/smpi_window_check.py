#!/usr/bin/env python3
"""smpi_window_check.py DIR MAX_NODES [BENCH...]: the checks of smpi_window_test.sh (issue 35)
on the result files it wrote, DIR/BENCH.N.json for BENCH broadcast (8 B), barrier and reduce
(8 B of doubles), or the BENCHes named, at N = 2, 4, ..., MAX_NODES simulated nodes of
`present`, and DIR/echo.2.json (the 8 B echo at 2 nodes):

  - the window method's (the default point's) barrier, 8 B reduce and 8 B broadcast never
    get faster as the nodes double;
  - the broadcast runs SMPI's binomial tree at every node count (the context's smpi_bcast,
    from baselines/backends.json), so at N nodes it takes at least ceil(log2 N) one-hop
    times; one hop is the 8 B echo's one-way time at 2 nodes (a message from one node to
    another on `present`, 1 us of latency plus the MPI_Wtime reads SMPI charges);
  - no call was invalid (a simulated wait is exact).

The sync method's figures are printed beside the window's for the record.
"""
import json
import math
import sys

POINTS = {"broadcast": "broadcast/size:8", "barrier": "barrier/nodes:{n}", "reduce": "reduce/double/size:8"}


def fail(why):
    sys.exit(f"FAIL: {why}")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def median(j, name, where):
    for b in j["benchmarks"]:
        if b.get("run_name") == name and b.get("aggregate_name") == "median":
            return b
    fail(f"no median of {name} in {where}")


def point(out, bench, n, method=""):
    name = POINTS[bench].format(n=n)
    if method:
        head, _, tail = name.rpartition("/")
        name = f"{head}/method:{method}/{tail}"
    return median(load(f"{out}/{bench}.{n}.json"), name, f"{bench}.{n}.json")


def never_faster(out, benches, nodes, bad):
    for bench in benches:
        t = [point(out, bench, n)["real_time"] for n in nodes]
        print(bench, " ".join(f"{n}:{x:.3f}" for n, x in zip(nodes, t)))
        print(bench, "method:sync", " ".join(f"{n}:{point(out, bench, n, 'sync')['real_time']:.3f}" for n in nodes))
        for n in nodes:
            if point(out, bench, n).get("invalid_calls", 0):
                bad.append(f"{bench} at {n} nodes: invalid calls in a simulation")
        for (a, x), (b, y) in zip(zip(nodes, t), zip(nodes[1:], t[1:])):
            if y < x * (1 - 1e-9):
                bad.append(f"{bench} got faster from {a} to {b} nodes: {x} -> {y} us")


def binomial_hops(out, nodes, bad):
    hop = median(load(f"{out}/echo.2.json"), "echo/size:8", "echo.2.json")["real_time"]
    print(f"one hop (8 B echo, one way, 2 nodes): {hop:.5f} us")
    for n in nodes:
        algorithm = load(f"{out}/broadcast.{n}.json")["context"].get("smpi_bcast", "")
        if algorithm != "binomial_tree":
            bad.append(f"broadcast at {n} nodes ran '{algorithm or 'the selector'}', not the binomial tree")
            continue
        t = point(out, "broadcast", n)["real_time"]
        hops = math.ceil(math.log2(n))
        if t < hops * hop * (1 - 1e-9):
            bad.append(f"broadcast at {n} nodes: {t} us < {hops} one-hop times of {hop} us")


def main():
    out, top, benches = sys.argv[1], int(sys.argv[2]), sys.argv[3:] or list(POINTS)
    unknown = [b for b in benches if b not in POINTS]
    if unknown:
        fail(f"no check for {unknown}: one of {list(POINTS)}")
    nodes, n = [], 2
    while n <= top:
        nodes.append(n)
        n *= 2
    bad = []
    never_faster(out, benches, nodes, bad)
    if "broadcast" in benches:
        binomial_hops(out, nodes, bad)
    if bad:
        fail("; ".join(bad))
    print(f"ok: window-method {', '.join(benches)} never faster as nodes double (2..{top})"
          + ("; the broadcast (binomial tree) >= ceil(log2 N) one-hop times" if "broadcast" in benches else ""))


if __name__ == "__main__":
    main()
