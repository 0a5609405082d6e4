// The catalog: what each backend is (worker, launcher, routes, encodings) and the
// operations it offers, read from baselines/backends.json (baselines/catalog.cpp). It
// needs no system library, so the CLI lists and checks without linking MPI or PVM; it
// sits above the rank side (copbench/bench.h) and below the control side (launch,
// campaign, report): docs/ARCHITECTURE.md, "Libraries".
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "copbench/bench.h"

namespace copbench {

// The static description of a backend: what the CLI needs without linking the system.
struct BackendSpec {
  std::string name;
  std::string worker;  // executable beside copbench, e.g. "copbench-worker-mpi"
  // How its worker is started: the name of a WorkerLauncher (copbench/launch.h:
  // mpirun, pvm_master, cop_master, smpirun, s4u), which owns that start's command,
  // environment, runtime and Slurm job prologue. Checked against the registered ones
  // by worker_launcher() (and tests/suite/catalog_test.cpp).
  std::string launcher = "mpirun";
  std::vector<std::string> mpirun_args;  // extra arguments the system needs under mpirun (smpirun)
  // More of them from a number of ranks on (backends.json "mpirun_args_from_ranks":
  // {"1024": [...]}): smpi's broadcast algorithm where SMPI's own choice would not finish.
  std::vector<std::pair<int, std::vector<std::string>>> mpirun_args_from_ranks;
  // mpirun_args and those of mpirun_args_from_ranks that apply at `ranks`.
  std::vector<std::string> mpirun_args_at(int ranks) const;
  std::string summary;
  std::vector<std::string> routes;  // first is the default; empty when there is one way
  std::vector<std::string> encodings;  // PVM's data encodings; empty elsewhere
  std::vector<Op> offered;
  bool offers(Op op) const;
  // How the report treats it (backends.json "report_order", "traits", "simulates"):
  int report_order = kAfterTheOrdered;  // its columns' place; the baselines without one after
  static constexpr int kAfterTheOrdered = 1000;
  bool studied = false;        // the system under study: the tables divide the others' times by its
  bool modelled = false;       // its points carry the libcop-call model's time (modelled_us)
  bool private_stack = false;  // runs on a stack of its own a campaign lays out (a 2-level point is a mode)
  std::string simulates;       // the backend whose system this simulated one simulates; "" if none
};
const std::vector<BackendSpec>& all_backend_specs();
const BackendSpec* find_backend_spec(std::string_view name);
// The backend whose spec says "studied" (backends.json), the one the report divides by.
const BackendSpec& studied_backend();

// Missing operations of `bench` on `spec`; empty when the pair is offered.
std::vector<Op> missing_ops(const Benchmark& bench, const BackendSpec& spec);

}  // namespace copbench
