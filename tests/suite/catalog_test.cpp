// The benchmark x backend matching `copbench list` shows, the catalog against
// baselines/backends.json, and the workload registry (RegisterWorkload, copbench/bench.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "copbench/catalog.h"
#include "copbench/launch.h"

namespace copbench {
namespace {

nlohmann::json backends_json() {
  std::ifstream in(BACKENDS_JSON);
  EXPECT_TRUE(in.good()) << BACKENDS_JSON;
  return nlohmann::json::parse(in);
}

std::vector<std::string> names_of(const std::vector<Op>& ops) {
  std::vector<std::string> names;
  for (Op op : ops) names.emplace_back(op_name(op));
  return names;
}

std::vector<std::string> strings(const nlohmann::json& entry, const char* key) {
  return entry.value(key, std::vector<std::string>{});
}

// The C++ catalog is the file, backend by backend and in the file's order.
TEST(Catalog, EqualsBackendsJson) {
  const nlohmann::json file = backends_json();
  const auto& specs = all_backend_specs();
  ASSERT_EQ(specs.size(), file.at("backends").size());
  std::size_t i = 0;
  for (const nlohmann::json& entry : file.at("backends")) {
    const BackendSpec& s = specs[i++];
    SCOPED_TRACE(s.name);
    EXPECT_EQ(s.name, entry.at("name").get<std::string>());
    EXPECT_EQ(s.summary, entry.at("summary").get<std::string>());
    EXPECT_EQ(s.worker, entry.at("worker").get<std::string>());
    EXPECT_EQ(s.launcher, entry.at("launcher").get<std::string>());
    EXPECT_EQ(s.mpirun_args, strings(entry, "mpirun_args"));
    EXPECT_EQ(s.routes, strings(entry, "routes"));
    EXPECT_EQ(s.encodings, strings(entry, "encodings"));
    EXPECT_EQ(names_of(s.offered), strings(entry, "offered"));
    EXPECT_EQ(s.report_order, entry.value("report_order", BackendSpec::kAfterTheOrdered));
    const std::vector<std::string> traits = strings(entry, "traits");
    const auto has = [&traits](const char* t) { return std::find(traits.begin(), traits.end(), t) != traits.end(); };
    EXPECT_EQ(s.studied, has("studied"));
    EXPECT_EQ(s.modelled, has("modelled"));
    EXPECT_EQ(s.private_stack, has("private stack"));
    EXPECT_EQ(s.simulates, entry.value("simulates", ""));
  }
}

// What the report reads instead of backend names: one studied backend (the one it divides
// by), distinct places of the ordered ones, and every simulated backend simulating a
// backend of the catalog that is not itself simulated.
TEST(Catalog, ReportTraitsAreConsistent) {
  int studied = 0;
  std::vector<int> orders;
  for (const BackendSpec& s : all_backend_specs()) {
    studied += s.studied ? 1 : 0;
    if (s.report_order != BackendSpec::kAfterTheOrdered) {
      EXPECT_EQ(std::count(orders.begin(), orders.end(), s.report_order), 0) << s.name;
      orders.push_back(s.report_order);
    }
    if (s.simulates.empty()) continue;
    const BackendSpec* real = find_backend_spec(s.simulates);
    ASSERT_NE(real, nullptr) << s.name << " simulates " << s.simulates;
    EXPECT_TRUE(real->simulates.empty()) << s.name;
    EXPECT_NE(real->report_order, BackendSpec::kAfterTheOrdered) << s.name;
  }
  EXPECT_EQ(studied, 1);
  EXPECT_TRUE(studied_backend().studied);
}

// smpi's broadcast by the binomial tree at every rank count and its barrier by the tree
// from 256 ranks on (backends.json mpirun_args, mpirun_args_from_ranks): SMPI's ompi
// selector switches their algorithms with the communicator size (binary tree, knomial,
// binomial; Bruck's and the tree), which made a collective faster on more nodes (issue 35).
TEST(Catalog, SmpiArgsFromRanks) {
  const BackendSpec* smpi = find_backend_spec("smpi");
  ASSERT_NE(smpi, nullptr);
  const std::vector<std::string>& every = smpi->mpirun_args;
  EXPECT_NE(std::find(every.begin(), every.end(), "--cfg=smpi/bcast:binomial_tree"), every.end());
  EXPECT_EQ(smpi->mpirun_args_at(2), every);
  EXPECT_EQ(smpi->mpirun_args_at(255), every);
  std::vector<std::string> from_256 = every;
  from_256.push_back("--cfg=smpi/barrier:ompi_tree");
  for (int ranks : {256, 512, 1024, 4096}) EXPECT_EQ(smpi->mpirun_args_at(ranks), from_256) << ranks;
  const BackendSpec* mpi = find_backend_spec("mpi");
  ASSERT_NE(mpi, nullptr);
  EXPECT_EQ(mpi->mpirun_args_at(4096), mpi->mpirun_args);
}

// What every registered workload must declare, checked on each one, so that a new
// workload is its one file (README.md, "Adding a workload") and needs no line here.

// Registered from its own file, in the declared order: the microbenchmarks first, then
// the applications, so `copbench list` and the report never depend on the link order.
TEST(Workloads, MicrobenchmarksBeforeApplications) {
  ASSERT_FALSE(all_benchmarks().empty());
  bool application_seen = false;
  for (const Benchmark* b : all_benchmarks()) {
    const bool application = kind_of(*b) == WorkloadKind::application;
    EXPECT_TRUE(application || !application_seen) << b->name() << " after an application";
    application_seen = application_seen || application;
    EXPECT_EQ(kind_name(kind_of(*b)), application ? "application" : "benchmark");
  }
}

// A name a campaign file, a command line and a result file's point name can carry, found
// by find_benchmark; a description for `copbench list`.
TEST(Workloads, EveryOneIsNamedAndDescribed) {
  for (const Benchmark* b : all_benchmarks()) {
    const std::string name(b->name());
    SCOPED_TRACE(name);
    ASSERT_FALSE(name.empty());
    EXPECT_TRUE(std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    }));
    EXPECT_FALSE(b->description().empty());
    EXPECT_EQ(find_benchmark(name), b);
  }
  EXPECT_EQ(find_benchmark("nope"), nullptr);
}

