#!/usr/bin/env bash
# what_if_test.sh COPBENCH SOURCE_DIR: suite/campaigns/what-if-ci.yml (what-if.yml at CI
# size) run by `copbench campaign run`, which ends with the report: tables/what-if.csv
# has a simulated row for every platform, operation and node count, each with the COP's
# (sim-cop) and Open MPI's (smpi) median read back from the raw result files and the
# ratio smpi ÷ sim-cop computed from them; the published reference rows, each with a
# source; tables/what-if-crossover.csv one row per platform and operation, its crossover
# agreeing with the ratios; the ratio and time plots drawn; smpi's results name the
# algorithms chosen in place of the selector's (smpi_allreduce).
set -u
copbench=$1 src=$2
out=$(mktemp -d /tmp/copbench-what-if-test.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
log=$("$copbench" campaign run "$src/suite/campaigns/what-if-ci.yml" --results "$out" --quiet 2>&1) ||
  fail "campaign run exited $?: $log"
echo "$log"
dir=$(sed -n 's/^results: //p' <<<"$log")
[ -d "$dir" ] || fail "no results directory in: $log"
grep -q "^report: $dir/index.md" <<<"$log" || fail "the run did not end with its report"
python3 - "$dir" <<'PY' || exit 1
import csv, glob, json, os, sys
d = sys.argv[1]
bad = []
# The medians as the raw files hold them: (backend, platform, operation, bytes, nodes) -> us.
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
rows = list(csv.DictReader(open(os.path.join(d, "tables", "what-if.csv"))))
sim = [r for r in rows if r["row"] == "simulated"]
pub = [r for r in rows if r["row"].startswith("published: ")]
want = {(p, op, n) for p in ("present", "thesis")
        for op, ns in (("barrier", (2, 8, 64)), ("reduce/double 8B", (2, 8, 64)), ("reduce/int 8B", (2, 8, 64)),
                       ("broadcast 8B", (2, 8, 64)),
                       ("broadcast 16KB", (2, 8)))
        for n in ns}
got = {(r["network"], r["operation"], int(r["nodes"])) for r in sim}
if got != want:
    bad.append(f"simulated rows {sorted(got ^ want)} missing or extra")
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
if not pub:
    bad.append("no published reference rows")
for r in pub:
    if not r["source"].strip() or float(r["in-network µs"]) <= 0:
        bad.append(f"published row without source or latency: {r}")
cross = list(csv.DictReader(open(os.path.join(d, "tables", "what-if-crossover.csv"))))
if {(r["network"], r["operation"]) for r in cross} != {(p, op) for p, op, _ in want}:
    bad.append(f"crossover rows: {[(r['network'], r['operation']) for r in cross]}")
for c in cross:
    ratios = sorted((int(r["nodes"]), float(r["software ÷ in-network"].rstrip("x"))) for r in sim
                    if (r["network"], r["operation"]) == (c["network"], c["operation"]))
    crosses = any((a[1] > 1) != (b[1] > 1) for a, b in zip(ratios, ratios[1:]))
    if crosses == c["crossover"].startswith("none"):
        bad.append(f"crossover of {c['network']} {c['operation']}: {c['crossover']} against ratios {ratios}")
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
PY
