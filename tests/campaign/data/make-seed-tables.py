#!/usr/bin/env python3
"""Writes tests/campaign/data/seed-tables: a fixed campaign directory holding every point the
seed tables of results/reference read, on cop (direct), pvm (direct, raw), mpi and armci,
with "not offered" status files where `copbench list` says a backend lacks the benchmark.

Medians are made up and distinct per point, backend and node count, so a row that reads or
divides the wrong point prints another number (and names another point in its pairing dump).
Decoys sit beside the right points: the plain AllFence beside the windowed ones, the native
and ticket locks beside the server queue and MCS locks, the barrier alone beside the combined
fence + barrier. Run it again only to change the fixture; the test compares the report of
this directory with seed-tables-expected/. Which backend lacks which benchmark is read from
`copbench list --json` (usage: make-seed-tables.py [COPBENCH], default build/bin/copbench),
never written here. The committed fixture was made when cop offered no echo, bandwidth or
ring (before Table IV's cop_write & cop_read echo): made again it holds cop's points of those
three, and seed-tables-expected/ must be made again with it.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import zlib

OUT = pathlib.Path(__file__).resolve().parent / "seed-tables"
PROFILE = "native"
VARIANTS = {  # backend -> (route, encoding) as the runner writes them
    "cop": ("direct", ""),
    "pvm": ("direct", "raw"),
    "mpi": ("default", ""),
    "armci": ("default", ""),
}


def not_offered(copbench):
    """benchmark -> the backends of VARIANTS that do not offer it, as `copbench list --json`
    says (offered_by): the catalog (baselines/backends.json) and the workloads' needs."""
    listing = json.loads(subprocess.run([copbench, "list", "--json"], check=True, capture_output=True, text=True).stdout)
    return {w["name"]: set(VARIANTS) - set(w["offered_by"]) for w in listing["workloads"]}


NOT_OFFERED = {}  # filled by main() from not_offered()


def made_up(*key, lo=5.0, hi=5000.0):
    """A value in [lo, hi) fixed by the key (crc32), with four significant digits."""
    h = zlib.crc32("|".join(map(str, key)).encode()) / 2**32
    return float(f"{lo + (hi - lo) * h:.4g}")


def point_id(bench, backend, nodes):
    route, enc = VARIANTS[backend]
    mode = backend if backend in ("mpi", "armci") else "-".join(x for x in (backend, route, enc) if x)  # as point_id
    return f"{bench}.{mode}.n{nodes}.{PROFILE}"


def write_raw(bench, backend, nodes, points):
    """points: list of (run_name, median_us, counters)."""
    route, enc = VARIANTS[backend]
    ctx = {"backend": backend, "route": route, "encoding": enc, "link_profile": PROFILE,
           "copbench_benchmark": bench, "nodes": str(nodes), "tasks_per_node": "1",
           "campaign": "seed-tables", "campaign_point": point_id(bench, backend, nodes)}
    benchmarks = []
    for run_name, median, counters in points:
        b = {"name": run_name + "_median", "run_name": run_name, "run_type": "aggregate",
             "aggregate_name": "median", "real_time": median, "cpu_time": median, "time_unit": "us",
             "iterations": 30, "repetitions": 3, "ci_met": True, "nodes": float(nodes)}
        b.update(counters)
        if backend == "cop":  # the controller's modelled time, as the cop worker writes it
            b["modelled_us"] = round(median / 10, 4)
        benchmarks.append(b)
    path = OUT / "raw" / (point_id(bench, backend, nodes) + ".json")
    path.write_text(json.dumps({"context": ctx, "benchmarks": benchmarks}, indent=1, sort_keys=True) + "\n")


def write_status(bench, backend, nodes):
    route, enc = VARIANTS[backend]
    route = "" if backend in ("mpi", "armci") else route  # a backend with one way of working has no route
    st = {"backend": backend, "benchmark": bench, "encoding": enc, "nodes": nodes,
          "point": point_id(bench, backend, nodes), "profile": PROFILE,
          "reason": f"{backend} does not offer {bench}", "route": route, "sizes": "", "status": "not offered"}
    (OUT / "status" / (point_id(bench, backend, nodes) + ".json")).write_text(json.dumps(st, indent=1, sort_keys=True) + "\n")


def simple(bench, names, nodes_list, counters=lambda name, backend, nodes: {}, backends=VARIANTS):
    """A benchmark whose points are `names(nodes)`, medians made up, at every node count."""
    for backend in backends:
        for n in nodes_list:
            if backend in NOT_OFFERED.get(bench, ()):
                write_status(bench, backend, n)
                continue
            write_raw(bench, backend, n, [(name, made_up(name, backend, n), counters(name, backend, n)) for name in names(n)])