// Every operation a workload needs is offered by some backend, else it could never run;
// missing_ops is exactly the needed operations the backend does not offer.
TEST(Workloads, EveryOneRunsSomewhereAndMissingOpsAreTheUnofferedNeeds) {
  for (const Benchmark* b : all_benchmarks()) {
    SCOPED_TRACE(std::string(b->name()));
    bool runs_somewhere = false;
    for (const BackendSpec& spec : all_backend_specs()) {
      std::vector<Op> unoffered;
      for (Op op : b->needs())
        if (!spec.offers(op)) unoffered.push_back(op);
      EXPECT_EQ(missing_ops(*b, spec), unoffered) << spec.name;
      runs_somewhere = runs_somewhere || unoffered.empty();
    }
    EXPECT_TRUE(runs_somewhere);
  }
}

// The smoke run of the generated run tests: size 8 where a microbenchmark takes sizes,
// none where it takes none; an application's own tiny problem, with only the parameters
// it declares, accepted by its own check.
TEST(Workloads, SmokeRunsAreAcceptedByTheirOwnChecks) {
  for (const Benchmark* b : all_benchmarks()) {
    SCOPED_TRACE(std::string(b->name()));
    if (b->default_sizes().empty()) {
      EXPECT_TRUE(b->smoke_sizes().empty());
    }
    if (kind_of(*b) == WorkloadKind::benchmark && !b->default_sizes().empty()) {
      EXPECT_EQ(b->smoke_sizes(), std::vector<std::size_t>{8});
    }
    const std::vector<std::string> names = b->option_names();
    RunParams smoke;
    smoke.sizes = b->smoke_sizes();
    for (const auto& [key, value] : b->smoke_params()) {
      EXPECT_NE(std::find(names.begin(), names.end(), key), names.end()) << key << " is not declared";
      smoke.options[key] = value;
    }
    EXPECT_NO_THROW(b->check_options(smoke));
  }
}

