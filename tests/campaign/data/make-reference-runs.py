#!/usr/bin/env python3
"""Writes the fixed directories reference-old/ and reference-new/ (report_reference_test.sh):
two campaigns of a few points taken from small-run/, the second naming the first as its
`reference:` with a 10 % tolerance, each point's median scaled so every verdict occurs:

  barrier.mpi.n2     x 1.50  slower
  barrier.mpi.n3     x 0.50  faster
  echo.mpi.n2        x 1.05  same within 10 % (three sizes)
  barrier.armci.n2   only in reference-old: missing in new
  barrier.pvm-direct-raw.n2  only in reference-new: missing in old
"""
import json
import pathlib
import shutil

here = pathlib.Path(__file__).resolve().parent
src = here / "small-run" / "raw"
old_points = ["barrier.mpi.n2.native", "barrier.mpi.n3.native", "echo.mpi.n2.native", "barrier.armci.n2.native"]
new_points = {"barrier.mpi.n2.native": 1.5, "barrier.mpi.n3.native": 0.5, "echo.mpi.n2.native": 1.05,
              "barrier.pvm-direct-raw.n2.native": 1.0}


def manifest(name, extra):
    m = {"campaign": name, "description": f"fixed campaign '{name}' for the reference comparison test",
         "created": "2026-11-22T00:00:00+0000", "commit": "fixture", "profiles": ["native"], "compare": [],
         "main_table": "", "file": "/nonexistent/" + name + ".yml"}
    m.update(extra)
    return json.dumps(m, indent=2, sort_keys=True) + "\n"


def write(dirname, points, extra, campaign_yml):
    d = here / dirname
    shutil.rmtree(d, ignore_errors=True)
    (d / "raw").mkdir(parents=True)
    (d / "manifest.json").write_text(manifest(dirname, extra))
    (d / "campaign.yml").write_text(campaign_yml)
    for p, factor in points.items():
        j = json.loads((src / (p + ".json")).read_text())
        for b in j["benchmarks"]:
            if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
                b["real_time"] = round(b["real_time"] * factor, 6)
        (d / "raw" / (p + ".json")).write_text(json.dumps(j, indent=2) + "\n")


runs = "runs:\n  - {benchmark: barrier, backends: [mpi], nodes: 2}\n"
write("reference-old", {p: 1.0 for p in old_points}, {}, "name: reference-old\n" + runs)
write("reference-new", new_points, {"reference_campaign": "../reference-old", "tolerance": "10%"},
      "name: reference-new\nreference: ../reference-old\ntolerance: 10%\n" + runs)
