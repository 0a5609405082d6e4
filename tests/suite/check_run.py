#!/usr/bin/env python3
"""check_run.py COPBENCH run BENCH --backend B --nodes N [options...]

Runs one `copbench run` point with --out into a temporary file (its output passes
through, so a test may also match it) and checks what the file says, not only the exit
code: the context names the backend, nodes, tasks per node, route and timing method as
asked (and, with --platform, says the run was simulated on that platform); every requested size has its points (and a sizeless benchmark none); every
measured value is finite, every time positive (a stddev may be 0); each point's nodes
counter is the nodes asked for. Exits with the run's code when it failed, 1 when a check
fails (one "CHECK FAILED:" line per failure, which the tests also match), 0 otherwise.
"""
import json
import math
import os
import subprocess
import sys
import tempfile


def option(args, name, default=None):
    """The value of `name VALUE` or `name=VALUE` in args."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return default


def check_context(ctx, args, bench, failures):
    expected = {
        "backend": option(args, "--backend"),
        "nodes": option(args, "--nodes"),
        "tasks_per_node": option(args, "--tasks-per-node", "1"),
        "copbench_benchmark": bench,
    }
    if option(args, "--route"):
        expected["route"] = option(args, "--route")
    for key, want in expected.items():
        if str(ctx.get(key)) != want:
            failures.append(f"context {key} is {ctx.get(key)!r}, expected {want!r}")
    for key in ("route", "timer", "timing_method", "host_name", "commit", "link_profile"):
        if not ctx.get(key):
            failures.append(f"context has no {key}")
    check_simulated(ctx, option(args, "--platform"), failures)


def check_simulated(ctx, platform, failures):
    """A run with --platform (smpi, sim-cop) is simulated: the context says so, names the
    platform (and, for smpi, Open MPI's collective selector), and its clock is the
    simulation's (MPI_Wtime, the S4U engine's), never the wall clock;
    a run without one says nothing of a platform."""
    if platform is None:
        for key in ("simulated", "platform"):
            if key in ctx:
                failures.append(f"context has {key} {ctx[key]!r}, yet no --platform was given")
        return
    # smpi: Open MPI's collectives under smpirun, clock MPI_Wtime; sim-cop: its own S4U
    # simulation of the COP's serial links, clock the engine's.
    sim_cop = ctx.get("backend") == "sim-cop"
    expected = {"simulated": "true", "platform": platform}
    if not sim_cop:
        expected["coll_selector"] = "ompi"
    for key, want in expected.items():
        if str(ctx.get(key)) != want:
            failures.append(f"context {key} is {ctx.get(key)!r}, expected {want!r}")
    if sim_cop and "serial" not in str(ctx.get("cop_links", "")):
        failures.append(f"context cop_links is {ctx.get('cop_links')!r}, expected the COP's serial links")
    clock = "simgrid::s4u::Engine::get_clock" if sim_cop else "MPI_Wtime"
    if not str(ctx.get("timer", "")).startswith(clock):
        failures.append(f"context timer is {ctx.get('timer')!r}, expected {clock} (simulated time)")


def check_values(points, nodes, failures):
    for p in points:
        name = p.get("name", "?")
        for key in ("real_time", "cpu_time"):
            v = p.get(key)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                failures.append(f"{name}: {key} is {v!r}, not a finite number")
            elif key == "real_time" and p.get("aggregate_name") not in ("stddev", "cv") and v <= 0:
                failures.append(f"{name}: real_time {v} is not positive")
            elif v < 0:
                failures.append(f"{name}: {key} {v} is negative")
        for key, v in p.items():
            if key not in ("real_time", "cpu_time") and isinstance(v, float) and not math.isfinite(v):
                failures.append(f"{name}: {key} is {v}")
        if "nodes" in p and int(p["nodes"]) != int(nodes):
            failures.append(f"{name}: nodes counter {p['nodes']}, expected {nodes}")


def size_bytes(text):
    """'8' -> 8, '8K' -> 8192, '1M' -> 1048576, as copbench reads --sizes."""
    scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


def check_sizes(points, sizes, failures):
    names = [p.get("name", "") for p in points]
    if sizes is None:
        sized = [n for n in names if "size:" in n]
        if sized:
            failures.append(f"no sizes were asked for, yet points have sizes: {sized[:3]}")
        return
    for size in sizes.split(","):
        tag = f"size:{size_bytes(size)}"
        if not any(n.split("_")[0].split("/").count(tag) for n in names):
            failures.append(f"no point for requested size {size} (looked for '{tag}' in {sorted(set(names))[:6]})")


def main(argv):
    if len(argv) < 3 or argv[1] != "run":
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv, argv[3:]
    with tempfile.TemporaryDirectory(prefix="copbench-check-") as tmp:
        out = os.path.join(tmp, "point.json")
        rc = subprocess.call(cmd + ["--out", out])
        if rc != 0:
            print(f"CHECK FAILED: copbench exited with {rc}", file=sys.stderr)
            return rc
        with open(out) as f:
            j = json.load(f)
    failures = []
    check_context(j.get("context", {}), args, argv[2], failures)
    points = [p for p in j.get("benchmarks", []) if p.get("run_type") in ("iteration", "aggregate")]
    if not points:
        failures.append("the file has no points")
    check_values(points, option(args, "--nodes"), failures)
    check_sizes(points, option(args, "--sizes"), failures)
    for f in failures:
        print(f"CHECK FAILED: {f}", file=sys.stderr)
    print(f"check_run: {len(points)} values checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
