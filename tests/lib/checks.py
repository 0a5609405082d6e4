#!/usr/bin/env python3
"""The shell tests' checks of copbench's files, in one place (issue 37: one test idiom).

A shell test runs a check as a subcommand, never as inline Python:

    python3 tests/lib/checks.py COMMAND ARGS...     (python3 tests/lib/checks.py -h lists them)

Each command is one function below, registered with @command; its docstring says what it
asserts and is the command's help. A failed check exits non-zero: most with one line,
"FAIL: why", on stderr; the ones written as assertions with the failed assertion's
traceback (exit 1). tests/lib/idiom_guard.sh fails when a shell test holds a Python
heredoc or a `python3 -c` again.

A result file (`copbench run --out`, a campaign's raw/*.json) is Google Benchmark JSON:
"context" plus "benchmarks", whose aggregate entries carry run_name and aggregate_name.
"""
import argparse
import csv
import glob
import ipaddress
import json
import math
import os
import re
import subprocess
import sys

COMMANDS = []


def command(name, *params):
    """Registers a check as subcommand `name` with positional `params` ("X..." takes one or more)."""
    def register(function):
        COMMANDS.append((name, params, function))
        return function
    return register


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


# --- result and JSON files (any test) -------------------------------------------------

@command("whole", "RESULT...")
def whole(paths):
    """Each file is a whole result (a context object and a benchmarks list)."""
    for path in paths:
        result(path)


@command("field", "JSON", "KEY")
def field(path, key):
    """Prints a top-level field of a JSON file; fails when it has none."""
    j = load_json(path)
    if key not in j:
        fail(f"{path}: no field {key}")
    print(j[key])


@command("length", "JSON", "KEY")
def length(path, key):
    """Prints how many items a top-level list field of a JSON file has (0 when absent)."""
    print(len(load_json(path).get(key, [])))


@command("median-within", "RESULT", "POINT", "WANT", "FRACTION")
def median_within(path, point, want, fraction):
    """POINT's median (real_time) in RESULT is within FRACTION x WANT of WANT."""
    want, fraction = float(want), float(fraction)
    got = median(result(path), point)
    print(f"{point}: median {got:.3f}, expected {want} within {fraction:.0%}")
    if abs(got - want) > fraction * want:
        fail(f"{point}: {got} is not within {fraction:.0%} of {want}")


@command("csv-cell", "CSV", "ROW", "COLUMN", "TEXT")
def csv_cell_is(path, row, column, text):
    """The first row whose first cell starts with ROW has TEXT in COLUMN."""
    cell = csv_cell(path, row, column)
    if cell != text:
        fail(f"{path}: row '{row}', column '{column}' is '{cell}', expected '{text}'")


@command("module", "NAME")
def module(name):
    """Python module NAME imports with the interpreter running this (exit 1, silent, when not)."""
    import importlib
    try:
        importlib.import_module(name)
    except ImportError:
        sys.exit(1)


# --- tests/suite ----------------------------------------------------------------------

@command("out-file", "RESULT")
def out_file(path):
    """out_file_test.sh: a 2-node mpi echo result (sizes 0 and 8) with the context keys every
    result has, a median entry of echo/size:8 and an iteration entry of echo/size:0, every
    time in us with real and CPU time."""
    j = result(path)
    ctx = j["context"]
    for key in ["backend", "route", "nodes", "tasks_per_node", "link_profile", "host_name", "commit", "timer"]:
        assert key in ctx, key
    assert ctx["backend"] == "mpi" and ctx["nodes"] == "2"
    names = {b["name"] for b in j["benchmarks"]}
    assert "echo/size:8_median" in names and "echo/size:0" in names, names
    for b in j["benchmarks"]:
        assert b["time_unit"] == "us" and "real_time" in b and "cpu_time" in b


@command("echo-placements", "RESULT")
def echo_placements(path):
    """tasks_per_node_test.sh: echo on 2 nodes x 2 tasks, sizes 0 and 1K, has exactly the four
    points echo/{on-host,inter-host}/size:{0,1024}, each labelled with its placement and
    counting 2 nodes and 4 ranks; the context says 2 nodes x 2 tasks."""
    j = result(path)
    ctx = j["context"]
    assert ctx["nodes"] == "2" and ctx["tasks_per_node"] == "2", ctx
    points = aggregates(j)
    for placement in ["on-host", "inter-host"]:
        for size in [0, 1024]:
            name = f"echo/{placement}/size:{size}"
            assert name in points, (name, sorted(points))
            assert points[name]["label"] == f"placement={placement}", points[name]
            assert points[name]["nodes"] == 2 and points[name]["ranks"] == 4, points[name]
    assert len(points) == 4, sorted(points)


@command("one-task-per-node", "RESULT")
def one_task_per_node(path):
    """tasks_per_node_test.sh: echo at one task per node keeps the old point name
    (echo/size:8 alone), labelled inter-host, without a ranks count."""
    j = result(path)
    assert j["context"]["tasks_per_node"] == "1", j["context"]
    points = aggregates(j)
    assert set(points) == {"echo/size:8"}, sorted(points)
    assert points["echo/size:8"]["label"] == "placement=inter-host" and "ranks" not in points["echo/size:8"]


@command("barrier-methods", "RESULT")
def barrier_methods(path):
    """tasks_per_node_test.sh: a barrier on 2 nodes x 2 tasks has its three methods (window
    under the old name, sync, loop), each over 4 ranks and labelled with its method; the
    window point counts its timed and invalid calls, its W and a one-kernel clock whose
    offsets were measured; the context records mpi_yield_when_idle."""
    j = result(path)
    assert j["context"]["mpi_yield_when_idle"] in ("0", "1"), j["context"]
    points = aggregates(j)
    assert set(points) == {"barrier/nodes:2", "barrier/method:sync/nodes:2", "barrier/method:loop/nodes:2"}, sorted(points)
    for name, method in [("barrier/nodes:2", "window"), ("barrier/method:sync/nodes:2", "sync"),
                         ("barrier/method:loop/nodes:2", "loop")]:
        assert points[name]["ranks"] == 4, points
        assert points[name]["label"] == f"method={method}", points[name]
        assert points[name]["timing_method"].startswith(f"{method} method"), points[name]
    w = points["barrier/nodes:2"]
    assert w["timed_calls"] > 0 and 0 <= w["invalid_calls"] <= w["timed_calls"], w
    assert w["window_us"] > 0 and "one kernel" in w["clock"] and "round trips" in w["clock"], w


