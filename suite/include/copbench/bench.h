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

// A --param of an application, declared once (Benchmark::params()): its name, the value
// taken when the run names none, and the values it may take (lo..hi, inclusive, or one of
// `choices`); a `list` parameter takes several, comma-separated ("radix=8,16"), a point each.
struct ParamSpec {
  std::string name;
  double fallback = 0;
  double lo = 0, hi = 0;
  bool integer = true;  // an integer ("frames=3"); else any number in range (md's "dt=0.001")
  std::vector<double> choices = {};  // when not empty: the values it may take (lo, hi unused)
  bool list = false;
};

// The COP call one of a workload's families times, for the report's model of it (the
// libcop-call model and ch. VI's analytic one, report/validation.cpp): its operation
// (barrier, reduce, broadcast), on doubles or integers, of one word or of the point's
// elements (its `elements` counter, else bytes / 8).
struct ModelledCall {
  std::string family;
  Op op = Op::barrier;
  bool floating = false;
  bool per_element = true;
};

// How `copbench report` shows a workload's points, declared by the workload so that the
// report (suite/report/) names none. A family is a point name without its size or node
// count ("lock/mcs", "reduce/double"); placements aside ("echo/on-host" is "echo").
struct ReportTraits {
  // What a plot's title says a family's time is, after its name: the locks'
  // " (acquire + release)", echo's " latency (round trip / 2)".
  std::string time_is;
  // The x axis of its time-vs-nodes plots: "nodes", the locks' "contending nodes".
  std::string nodes_axis = "nodes";
  // Its families on which smpi's calibrated platform is checked against mpi measured
  // (report/validation.cpp): the operations the calibration's link model should predict.
  std::vector<std::string> validated_families;
  // The sizes in bytes those families are checked at; empty: every size.
  std::vector<double> validated_sizes;
  // Its points at 2 nodes time `bytes` one way between two hosts: `copbench simulate
  // calibrate` fits a link's latency and bandwidth to them (report/simulate.cpp).
  bool link_probe = false;
  // Its points carry thesis Table V's time breakdown (frac_* and calls_* counters,
  // apps/common.h): the report's Table V table (report/tables.cpp).
  bool time_breakdown = false;
  // Its points are other points' floors, named "<workload>/<that point>" (the emulation
  // benchmark, suite/bench/emulation.cpp): the report's emulation table and the floor
  // beside a curve (report/emulation.cpp).
  bool floors_of_points = false;
  // The families of its points the COP model has a call for (sim-cop's validation).
  std::vector<ModelledCall> modelled_calls;
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
  // The --param options this workload takes (applications: apps/), each declared once
  // with its default and range; the workload reads a value with param_int / param_number.
  virtual std::vector<ParamSpec> params() const { return {}; }
  // The --param names it takes (default: those of params()), and a check of their values
  // that throws std::invalid_argument naming the bad one, run before any rank starts
  // (default: every declared one in its range; an override that checks more calls it).
  virtual std::vector<std::string> option_names() const;
  virtual void check_options(const RunParams& p) const;
  // The smallest run that still checks its answer: the run tests generated from `copbench
  // list --json` (tests/workload_tests.cmake) and the cluster's every-microbenchmark
  // campaign use it. Default: size 8 where the benchmark takes sizes, no --param.
  virtual std::vector<std::size_t> smoke_sizes() const;
  virtual std::map<std::string, std::string> smoke_params() const { return {}; }
  virtual ReportTraits report_traits() const { return {}; }
  virtual void run(Backend& backend, const RunParams& params, Reporter& reporter) const = 0;
};

// The value of `bench`'s declared parameter `name` in `p` (its fallback when `p` names
// none). Throws std::invalid_argument "WORKLOAD: --param KEY=VALUE: expected an integer
// (a number) from LO to HI" for a value that is not one in range, std::logic_error for a
// name the workload did not declare.
long param_int(const RunParams& p, const Benchmark& bench, std::string_view name);
double param_number(const RunParams& p, const Benchmark& bench, std::string_view name);
// A `list` parameter's values in the order given (its fallback alone when `p` names none),
// each checked as above; a value given twice is refused.
std::vector<long> param_ints(const RunParams& p, const Benchmark& bench, std::string_view name);

// Parses "0,8,1K,64K" (bytes; K = 1024, M = 1024^2). Throws std::invalid_argument naming
// the bad item.
std::vector<std::size_t> parse_sizes(const std::string& list);
std::string format_size(std::size_t bytes);  // 8, 1K, 64K, 1M

// What a workload is: a microbenchmark (suite/bench/) or an application (apps/), whose
// repetition is one whole run. `copbench list`, its JSON and the run tests generated from
// it (tests/workload_tests.cmake) tell the two apart.
enum class WorkloadKind { benchmark, application };
std::string_view kind_name(WorkloadKind kind);  // "benchmark", "application"

// Every workload registers itself where it is defined, as Google Benchmark's BENCHMARK
// does: one namespace-scope line in its file,
//   const RegisterWorkload<Allreduce> registered{WorkloadKind::benchmark, 220};
// `order` places it in `copbench list` and in the report's summary (ties by name):
// point-to-point 100s, collectives 200s, locks and shared words 300s, overheads 400s,
// applications 1000s. A second workload of the same name stops the program at start.
// The files are linked whole (copbench_workloads is an OBJECT library,
// suite/CMakeLists.txt), so no registrar is dropped by a static link.
void register_workload(const Benchmark& benchmark, WorkloadKind kind, int order);
template <class B>
struct RegisterWorkload {
  RegisterWorkload(WorkloadKind kind, int order) {
    static const B instance;
    register_workload(instance, kind, order);
  }
};

// All workloads, in the order `copbench list` shows them (order, then name).
const std::vector<const Benchmark*>& all_benchmarks();
const Benchmark* find_benchmark(std::string_view name);
WorkloadKind kind_of(const Benchmark& benchmark);

// The operations a worker's command line (launch.h) will use, read before the backend is
// brought up so that it sets up only those (an RMA window, a lock server): every
// operation for --verify, the benchmark's needs() and optional_ops() for --bench NAME,
// none otherwise (an unknown benchmark is refused later, by run_worker).
std::vector<Op> ops_of_worker_command(int argc, char** argv);
bool uses_any(const std::vector<Op>& used, std::initializer_list<Op> ops);

}  // namespace copbench