// A run naming `value` for `spec`.
RunParams with_param(const ParamSpec& spec, const std::string& value) {
  RunParams p;
  p.options[spec.name] = value;
  return p;
}

// `value` is refused by `b`'s check, which names the workload, the parameter and the value.
void expect_refused(const Benchmark& b, const ParamSpec& spec, const std::string& value) {
  try {
    b.check_options(with_param(spec, value));
    ADD_FAILURE() << value << " was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(std::string(b.name()) + ": --param " + spec.name + "=" + value + ": expected ", 0), 0u) << what;
  }
}

// The values `spec` declares it may take, at their ends (a range's lo and hi, or every
// choice), and some it may not, as a run writes them.
std::pair<std::vector<double>, std::vector<std::string>> declared_values(const ParamSpec& spec) {
  const auto text = [&](double v) { return spec.integer ? std::to_string(static_cast<long>(v)) : fmt::format("{}", v); };
  if (spec.choices.empty()) return {{spec.lo, spec.hi}, {text(spec.hi + 1), text(spec.lo - 1), "x"}};
  const auto [lo, hi] = std::minmax_element(spec.choices.begin(), spec.choices.end());
  return {spec.choices, {text(*hi + 1), text(*lo - 1), "x"}};
}

// Each declared parameter (Benchmark::params()) is declared once, has its default among
// the values it may take (its range or its choices), and the check takes each end (each
// choice) and refuses a value past them, naming the workload and the parameter; its
// default is what param_int / param_number return when the run names none. A list
// parameter takes its values together (param_ints in order) and refuses one given twice;
// another refuses a list.
TEST(Workloads, DeclaredParametersHoldTheirRanges) {
  for (const Benchmark* b : all_benchmarks()) {
    const std::vector<std::string> names = b->option_names();
    for (const ParamSpec& spec : b->params()) {
      SCOPED_TRACE(std::string(b->name()) + " " + spec.name);
      EXPECT_EQ(std::count(names.begin(), names.end(), spec.name), 1);
      const auto [good, bad] = declared_values(spec);
      if (spec.choices.empty()) {
        EXPECT_LE(spec.lo, spec.fallback);
        EXPECT_LE(spec.fallback, spec.hi);
      } else {
        EXPECT_NE(std::find(spec.choices.begin(), spec.choices.end(), spec.fallback), spec.choices.end());
      }
      if (spec.integer) {
        EXPECT_EQ(spec.fallback, static_cast<double>(static_cast<long>(spec.fallback)));
      }
      EXPECT_EQ(param_number(RunParams{}, *b, spec.name), spec.fallback);
      const auto text = [&](double v) { return spec.integer ? std::to_string(static_cast<long>(v)) : fmt::format("{}", v); };
      for (double v : good) {
        EXPECT_NO_THROW(b->check_options(with_param(spec, text(v))));
        EXPECT_EQ(param_number(with_param(spec, text(v)), *b, spec.name), v);
      }
      for (const std::string& v : bad) expect_refused(*b, spec, v);
      const std::string two = text(good.back()) + "," + text(good.front());
      if (spec.list) {
        EXPECT_EQ(param_ints(with_param(spec, two), *b, spec.name),
                  (std::vector<long>{static_cast<long>(good.back()), static_cast<long>(good.front())}));
        expect_refused(*b, spec, text(good.front()) + "," + text(good.front()));
      } else {
        expect_refused(*b, spec, two);
      }
    }
    EXPECT_THROW(param_number(RunParams{}, *b, "not-declared"), std::logic_error);
  }
}

// What a workload declares for the report (ReportTraits) is about its own points: a
// validated or modelled family is one of its names, sizes only where families are, an
// axis named.
TEST(Workloads, ReportTraitsAreAboutTheirOwnPoints) {
  for (const Benchmark* b : all_benchmarks()) {
    SCOPED_TRACE(std::string(b->name()));
    const ReportTraits t = b->report_traits();
    for (const std::string& family : t.validated_families)
      EXPECT_TRUE(family == b->name() || family.rfind(std::string(b->name()) + "/", 0) == 0) << family;
    for (const ModelledCall& c : t.modelled_calls)
      EXPECT_TRUE(c.family == b->name() || c.family.rfind(std::string(b->name()) + "/", 0) == 0) << c.family;
    EXPECT_TRUE(t.validated_sizes.empty() || !t.validated_families.empty());
    EXPECT_FALSE(t.nodes_axis.empty());
  }
}