def main():
    # The copbench whose list to follow: the argument, else the build tree's.
    NOT_OFFERED.update(not_offered(sys.argv[1] if len(sys.argv) > 1 else
                                   str(pathlib.Path(__file__).resolve().parents[3] / "build" / "bin" / "copbench")))
    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "raw").mkdir(parents=True)
    (OUT / "status").mkdir()
    tables = ["thesis-table3", "thesis-table4", "parastation2-table3", "parastation2-table4", "ncube-table1",
              "ncube-table2", "ncube-table3", "libsplitc-table8", "libsplitc-table9", "libsplitc-table10",
              "libsplitc-table11", "armci-ratios"]
    manifest = {"campaign": "seed-tables", "description": "Every point the seed tables read (made-up medians): the pairing test.",
                "compare": tables, "main_table": "armci-ratios", "profiles": [PROFILE], "created": "2026-11-23T00:00:00+0000",
                "commit": "fixture", "cluster": {"name": "local", "size": 8, "hosts": ["vm"], "hostfile": ""},
                "sessions": []}
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")

    # ParaStation2 Table 3, thesis Table IV row 5.
    simple("echo", lambda n: ["echo/size:4", "echo/size:16384"], [2])
    sizes = [64, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
    simple("bandwidth", lambda n: [f"bandwidth/size:{s}" for s in sizes], [2],
           lambda name, b, n: {"bytes": float(name.split(":")[1]), "MBps": made_up(name, b, "MBps", lo=1, hi=100),
                               "peak_MBps": made_up("peak", b, lo=50, hi=120), "n_half_bytes": made_up("nhalf", b, lo=256, hi=4096)})
    # NCUBE Tables 1-2: fit and t'comm counters of the ring run.
    simple("ring", lambda n: [f"ring/size:{s}" for s in (8, 64, 256, 1024)], [4],
           lambda name, b, n: {"bytes": float(name.split(":")[1]), "t_comm_word_us": made_up(name, b, "word", lo=1, hi=300),
                               "fit_f_us": made_up("f", b, lo=10, hi=500), "fit_x_us_per_byte": made_up("x", b, lo=0.001, hi=3)})
    # Libsplit-C Tables 8-11 (4 and 8 nodes), thesis Tables III (nearest to 64: 8) and IV (5).
    simple("barrier", lambda n: [f"barrier/nodes:{n}"], [4, 5, 8])
    simple("broadcast", lambda n: ["broadcast/size:8", "broadcast/size:16384"], [4, 5, 8],
           lambda name, b, n: {"bytes": float(name.split(":")[1])})
    simple("multicast", lambda n: ["multicast/size:16384"], [5], lambda name, b, n: {"bytes": 16384.0})
    simple("reduce", lambda n: ["reduce/int/size:4", "reduce/int/size:8", "reduce/double/size:8", "reduce/double/size:8192"],
           [4, 5, 8], lambda name, b, n: {"bytes": float(name.split(":")[-1])})
    simple("scan", lambda n: ["scan/size:8"], [4, 8], lambda name, b, n: {"bytes": 8.0})
    # Thesis Table III: cop has no shared write (only a task address space's owner writes it).
    for b in VARIANTS:
        names = ["shared/read", "shared/rmw"] + ([] if b == "cop" else ["shared/write"])
        write_raw("shared", b, 2, [(name, made_up(name, b, 2), {}) for name in names])

    # Seed 004 ch. 3-4: fence points. The best window is K = 2, neither the first nor the last.
    fence = {
        ("mpi", 4): {"fence/put+fence": 11.0, "fence/puts+allfence": 21.0, "fence/puts+sequential-fences": 36.0,
                     "fence/puts+allfence-window:1": 34.0, "fence/puts+allfence-window:2": 24.0,
                     "fence/puts+allfence-window:3": 27.0, "fence/puts+allfence+barrier": 52.0},
        ("mpi", 8): {"fence/put+fence": 13.0, "fence/puts+allfence": 41.0, "fence/puts+sequential-fences": 90.0,
                     "fence/puts+allfence-window:1": 88.0, "fence/puts+allfence-window:2": 45.0,
                     "fence/puts+allfence-window:4": 50.0, "fence/puts+allfence-window:7": 60.0,
                     "fence/puts+allfence+barrier": 120.0},
        ("armci", 4): {"fence/put+fence": 7.0, "fence/puts+allfence": 19.0, "fence/puts+sequential-fences": 23.0,
                       "fence/puts+allfence+barrier": 64.0, "fence/puts+fence-barrier": 32.0},
        ("armci", 8): {"fence/put+fence": 9.0, "fence/puts+allfence": 37.0, "fence/puts+sequential-fences": 47.0,
                       "fence/puts+allfence+barrier": 150.0, "fence/puts+fence-barrier": 60.0},
    }
    for b in VARIANTS:
        for n in (4, 8):
            if (b, n) in fence:
                write_raw("fence", b, n, [(name, v, {}) for name, v in fence[(b, n)].items()])
            else:
                write_status("fence", b, n)
    # Seed 004 ch. 5: locks, 2-4 contenders; native and ticket locks are decoys.
    for bench, kind in (("lock", "native"), ("ticket-lock", "ticket"), ("queue-lock", "server-queue"), ("mcs-lock", "mcs")):
        simple(bench, lambda n, kind=kind: [f"lock/{kind}/nodes:{n}"], [2, 3, 4])

    # ParaStation2 Table 4 (matmul; cop runs n = 500 only) and NCUBE Table 3 (halo).
    for b in VARIANTS:
        for n in (1, 2, 4):
            ns = [500] if b == "cop" else [1000, 2000]
            write_raw("matmul", b, n, [(f"matmul/n:{m}", made_up("matmul", m, b, n, lo=1e5, hi=1e7),
                                        {"mflops": made_up("mflops", m, b, n, lo=100, hi=3000),
                                         "uniprocessor_mflops": made_up("uni", m, b, lo=500, hi=900),
                                         "efficiency": made_up("eff", m, b, n, lo=0.5, hi=1)}) for m in ns])
        for n in (1, 2, 3, 4):
            write_raw("halo", b, n, [(f"halo/image:{i}/frames:100", made_up("halo", i, b, n, lo=1e3, hi=1e5),
                                      {"frac_computation": made_up("frac", i, b, n, lo=0.3, hi=1),
                                       "speedup": made_up("speedup", i, b, n, lo=0.5, hi=4)}) for i in (32, 64, 128)])


if __name__ == "__main__":
    main()
