#!/usr/bin/env python3
"""The inventory of an emulated cluster with its own roots (scripts/cluster up --own-roots).

It is ansible/inventory/example-cluster.yml, the file a site copies, with the emulated
cluster filled in: its hosts (all.children, as scripts/cluster writes them for the
shared mode) and what only an emulated host has (ssh through the cluster's own config,
root, its networks, keys, Slurm under /run). Every other setting is the example's, so a
test of --own-roots runs the example's choices (suite install mode, checkout and build
paths, separate homes).
Usage: cluster-inventory.py EXAMPLE GENERATED OUT KEY=VALUE...
  GENERATED  the shared-mode inventory scripts/cluster wrote for this cluster
  KEY=VALUE  further settings of this cluster (e.g. copbench_git_url), set last
"""
import os
import sys

import yaml

# The example's settings that stay as the example has them: they are the site's
# choices this mode exists to test. Everything else the emulated cluster sets wins.
SITE_CHOICES = {
    "copbench_checkout", "copbench_build", "copbench_shared_root", "copbench_shared_home",
    "copbench_suite_install", "copbench_log_dir", "copbench_install_packages",
}
# The emulated hosts' own /run (a tmpfs of each host, gone at down), which
# scripts/cluster status looks at.
EMULATED = {"copbench_run_dir": "/run/copbench"}


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    example_path, generated_path, out = argv[1:4]
    with open(example_path) as f:
        example = yaml.safe_load(f)
    with open(generated_path) as f:
        generated = yaml.safe_load(f)
    extra = dict(a.split("=", 1) for a in argv[4:])
    site = example["all"].get("vars") or {}
    emulated = generated["all"]["vars"]
    merged = dict(site)
    merged.update({k: v for k, v in emulated.items() if k not in SITE_CHOICES})
    merged.update(EMULATED)
    merged.update(extra)
    # Written out, for scripts/cluster status (which looks for the daemons there).
    merged.setdefault("copbench_build", merged.get("copbench_checkout", "/opt/copbench") + "/build")
    for key, want in (("copbench_shared_root", False), ("copbench_shared_home", False)):
        if merged.get(key) is not want:
            sys.exit(f"{example_path}: {key} must be {str(want).lower()} for hosts with their own roots")
    inventory = {"all": {"vars": merged, "children": generated["all"]["children"]}}
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# Inventory of the local emulated cluster with its own roots (scripts/cluster up --own-roots;\n"
                f"# do not edit): {os.path.abspath(example_path)} with this cluster's hosts,\n"
                f"# networks and access filled in.\n")
        yaml.safe_dump(inventory, f, default_flow_style=False, sort_keys=False)
    os.replace(tmp, out)


if __name__ == "__main__":
    main(sys.argv)