@command("hostfile-placement", "RESULT")
def hostfile_placement(path):
    """tasks_per_node_test.sh: echo from a hostfile of one host, 2 tasks on it: the on-host
    pair alone (echo/on-host/size:8), the context saying 1 node x 2 tasks."""
    j = result(path)
    assert j["context"]["nodes"] == "1" and j["context"]["tasks_per_node"] == "2", j["context"]
    points = set(aggregates(j))
    assert points == {"echo/on-host/size:8"}, sorted(points)


def window_point(out, f):
    """The context and the median entry of barrier/nodes:3 in result `f` under directory `out`."""
    j = json.load(open(f"{out}/{f}"))
    for b in j["benchmarks"]:
        if b.get("run_name") == "barrier/nodes:3" and b.get("aggregate_name") == "median":
            return j["context"], b
    sys.exit(f"FAIL: no window point in {f}")


@command("clock-skew", "DIR")
def clock_skew(out):
    """clock_skew_test.sh: DIR/skew.json (injected skew) has an estimated clock whose true
    error is within the bound it reports (0 < bound < 10 ms) and which saw the injected
    offsets (> 100 us); DIR/plain.json has one kernel's clock, its offset within its bound."""
    ctx, w = window_point(out, "skew.json")
    assert "clock_skew_injected" in ctx, ctx
    assert w["clock_basis"] == "estimated", w["clock"]
    err, bound = w["clock_injected_error_us"], w["clock_bound_us"]
    assert 0 < bound < 10000, w["clock"]
    if err > bound:
        sys.exit(f"FAIL: injected skew recovered to {err} us, outside the bound {bound} us it reports")
    # The estimate saw the injected offsets (up to 10 ms): not one clock.
    assert w["clock_offset_us"] > 100, w["clock"]
    ctx, p = window_point(out, "plain.json")
    assert p["clock_basis"] == "one-kernel" and "clock_injected_error_us" not in p, p["clock"]
    assert p["clock_offset_us"] <= p["clock_offset_bound_us"], p["clock"]
    print(f"ok: injected offsets and drift recovered within {err:.3g} us of the truth, bound {bound:.3g} us; "
          f"one kernel: |offset| {p['clock_offset_us']:.3g} us <= bound {p['clock_offset_bound_us']:.3g} us")


@command("throwaway-listed", "LIST_JSON")
def throwaway_listed(path):
    """add_workload_test.sh: `copbench list --json` shows throwaway as a benchmark needing
    barrier and broadcast, offered by mpi, smoke-sized at 8 bytes."""
    w = {x["name"]: x for x in json.load(open(path))["workloads"]}["throwaway"]
    assert w["kind"] == "benchmark" and w["needs"] == ["barrier", "broadcast"] and "mpi" in w["offered_by"], w
    assert w["smoke"]["sizes"] == [8], w


@command("throwaway-ran", "RUN_JSON")
def throwaway_ran(path):
    """add_workload_test.sh: the run's JSON has the points throwaway/size:8 and throwaway/size:64."""
    names = {b["name"].split("_")[0] for b in json.load(open(path))["benchmarks"]}
    want = {"throwaway/size:8", "throwaway/size:64"}
    assert want <= names, sorted(names)


SMPI_WINDOW_POINTS = {"broadcast": "broadcast/size:8", "barrier": "barrier/nodes:{n}", "reduce": "reduce/double/size:8"}


def smpi_median(out, bench, n, method=""):
    """The median entry of `bench`'s point (of `method`, else the default) in OUT/BENCH.N.json."""
    name = SMPI_WINDOW_POINTS[bench].format(n=n)
    if method:
        head, _, tail = name.rpartition("/")
        name = f"{head}/method:{method}/{tail}"
    for b in load_json(f"{out}/{bench}.{n}.json")["benchmarks"]:
        if b.get("run_name") == name and b.get("aggregate_name") == "median":
            return b
    fail(f"no median of {name} in {bench}.{n}.json")


def smpi_never_faster(out, benches, nodes, bad):
    """Adds to `bad` each bench whose window-method time drops as the nodes double, or that had invalid calls."""
    for bench in benches:
        t = [smpi_median(out, bench, n)["real_time"] for n in nodes]
        print(bench, " ".join(f"{n}:{x:.3f}" for n, x in zip(nodes, t)))
        print(bench, "method:sync", " ".join(f"{n}:{smpi_median(out, bench, n, 'sync')['real_time']:.3f}" for n in nodes))
        for n in nodes:
            if smpi_median(out, bench, n).get("invalid_calls", 0):
                bad.append(f"{bench} at {n} nodes: invalid calls in a simulation")
        for (a, x), (b, y) in zip(zip(nodes, t), zip(nodes[1:], t[1:])):
            if y < x * (1 - 1e-9):
                bad.append(f"{bench} got faster from {a} to {b} nodes: {x} -> {y} us")


def smpi_binomial_hops(out, nodes, bad):
    """Adds to `bad` each broadcast that did not run the binomial tree or took fewer than ceil(log2 N) hops."""
    echo = load_json(f"{out}/echo.2.json")["benchmarks"]
    medians = [b for b in echo if b.get("run_name") == "echo/size:8" and b.get("aggregate_name") == "median"]
    if not medians:
        fail("no median of echo/size:8 in echo.2.json")
    hop = medians[0]["real_time"]
    print(f"one hop (8 B echo, one way, 2 nodes): {hop:.5f} us")
    for n in nodes:
        algorithm = load_json(f"{out}/broadcast.{n}.json")["context"].get("smpi_bcast", "")
        if algorithm != "binomial_tree":
            bad.append(f"broadcast at {n} nodes ran '{algorithm or 'the selector'}', not the binomial tree")
            continue
        t = smpi_median(out, "broadcast", n)["real_time"]
        hops = math.ceil(math.log2(n))
        if t < hops * hop * (1 - 1e-9):
            bad.append(f"broadcast at {n} nodes: {t} us < {hops} one-hop times of {hop} us")


