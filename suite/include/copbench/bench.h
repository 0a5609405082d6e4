// Benchmarks: each one a short file in suite/bench/, written once against Backend.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "copbench/backend.h"
#include "copbench/timing.h"

namespace copbench {

struct RunParams {
  std::vector<std::size_t> sizes;  // message / array sizes in bytes; empty = the benchmark's default
  TimingConfig timing;
  // Named parameters of an application (`--param steps=256`); benchmarks take none.
  std::map<std::string, std::string> options;
};

// One measured point (one row of the table, one benchmark name in the JSON).
struct PointResult {
  std::string name;                       // e.g. "echo/size:8"
  std::map<std::string, double> counters; // nodes, bytes, ... (become JSON user counters)
  std::map<std::string, std::string> labels;
  Summary summary;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void report(PointResult point) = 0;  // called on every rank; rank 0 keeps them
};

class Benchmark {
 public:
  virtual ~Benchmark() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  // Operations that must all be offered for this benchmark to run on a backend.
  virtual std::vector<Op> needs() const = 0;
  // Operations that only add points: where one is not offered the benchmark runs without
  // those points, and `copbench list` names it.
  virtual std::vector<Op> optional_ops() const { return {}; }
  // Default sizes in bytes; empty when the benchmark takes no size.
  virtual std::vector<std::size_t> default_sizes() const { return {}; }
  // Ranks the benchmark needs (echo: a peer), on however many nodes they are placed.
  virtual int min_ranks() const { return 1; }
  // The --param names this benchmark takes (applications: apps/), and a check of their
  // values that throws std::invalid_argument naming the bad one (run before any rank starts).
  virtual std::vector<std::string> option_names() const { return {}; }
  virtual void check_options(const RunParams&) const {}
  virtual void run(Backend& backend, const RunParams& params, Reporter& reporter) const = 0;
};

// Parses "0,8,1K,64K" (bytes; K = 1024, M = 1024^2). Throws std::invalid_argument naming
// the bad item.
std::vector<std::size_t> parse_sizes(const std::string& list);
std::string format_size(std::size_t bytes);  // 8, 1K, 64K, 1M

// All benchmarks, in the order `copbench list` shows them.
const std::vector<const Benchmark*>& all_benchmarks();
const Benchmark* find_benchmark(std::string_view name);

// The operations a worker's command line (launch.h) will use, read before the backend is
// brought up so that it sets up only those (an RMA window, a lock server): every
// operation for --verify, the benchmark's needs() and optional_ops() for --bench NAME,
// none otherwise (an unknown benchmark is refused later, by run_worker).
std::vector<Op> ops_of_worker_command(int argc, char** argv);
bool uses_any(const std::vector<Op>& used, std::initializer_list<Op> ops);

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
