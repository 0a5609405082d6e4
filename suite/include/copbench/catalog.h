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
enum class Launcher {
  mpirun,      // ranks started by mpirun
  pvm_master,  // the worker enrolls in the running virtual machine and pvm_spawns the rest
  cop_master,  // as pvm_master, through a wrapper that starts a private pvmd and COP stack if none is given
  smpirun,     // simulated ranks: SimGrid's smpirun on a platform file (--platform NAME)
  s4u,         // a SimGrid S4U program started as it is: it simulates every node itself (sim-cop)
};
// Whether the backend's nodes are simulated (smpirun, s4u): they run on a platform
// (--platform NAME) on this machine, take no hostfile, and report simulated time.
inline bool simulated(Launcher l) { return l == Launcher::smpirun || l == Launcher::s4u; }
struct BackendSpec {
  std::string name;
  std::string worker;  // executable beside copbench, e.g. "copbench-worker-mpi"
  Launcher launcher = Launcher::mpirun;
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
};
const std::vector<BackendSpec>& all_backend_specs();
const BackendSpec* find_backend_spec(std::string_view name);

// Missing operations of `bench` on `spec`; empty when the pair is offered.
std::vector<Op> missing_ops(const Benchmark& bench, const BackendSpec& spec);

}  // namespace copbench