@command("smpi-window", "DIR", "MAX_NODES", "BENCH...")
def smpi_window(out, top, benches):
    """smpi_window_test.sh (issue 35): on `present`, from 2 to MAX_NODES nodes (doubling), the
    window method's BENCHes (broadcast 8 B, barrier, reduce 8 B of doubles) never get faster
    as the nodes double and had no invalid call; the broadcast runs SMPI's binomial tree at
    every node count (the context's smpi_bcast, baselines/backends.json), so at N nodes it
    takes at least ceil(log2 N) one-hop times, one hop being the 8 B echo's one-way time at
    2 nodes (DIR/echo.2.json). The sync method's figures are printed beside, for the record."""
    unknown = [b for b in benches if b not in SMPI_WINDOW_POINTS]
    if unknown:
        fail(f"no check for {unknown}: one of {list(SMPI_WINDOW_POINTS)}")
    nodes, n = [], 2
    while n <= int(top):
        nodes.append(n)
        n *= 2
    bad = []
    smpi_never_faster(out, benches, nodes, bad)
    if "broadcast" in benches:
        smpi_binomial_hops(out, nodes, bad)
    if bad:
        fail("; ".join(bad))
    print(f"ok: window-method {', '.join(benches)} never faster as nodes double (2..{top})"
          + ("; the broadcast (binomial tree) >= ceil(log2 N) one-hop times" if "broadcast" in benches else ""))