class Twin final : public Benchmark {
 public:
  std::string_view name() const override { return all_benchmarks().front()->name(); }
  std::string_view description() const override { return "a second workload of the first one's name"; }
  std::vector<Op> needs() const override { return {}; }
  void run(Backend&, const RunParams&, Reporter&) const override {}
};

// A second workload of a name is refused (at start, where registrars run), never listed.
TEST(Workloads, SecondWorkloadOfANameIsRefused) {
  static const Twin twin;
  const std::size_t before = all_benchmarks().size();
  EXPECT_THROW(register_workload(twin, WorkloadKind::benchmark, 1), std::logic_error);
  EXPECT_EQ(all_benchmarks().size(), before);
  EXPECT_NE(find_benchmark(twin.name()), &twin);
}

TEST(Catalog, KnowsTheBackends) {
  for (const char* b : {"pvm", "mpi", "armci"}) EXPECT_NE(find_backend_spec(b), nullptr) << b;
  EXPECT_EQ(find_backend_spec("nope"), nullptr);
}

// Seed 004's fence and lock items: what each backend offers, and the fence benchmark's
// points that run only where their operation is offered.
TEST(Catalog, Seed004FencesAndServerLock) {
  const BackendSpec& armci = *find_backend_spec("armci");
  const BackendSpec& pvm = *find_backend_spec("pvm");
  const BackendSpec& mpi = *find_backend_spec("mpi");
  const Benchmark& queue = *find_benchmark("queue-lock");
  EXPECT_TRUE(missing_ops(queue, pvm).empty());
  EXPECT_TRUE(missing_ops(queue, mpi).empty());
  EXPECT_EQ(missing_ops(queue, armci), std::vector<Op>{Op::server_lock});
  const Benchmark& fence = *find_benchmark("fence");
  EXPECT_EQ(fence.optional_ops(), (std::vector<Op>{Op::fence_window, Op::fence_barrier}));
  EXPECT_TRUE(mpi.offers(Op::fence_window));
  EXPECT_FALSE(mpi.offers(Op::fence_barrier));
  EXPECT_FALSE(armci.offers(Op::fence_window));
  EXPECT_TRUE(armci.offers(Op::fence_barrier));
}

// Every backend's launcher is a registered WorkerLauncher (copbench/launch.h), whose
// traits are the ones the backend needs; an unknown name is refused by name.
TEST(Catalog, EveryLauncherIsRegistered) {
  for (const BackendSpec& s : all_backend_specs()) EXPECT_EQ(worker_launcher(s).name(), s.launcher) << s.name;
  EXPECT_TRUE(worker_launcher("smpirun").simulated());
  EXPECT_TRUE(worker_launcher("s4u").simulated());
  EXPECT_FALSE(worker_launcher("mpirun").simulated());
  EXPECT_TRUE(worker_launcher("pvm_master").needs_running_pvmd());
  EXPECT_FALSE(worker_launcher("cop_master").needs_running_pvmd());  // it starts a private one
  try {
    worker_launcher("qsub");
    ADD_FAILURE() << "an unknown launcher was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'qsub'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cop_master"), std::string::npos) << e.what();
  }
}