@command("simulated-defaults", "COPBENCH")
def simulated_defaults(copbench):
    """tests/suite (smpi): a simulation is deterministic, so `COPBENCH run barrier --backend
    smpi --nodes 2 --platform thesis` without timing options keeps one repetition of 3
    iterations (suite/cli/run_cmd.cpp), not a measured run's 10 of 30, at every point."""
    run = subprocess.run([copbench, "run", "barrier", "--backend", "smpi", "--nodes", "2", "--platform", "thesis",
                          "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"copbench run exited {run.returncode}: {run.stderr.strip()}")
    try:
        points = json.loads(run.stdout)["benchmarks"]
    except (ValueError, KeyError) as e:
        fail(f"copbench run --json: {e}")
    bad = [(x["name"], x["repetitions"], x["iterations"]) for x in points if (x["repetitions"], x["iterations"]) != (1, 3)]
    if bad or not points:
        fail(f"not 1 repetition of 3 iterations: {bad or 'no point'}")
    print(f"ok: {len(points)} entries, each 1 repetition of 3 iterations")


@command("methods-points", "RESULT", "CONTEXT_METHODS", "POINT...")
def methods_points(path, context, points):
    """methods_test.sh (issue 35): RESULT's median points are exactly POINTs, in order, each
    written NAME|LABEL ("broadcast/size:8|method=window"), and its context's `methods` is
    CONTEXT_METHODS ("" for a run that named none: the key absent)."""
    j = result(path)
    got = [(b["run_name"], b.get("label", "")) for b in j["benchmarks"] if b.get("aggregate_name") == "median"]
    want = [tuple(p.split("|", 1)) for p in points]
    if got != want:
        fail(f"{path}: points {got}, expected {want}")
    if j["context"].get("methods", "") != context:
        fail(f"{path}: context methods {j['context'].get('methods')!r}, expected {context!r}")
    print(f"ok: {path}: {len(got)} points, methods {context!r}")


@command("drop-window-points", "RESULT", "OUT")
def drop_window_points(path, out):
    """report_method_test.sh: writes RESULT to OUT without its window-method points (those
    whose name has no "method:" part), as a run that picked only sync and loop would."""
    j = result(path)
    j["benchmarks"] = [b for b in j["benchmarks"] if "method:" in b["name"]]
    with open(out, "w") as f:
        json.dump(j, f)

# --- tests/simulate -------------------------------------------------------------------

@command("calibrated-platform", "XML")
def calibrated_platform(path):
    """simulate_test.sh: the platform fitted to t = 50 us + N / 100 MB/s has a cluster
    "calibrated" of host links of 25 us and 100 MB/s (4096 hosts), and its comment names the
    campaign and the points fitted (mpi's echo and bandwidth, alpha 50 us), not pvm's."""
    import xml.etree.ElementTree as ET
    text = open(path).read()
    cluster = ET.parse(path).getroot().find("zone/cluster")
    want = {"id": "calibrated", "bw": "100000000Bps", "lat": "25.0000us", "bb_bw": "100000000Bps", "radical": "0-4095"}
    bad = [f"{k}={cluster.get(k)!r} (want {v!r})" for k, v in want.items() if cluster.get(k) != v]
    for needed in ("calibrate-fixture", "echo/size:4", "bandwidth/size:32768", "alpha 50.000 us"):
        if needed not in text:
            bad.append(f"comment lacks {needed!r}")
    if "900" in text:
        bad.append("pvm's points were fitted too")
    sys.exit("FAIL: " + "; ".join(bad) if bad else 0)


def what_if_medians(d, bad):
    """The medians as the raw files of campaign `d` hold them: (backend, platform, operation,
    bytes, nodes) -> us; an smpi result without smpi_allreduce rdb is added to `bad`."""
    med = {}
    for f in glob.glob(os.path.join(d, "raw", "*.json")):
        j = json.load(open(f))
        ctx = j.get("context", {})
        backend, platform = ctx.get("backend", ""), ctx.get("platform", "")
        if backend == "smpi" and ctx.get("smpi_allreduce") != "rdb":
            bad.append(f"{f}: context lacks smpi_allreduce rdb")
        for b in j["benchmarks"]:
            if b.get("aggregate_name") != "median" or "method:loop" in b["name"]:
                continue
            op = b["run_name"].split("/nodes:")[0]
            fam, size = (op.split("/size:") + [""])[:2]
            nodes = int(ctx["nodes"])
            med[(backend, platform, fam, size, nodes)] = b["real_time"]
    return med


WHAT_IF_ROWS = {(p, op, n) for p in ("present", "thesis")
                for op, ns in (("barrier", (2, 8, 64)), ("reduce/double 8B", (2, 8, 64)), ("reduce/int 8B", (2, 8, 64)),
                               ("broadcast 8B", (2, 8, 64)), ("broadcast 16KB", (2, 8)))
                for n in ns}


def what_if_simulated(sim, med, bad):
    """Each simulated row of what-if.csv carries the raw medians and their ratio, and names the faster."""
    def us(backend, r):
        fam, _, size = r["operation"].partition(" ")
        size = {"": "", "8B": "8", "16KB": "16384"}[size]
        return med.get((backend, r["network"], fam, size, int(r["nodes"])))
    for r in sim:
        cop, mpi = us("sim-cop", r), us("smpi", r)
        if cop is None or mpi is None:
            bad.append(f"no raw median for {r}")
            continue
        for col, v in (("in-network µs", cop), ("software µs", mpi)):
            if abs(float(r[col]) / v - 1) > 0.006:  # the table prints 3-4 significant places
                bad.append(f"{r['network']} {r['operation']} {r['nodes']}: {col} {r[col]} vs raw {v}")
        ratio = float(r["software ÷ in-network"].rstrip("x"))
        if abs(ratio / (mpi / cop) - 1) > 0.01:
            bad.append(f"{r['network']} {r['operation']} {r['nodes']}: ratio {ratio} vs {mpi / cop:.3f}")
        if r["faster"] != ("COP" if mpi > cop else "Open MPI" if mpi < cop else "equal"):
            bad.append(f"{r['network']} {r['operation']} {r['nodes']}: faster {r['faster']}")


def what_if_crossovers(d, sim, bad):
    """what-if-crossover.csv has one row per platform and operation, agreeing with the ratios."""
    cross = list(csv.DictReader(open(os.path.join(d, "tables", "what-if-crossover.csv"))))
    if {(r["network"], r["operation"]) for r in cross} != {(p, op) for p, op, _ in WHAT_IF_ROWS}:
        bad.append(f"crossover rows: {[(r['network'], r['operation']) for r in cross]}")
    for c in cross:
        ratios = sorted((int(r["nodes"]), float(r["software ÷ in-network"].rstrip("x"))) for r in sim
                        if (r["network"], r["operation"]) == (c["network"], c["operation"]))
        crosses = any((a[1] > 1) != (b[1] > 1) for a, b in zip(ratios, ratios[1:]))
        if crosses == c["crossover"].startswith("none"):
            bad.append(f"crossover of {c['network']} {c['operation']}: {c['crossover']} against ratios {ratios}")


@command("what-if-report", "DIR")
def what_if_report(d):
    """what_if_test.sh: the report of campaign DIR has tables/what-if.csv with a simulated row
    for every platform, operation and node count, each with sim-cop's and smpi's raw medians
    and smpi ÷ sim-cop; published rows with a source; the crossover table agreeing with the
    ratios; the plots drawn; index.md listing the table; smpi's results naming rdb."""
    bad = []
    med = what_if_medians(d, bad)
    rows = list(csv.DictReader(open(os.path.join(d, "tables", "what-if.csv"))))
    sim = [r for r in rows if r["row"] == "simulated"]
    pub = [r for r in rows if r["row"].startswith("published: ")]
    got = {(r["network"], r["operation"], int(r["nodes"])) for r in sim}
    if got != WHAT_IF_ROWS:
        bad.append(f"simulated rows {sorted(got ^ WHAT_IF_ROWS)} missing or extra")
    what_if_simulated(sim, med, bad)
    if not pub:
        bad.append("no published reference rows")
    for r in pub:
        if not r["source"].strip() or float(r["in-network µs"]) <= 0:
            bad.append(f"published row without source or latency: {r}")
    what_if_crossovers(d, sim, bad)
    plots = os.path.join(d, "plots")
    for stem in ("what-if-ratio-present", "what-if-ratio-thesis", "what-if-barrier-present", "what-if-broadcast-16KB-thesis"):
        if not os.path.exists(os.path.join(plots, stem + ".dat")):
            bad.append(f"no plot {stem}")
        if os.path.exists(os.path.join(plots, stem + ".gp")) and not os.path.exists(os.path.join(plots, stem + ".png")):
            bad.append(f"plot {stem} not drawn")
    index = open(os.path.join(d, "index.md")).read()
    if "tables/what-if.md" not in index:
        bad.append("index.md does not list the what-if table")
    sys.exit("FAIL: " + "\n".join(bad) if bad else 0)


# --- tests/campaign -------------------------------------------------------------------

@command("cop-vs-pvm-report", "RAW_DIR", "SUMMARY_CSV")
def cop_vs_pvm_report(raw, summary):
    """cop_vs_pvm_test.sh: each point's context names the group lookup its tasks used
    (cop_groups) and the run's env (campaign_env; none after the env runs); the summary's
    barrier and reduce rows at 2 nodes have cop, cop under each lookup, pvm, cop modelled,
    pvm ÷ cop, the floor and cop ÷ floor above 0; the two-level barrier at 4 nodes its column."""
    def ctx(point):
        return json.load(open(os.path.join(raw, point + ".json")))["context"]
    # The lookup each point's tasks were told (rank 0's reading; the tasks get the same
    # variable through PVM_EXPORT) and the runner's record of the run's env.
    for point, groups, env in [("barrier.cop-direct.n2.native", "static", None),
                               ("barrier.cop-direct.n2.native.COPBENCH_COP_GROUPS=default", "default",
                                "COPBENCH_COP_GROUPS=default"),
                               ("reduce.cop-direct.n2.native.COPBENCH_COP_GROUPS=ask", "ask", "COPBENCH_COP_GROUPS=ask"),
                               ("barrier.cop-direct.n4.native.k2", "static", None)]:  # after the env runs
        c = ctx(point)
        if c.get("cop_groups") != groups or c.get("campaign_env") != env:
            sys.exit(f"FAIL: {point}: cop_groups {c.get('cop_groups')!r}, campaign_env {c.get('campaign_env')!r}; "
                     f"expected {groups!r}, {env!r}")
    rows = list(csv.DictReader(open(summary)))

    def num(r, k):
        v = (r.get(k) or "").replace(" !", "").rstrip("x")
        try:
            return float(v)
        except ValueError:
            sys.exit(f"FAIL: summary: {k} is {r.get(k)!r} at {r['nodes']} nodes, {r['point']}")
    cols = ["cop/direct µs", "cop/direct+COPBENCH_COP_GROUPS=default µs", "cop/direct+COPBENCH_COP_GROUPS=ask µs",
            "pvm/direct µs", "cop modelled µs", "pvm ÷ cop", "cop floor µs", "cop ÷ floor"]
    for point in ("barrier/nodes:2", "reduce/double/size:8"):
        rs = [r for r in rows if r["point"] == point and r["nodes"] == "2"]
        if len(rs) != 1:
            sys.exit(f"FAIL: summary: {len(rs)} rows for {point} at 2 nodes")
        for k in cols:
            if not num(rs[0], k) > 0:
                sys.exit(f"FAIL: summary: {k} = {rs[0][k]} for {point}")
        print(point, {k: rs[0][k] for k in cols})
    rs = [r for r in rows if r["point"] == "barrier/nodes:4" and r["nodes"] == "4"]
    if len(rs) != 1 or not num(rs[0], "cop/direct+2level µs") > 0:
        sys.exit(f"FAIL: summary: no two-level barrier at 4 nodes: {rs}")


@command("pairing", "PAIRING_CSV", "ROW", "BACKEND", "NODES", "POINT", "DIVIDED_BY", "VALUE")
def pairing(path, row, backend, nodes, point, over, value):
    """seed_table_test.sh: the first pairing line of a row starting with ROW on BACKEND read
    POINT (÷ DIVIDED_BY, "" for none) at NODES nodes and printed VALUE; prints what differs."""
    lines = [r for r in csv.DictReader(open(path, newline="")) if r["row"].startswith(row) and r["backend"] == backend]
    if not lines:
        sys.exit(f"no pairing line for row '{row}' on {backend}")
    got = lines[0]
    want = {"nodes": nodes, "point": point, "divided by": over, "value": value}
    bad = {k: got[k] for k in want if got[k] != want[k]}
    if bad:
        print(f"got {bad}, want {want}")
        sys.exit(1)


@command("reference-manifest", "NEW_DIR", "OLD_DIR")
def reference_manifest(new, old):
    """reference_run_test.sh: NEW_DIR's manifest names OLD_DIR as its reference campaign, with tolerance 25%."""
    m = json.load(open(os.path.join(new, "manifest.json")))
    assert m.get("reference_campaign") == old, (m.get("reference_campaign"), old)
    assert m.get("tolerance") == "25%", m.get("tolerance")


@command("reference-verdicts", "TABLE_CSV")
def reference_verdicts(path):
    """reference_run_test.sh: tables/reference-campaign.csv has at least 2 rows, each with a
    verdict (faster, slower or same)."""
    rows = list(csv.DictReader(open(path)))
    assert len(rows) >= 2, rows
    verdicts = {"faster", "slower", "same"}
    for r in rows:
        v = [x for x in r.values() if x in verdicts]
        assert v, r
    print(f"{len(rows)} points compared with the reference run")


@command("strip-reference", "MANIFEST", "OUT_MANIFEST", "CAMPAIGN_FILE")
def strip_reference(src, dst, campaign_file):
    """report_reference_test.sh's fixture (asserts nothing): writes MANIFEST to OUT_MANIFEST
    without reference_campaign and tolerance, its `file` set to CAMPAIGN_FILE."""
    m = json.load(open(src))
    del m["reference_campaign"], m["tolerance"]
    m["file"] = campaign_file
    json.dump(m, open(dst, "w"), indent=2)


def emulation_rows(rows):
    """emulation-report: every operation at 2 and 4 nodes has one row with cop, floor, cop ÷
    floor (equal to cop / floor within 2 %), both CPU figures and the copd settings."""
    ops = ["barrier", "reduce/double/size:8", "broadcast/size:8", "broadcast/size:16384", "reduce/int/size:8192",
           "reduce/double/size:8192"]

    def num(r, k):
        v = r[k].replace(" !", "").rstrip("x")
        try:
            return float(v)
        except ValueError:
            sys.exit(f"FAIL: emulation table: {k} is '{r[k]}' at {r['nodes']} nodes, {r['operation']}")
    for n in ("2", "4"):
        for op in ops:
            rs = [r for r in rows if r["nodes"] == n and r["operation"] == op]
            if len(rs) != 1:
                sys.exit(f"FAIL: emulation table: {len(rs)} rows for {op} at {n} nodes")
            r = rs[0]
            for k in ("cop µs", "floor µs", "cop ÷ floor", "floor CPU µs/op/channel", "copd CPU µs/op/channel"):
                if not num(r, k) > 0:
                    sys.exit(f"FAIL: emulation table: {k} = {r[k]} at {n} nodes, {op}")
            if abs(num(r, "cop ÷ floor") / (num(r, "cop µs") / num(r, "floor µs")) - 1) > 0.02:
                sys.exit(f"FAIL: cop ÷ floor {r['cop ÷ floor']} is not cop / floor at {n} nodes, {op}")
            for k in ("copd I/O threads", "copd poll", "COP_POLL_US"):
                if not r[k] or r[k] == "—":
                    sys.exit(f"FAIL: emulation table: no {k} at {n} nodes, {op}")


@command("emulation-report", "EMULATION_CSV", "SUMMARY_CSV")
def emulation_report(table, summary_csv):
    """emulation_test.sh: the emulation table's rows (see emulation_rows) and, in the
    summary, the barrier at 2 and 4 nodes with a cop floor and cop ÷ floor above 0."""
    emulation_rows(list(csv.DictReader(open(table))))
    summary = list(csv.DictReader(open(summary_csv)))
    floors = [r for r in summary if r["benchmark"] == "barrier" and r.get("cop floor µs", "—") not in ("—", "")]
    if len(floors) != 2:
        sys.exit(f"FAIL: summary: the barrier rows at 2 and 4 nodes have no cop floor ({len(floors)} have)")
    for r in floors:
        if not float(r["cop ÷ floor"].rstrip("x")) > 0:
            sys.exit(f"FAIL: summary: cop ÷ floor {r['cop ÷ floor']}")


# --- tests/campaign/slurm_test.sh (against a real Slurm) -------------------------------

def slurm_point_context(d, p, r, m, log, subnet):
    """A point done as a Slurm job: its context names the launcher, who started the ranks and
    its job (the manifest's and the log's); a cop point a job-private stack on the COP network."""
    c = r["context"]
    by = "a pvmd of the allocated hosts" if ".pvm-" in p or ".cop-" in p else "mpirun inside the allocation"
    assert c["launcher"] == "slurm" and c["slurm_started_by"].startswith(by), c
    assert m["jobs"][p] == [c["slurm_job"]], (p, m["jobs"].get(p), c["slurm_job"])
    assert f"slurm job {c['slurm_job']}: point {p}" in log, p
    if ".cop" in p:
        n = int(p.split(".")[2][1:])
        s = re.fullmatch(r"job-private: copd ([0-9.]+):([0-9]+), copdrv channels 1\.\.(\d+) on (.*)", c["cop_stack"])
        assert s and ipaddress.ip_address(s[1]) in ipaddress.ip_network(subnet), (c, subnet)
        assert int(s[3]) == n and len(s[4].split()) == n, c
        assert "job-private COP stack" in c["slurm_started_by"], c
        for x in r["benchmarks"]:
            assert x.get("error_occurred") is not True, (p, x)


@command("slurm-first-run", "DIR", "JOB")
def slurm_first_run(d, job):
    """slurm_test.sh: in campaign DIR the point whose job JOB was cancelled is failed with
    Slurm's reason (CANCELLED) and the only status; the 15 others (mpi, armci, pvm, cop;
    barrier and echo at 2 and 3 nodes) are done as Slurm jobs (slurm_point_context)."""
    m = json.load(open(f"{d}/manifest.json"))
    st = json.load(open(f"{d}/status/barrier.mpi.n2.native.json"))
    assert st["status"] == "failed", st
    assert st["reason"].startswith(f"Slurm job {job} CANCELLED"), st["reason"]
    assert m["jobs"]["barrier.mpi.n2.native"] == [job], m.get("jobs")
    assert m["sessions"][0]["launcher"] == "slurm", m["sessions"]
    log = open(f"{d}/campaign.log").read()
    done = sorted(f[:-5] for f in os.listdir(f"{d}/raw"))
    want = sorted(f"{b}.{k}.n{n}.native" for b in ("barrier", "echo") for k in ("mpi", "armci", "pvm-direct-raw")
                  for n in (2, 3) if (b, k, n) != ("barrier", "mpi", 2))
    cop = sorted(p for p in done if ".cop-" in p)
    assert [(p.split(".")[0], p.split(".")[2]) for p in cop] == [("barrier", "n2"), ("barrier", "n3"), ("echo", "n2"),
                                                                  ("echo", "n3")], cop
    assert sorted(set(done) - set(cop)) == want, (done, want)
    subnet = os.environ["COPBENCH_COP_SUBNET"]
    for p in done:
        slurm_point_context(d, p, json.load(open(f"{d}/raw/{p}.json")), m, log, subnet)
    for p in os.listdir(f"{d}/status"):
        s = json.load(open(f"{d}/status/{p}"))
        assert p == "barrier.mpi.n2.native.json", s
    print("first run: cancelled point failed with Slurm's reason; 15 mpi/armci/pvm/cop points done as Slurm jobs")


@command("slurm-resume", "DIR", "JOB")
def slurm_resume(d, job):
    """slurm_test.sh: after --resume the point of cancelled job JOB ran again as a second job
    (both in the manifest, the second in its context), its failed status gone, every job's
    files removed."""
    m = json.load(open(f"{d}/manifest.json"))
    r = json.load(open(f"{d}/raw/barrier.mpi.n2.native.json"))
    jobs = m["jobs"]["barrier.mpi.n2.native"]
    assert len(jobs) == 2 and jobs[0] == job and r["context"]["slurm_job"] == jobs[1], (jobs, r["context"])
    assert not os.path.exists(f"{d}/status/barrier.mpi.n2.native.json")
    assert not [f for f in os.listdir(f"{d}/jobs")], os.listdir(f"{d}/jobs")  # the jobs' files are removed
    print("resume: the cancelled point ran again as job", jobs[1])


@command("slurm-cancelled", "DIR", "JOB")
def slurm_cancelled(d, job):
    """slurm_test.sh: campaign DIR has one status, failed with Slurm's reason for JOB (CANCELLED)."""
    st = [json.load(open(f"{d}/status/{f}")) for f in os.listdir(f"{d}/status")]
    assert len(st) == 1 and st[0]["status"] == "failed", st
    assert st[0]["reason"].startswith(f"Slurm job {job} CANCELLED"), st[0]["reason"]
    print("cancelled cop job", job, "failed:", st[0]["reason"])


@command("slurm-two-level", "DIR")
def slurm_two_level(d):
    """slurm_test.sh: the barrier at 3 nodes, 2 channels per controller, ran on a job-private
    stack of a level-2 copd over two level-1 copd, all on the COP network
    (COPBENCH_COP_SUBNET), copdrv on the 3 hosts; no sample in error."""
    subnet = ipaddress.ip_network(os.environ["COPBENCH_COP_SUBNET"])
    r = json.load(open(f"{d}/raw/barrier.cop-direct.n3.native.k2.json"))
    c = r["context"]
    s = re.fullmatch(r"job-private: copd-l2 ([0-9.]+):\d+, level-1 copd ([0-9.]+):\d+ ([0-9.]+):\d+ of 2 channels, "
                     r"copdrv on (.*)", c["cop_stack"])
    assert s and all(ipaddress.ip_address(s[i]) in subnet for i in (1, 2, 3)) and len(s[4].split()) == 3, c
    assert c["cop_per_controller"] == 2 and c["launcher"] == "slurm", c
    assert r["benchmarks"] and all(x.get("error_occurred") is not True for x in r["benchmarks"]), r["benchmarks"]
    print("two levels in a Slurm job:", c["cop_stack"])


@command("slurm-in-kind", "SLURM_DIR", "DIRECT_DIR")
def slurm_in_kind(a, b):
    """slurm_test.sh: every point of SLURM_DIR has the same benchmarks in DIRECT_DIR (run
    without Slurm), no sample in error on either side; DIRECT_DIR has all 16 points. The
    benchmarks' names are compared as sets: the window method leaves out a repetition whose
    calls were all invalid (a rank late at its start instant on a loaded machine), so the
    count of repetitions may differ while the benchmarks are the same."""
    n = 0
    for p in sorted(os.listdir(f"{a}/raw")):
        ra, rb = json.load(open(f"{a}/raw/{p}")), json.load(open(f"{b}/raw/{p}"))
        assert rb["context"].get("launcher") != "slurm"
        na = sorted({x["name"] for x in ra["benchmarks"]})
        nb = sorted({x["name"] for x in rb["benchmarks"]})
        assert na == nb and na, (p, na, nb)
        for x in ra["benchmarks"] + rb["benchmarks"]:
            assert x.get("error_occurred") is not True, (p, x)
        n += 1
    assert len(os.listdir(f"{b}/raw")) == 16, os.listdir(f"{b}/raw")  # every point
    print(f"in kind: {n} points through Slurm match the same points without it; all 16 points run without it")


# --- tests/cluster (emulated clusters, as root) ---------------------------------------

@command("move-mount", "SOURCE", "PID", "TARGET")
def move_mount(src, pid, dst):
    """user_test.sh's step (asserts nothing): clones directory SOURCE as a detached mount
    (open_tree) and moves it to TARGET in the mount namespace of process PID (setns,
    move_mount); fails naming the call that failed."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    AT_FDCWD, OPEN_TREE_CLONE, OPEN_TREE_CLOEXEC, MOVE_MOUNT_F_EMPTY_PATH = -100, 1, 0o2000000, 4
    fd = libc.syscall(428, AT_FDCWD, src.encode(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)  # open_tree
    if fd < 0:
        sys.exit(f"open_tree {src}: {os.strerror(ctypes.get_errno())}")
    ns = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY)
    if libc.setns(ns, 0x00020000) != 0:
        sys.exit(f"setns: {os.strerror(ctypes.get_errno())}")
    if libc.syscall(429, fd, b"", AT_FDCWD, dst.encode(), MOVE_MOUNT_F_EMPTY_PATH) != 0:  # move_mount
        sys.exit(f"move_mount {dst}: {os.strerror(ctypes.get_errno())}")


@command("user-campaign", "DIR")
def user_campaign(d):
    """user_test.sh: the user's campaign DIR has its 8 points done (2 each of mpi, armci, pvm,
    cop), no status; each a Slurm job of the manifest, cop's on a job-private COP stack, no
    sample in error. Prints the job ids."""
    m = json.load(open(f"{d}/manifest.json"))
    done = sorted(f[:-5] for f in os.listdir(f"{d}/raw"))
    assert len(done) == 8 and not os.listdir(f"{d}/status"), (done, os.listdir(f"{d}/status"))
    for b in ("mpi", "armci", "pvm", "cop"):
        assert sum(1 for p in done if p.split(".")[1].split("-")[0] == b) == 2, (b, done)
    jobs = []
    for p in done:
        r = json.load(open(f"{d}/raw/{p}.json"))
        c = r["context"]
        assert c["launcher"] == "slurm" and m["jobs"][p] == [c["slurm_job"]], (p, c)
        if ".cop" in p:
            assert "job-private COP stack" in c["slurm_started_by"] and c["cop_stack"].startswith("job-private: copd "), c
        assert r["benchmarks"] and all(x.get("error_occurred") is not True for x in r["benchmarks"]), (p, r["benchmarks"])
        jobs.append(c["slurm_job"])
    print(" ".join(jobs))


@command("inventory-like-example", "INVENTORY", "EXAMPLE")
def inventory_like_example(inventory, example):
    """own_roots_test.sh: the cluster's INVENTORY is EXAMPLE (example-cluster.yml) filled in:
    roots and homes not shared, the same checkout, install and log paths, node1-3 as compute."""
    import yaml
    inv, example = (yaml.safe_load(open(p)) for p in (inventory, example))
    v, e = inv["all"]["vars"], example["all"]["vars"]
    assert v["copbench_shared_root"] is False and v["copbench_shared_home"] is False, "roots or homes shared"
    for key in ("copbench_checkout", "copbench_suite_install", "copbench_log_dir"):
        assert v[key] == e[key], f"{key}: {v[key]!r}, the example has {e[key]!r}"
    assert sorted(inv["all"]["children"]["compute"]["hosts"]) == ["node1", "node2", "node3"]


@command("install-record", "RECORD_JSON", "MODE", "COMMIT")
def install_record(record, mode, commit):
    """own_roots_test.sh: a host's install record (the JSON text RECORD_JSON, not a file)
    names MODE and COMMIT; exits 1 silently otherwise."""
    r = json.loads(record)
    sys.exit(r["mode"] != mode or r["commit"] != commit)


@command("install-manifest", "MANIFEST", "MODE", "HOSTS")
def install_manifest(path, mode, hosts):
    """own_roots_test.sh: the campaign's manifest records install MODE for exactly the
    space-separated HOSTS, each with MODE and the campaign's commit."""
    m, hosts = json.load(open(path)), hosts.split()
    i = m["install"]
    assert i["mode"] == mode, i
    assert sorted(i["hosts"]) == sorted(hosts), i
    assert all(h["mode"] == mode and h["commit"] == m["commit"] for h in i["hosts"].values()), i


@command("plan-json", "JSON", "TSV")
def plan_json(json_path, tsv_path):
    """plan_test.sh: `copbench-daemon plan --json` (JSON) lists the same daemons, in the
    same order, with the same fields and arguments as the tab-separated plan (TSV)."""
    daemons = json.load(open(json_path))
    lines = [line.split("\t") for line in open(tsv_path).read().splitlines()]
    assert len(daemons) == len(lines) > 0, f"{len(daemons)} daemons in JSON, {len(lines)} lines"
    for d, f in zip(daemons, lines):
        want = [d["name"], d["host"], d["address"], d["program"], d["role"], str(d["cntno"]), str(d["chno"]),
                str(d["node"])] + d["args"]
        assert want == f, f"JSON {want} is not the line {f}"


@command("every-microbenchmark-campaign", "LIST_JSON")
def every_microbenchmark_campaign(path):
    """every_microbenchmark_test.sh's fixture (asserts nothing): prints the campaign of every
    workload of kind benchmark in LIST_JSON (`copbench list --json`) once on cop, pvm, mpi
    and armci at 16 nodes, at its smoke sizes."""
    workloads = [w for w in json.load(open(path))["workloads"] if w["kind"] == "benchmark"]
    print("# Written by tests/cluster/every_microbenchmark_test.sh from `copbench list --json`.")
    print("name: every-microbenchmark")
    print("description: Every microbenchmark once on cop, pvm, mpi and armci at 16 emulated hosts.")
    print("profiles: [native]")
    print("defaults: {reps: 1, max_reps: 1, iters: 2, warmup: 1, timeout: 240}")
    print("runs:")
    for w in workloads:
        print(f"  - benchmark: {w['name']}")
        print("    backends: [cop, pvm, mpi, armci]")
        print("    routes: [direct]")
        print("    encoding: raw")
        print("    nodes: 16")
        if w["smoke"]["sizes"]:
            print(f"    sizes: {json.dumps(w['smoke']['sizes'])}")


def campaign_points(directory):
    """Every point of a campaign directory: {point: (status, data)}, a result making it "done"."""
    campaign = {}
    for path in glob.glob(os.path.join(directory, "status", "*.json")) + glob.glob(os.path.join(directory, "raw", "*.json")):
        point = os.path.basename(path)[:-5]
        data = json.load(open(path))
        if "/raw/" in path:
            campaign[point] = ("done", data)
        elif point not in campaign:
            campaign[point] = (data["status"], data)
    return campaign


@command("every-microbenchmark-points", "DIR", "LIST_JSON")
def every_microbenchmark_points(directory, listing):
    """every_microbenchmark_test.sh: every point of campaign DIR is done with results where
    LIST_JSON says its backend offers the benchmark, "not offered" where it does not, and
    every offered pair on cop, pvm, mpi and armci ran; at least one point done."""
    catalog = json.load(open(listing))
    offered = {(w["name"], b["name"]): b["name"] in w["offered_by"]
               for w in catalog["workloads"] if w["kind"] == "benchmark" for b in catalog["backends"]}
    problems, done, not_offered = [], 0, 0
    campaign = campaign_points(directory)
    for point, (status, data) in sorted(campaign.items()):
        bench, backend = point.split(".")[0], point.split(".")[1].split("-")[0]
        if (bench, backend) not in offered:
            problems.append(f"{point}: {bench} on {backend} is not in copbench list")
        elif status == "done":
            done += 1
            if not offered[(bench, backend)]:
                problems.append(f"{point}: ran, but {backend} does not offer {bench}")
            if not data.get("benchmarks"):
                problems.append(f"{point}: no benchmark results in raw/{point}.json")
        elif status == "not offered":
            not_offered += 1
            if offered[(bench, backend)]:
                problems.append(f"{point}: not offered, but copbench list offers {bench} on {backend}")
        else:
            problems.append(f"{point}: {status}: {data.get('reason', '')}")
    want = {(b, k) for (b, k), o in offered.items() if o and k in ("cop", "pvm", "mpi", "armci")}
    ran = {(p.split(".")[0], p.split(".")[1].split("-")[0]) for p, (s, _) in campaign.items() if s == "done"}
    benches = {p.split(".")[0] for p in campaign}
    for b, k in sorted(want):
        if b in benches and (b, k) not in ran:
            problems.append(f"{b} on {k} is offered but did not run")
    print(f"{len(campaign)} points: {done} done, {not_offered} not offered")
    for p in problems:
        print("  " + p)
    sys.exit(1 if problems or done == 0 else 0)


def parser():
    """The command line: one subparser per registered check, its help the check's docstring."""
    top = argparse.ArgumentParser(prog="checks.py", description=__doc__.split("\n\n")[0],
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    subs = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, params, function in COMMANDS:
        doc = function.__doc__ or ""
        first = re.split(r"\.(?:\s|$)", " ".join(doc.split()), maxsplit=1)[0]
        sub = subs.add_parser(name, help=first.replace("%", "%%"), description=doc,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
        for param in params:
            if param.endswith("..."):
                sub.add_argument(param[:-3].lower(), metavar=param[:-3], nargs="+")
            else:
                sub.add_argument(param.lower(), metavar=param)
        sub.set_defaults(run=function, params=[p.rstrip(".").lower() for p in params])
    return top


def main(argv):
    args = parser().parse_args(argv)
    args.run(*(getattr(args, p) for p in args.params))


if __name__ == "__main__":
    main(sys.argv[1:])