// What each worker launcher owns: the command before the worker, the worker's own
// variables, its runtime, its Slurm job prologue.
TEST(WorkerLaunchers, MpirunCommandAndSmpirunArguments) {
  LaunchRequest req;
  req.spec = find_backend_spec("mpi");
  req.nodes = 2;
  req.tasks_per_node = 2;
  req.hostfile = "cluster-hosts";
  const std::vector<std::string> argv = worker_launcher("mpirun").command(req, "/tmp", false);
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ(argv[0], "mpirun");
  EXPECT_EQ(argv[2], "4");
  const auto has = [&argv](const std::string& a, const std::string& b) {
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == a && argv[i + 1] == b) return true;
    return false;
  };
  EXPECT_TRUE(has("--hostfile", "cluster-hosts"));
  EXPECT_TRUE(has("--map-by", "ppr:2:node"));
  EXPECT_TRUE(has("osc", "pt2pt"));  // backends.json mpirun_args
  // Inside a batch allocation Open MPI takes the hosts from it, never from a hostfile.
  const std::vector<std::string> in_allocation = worker_launcher("mpirun").command(req, "/tmp", true);
  EXPECT_EQ(std::find(in_allocation.begin(), in_allocation.end(), "--hostfile"), in_allocation.end());
  EXPECT_TRUE(worker_launcher("pvm_master").command(req, "/tmp", false).empty());
  EXPECT_THROW(worker_launcher("smpirun").check_argument("two words"), std::invalid_argument);
  EXPECT_NO_THROW(worker_launcher("smpirun").check_argument("--sizes=8,1K"));
  EXPECT_NO_THROW(worker_launcher("mpirun").check_argument("two words"));
}

TEST(WorkerLaunchers, CopJobIsThePointsOwnUnlessOneIsGiven) {
  const WorkerLauncher& cop = worker_launcher("cop_master");
  LaunchRequest req;
  req.spec = find_backend_spec("cop");
  req.env["COP_JOB"] = std::nullopt;  // not the test's own environment's
  const Environment env = cop.environment(req, "/tmp/copbench-run.abc123");
  ASSERT_EQ(env.count("COP_JOB"), 1u);
  EXPECT_EQ(env.at("COP_JOB"), "copbench-point-copbench-run.abc123");
  req.env["COP_JOB"] = "the-users-job";
  EXPECT_TRUE(cop.environment(req, "/tmp/copbench-run.abc123").empty());
  EXPECT_TRUE(worker_launcher("mpirun").environment(req, "/tmp/x").empty());
}

// On a cluster the cop launcher starts nothing: without the cluster's pvmd it says so.
TEST(WorkerLaunchers, CopOnAClusterStartsNothingAndNeedsTheRunningPvmd) {
  const WorkerLauncher& cop = worker_launcher("cop_master");
  LaunchRequest req;
  req.spec = find_backend_spec("cop");
  req.nodes = 2;
  req.hostfile = "cluster-hosts";
  Environment env{{"PVM_TMP", "/nonexistent/copbench-no-pvm"}, {"COP_STACK_DIR", std::nullopt}};
  const std::string why = cop.start_runtime(req, "/nonexistent/run", env);
  EXPECT_NE(why.find("no pvmd is running"), std::string::npos) << why;
  EXPECT_EQ(env.at("COP_STACK_DIR"), std::nullopt);
  EXPECT_TRUE(cop.runtime_problem(*req.spec, "cluster-hosts", env).has_value());
  EXPECT_FALSE(cop.runtime_problem(*req.spec, "", env).has_value());  // one machine: it starts its own
}

TEST(WorkerLaunchers, JobPrologues) {
  EXPECT_NE(worker_launcher("mpirun").job_prologue().script.find("exec"), std::string::npos);
  const std::string pvm = worker_launcher("pvm_master").job_prologue().script;
  const std::string cop = worker_launcher("cop_master").job_prologue().script;
  EXPECT_NE(pvm.find("pvmd"), std::string::npos);
  EXPECT_EQ(cop.rfind(pvm, 0), 0u);  // the PVM part first
  EXPECT_NE(cop.find("copdrv"), std::string::npos);
}

TEST(Catalog, RoutesAndEncodingsOfPvm) {
  const BackendSpec& pvm = *find_backend_spec("pvm");
  EXPECT_EQ(pvm.routes, (std::vector<std::string>{"normal", "direct"}));
  EXPECT_EQ(pvm.encodings, (std::vector<std::string>{"default", "raw", "inplace"}));
  EXPECT_EQ(pvm.launcher, "pvm_master");
}

}  // namespace
}  // namespace copbench
