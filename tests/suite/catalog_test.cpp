// The benchmark x backend matching `copbench list` shows, the catalog against
// baselines/backends.json, and the workload registry (RegisterWorkload, copbench/bench.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

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
  }
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

// Every workload registered itself from its own file: the microbenchmarks first, then
// the applications, each group in its declared order, so `copbench list` and the report
// never depend on the link order.
TEST(Workloads, RegisteredInDeclaredOrder) {
  std::vector<std::string> names, apps;
  for (const Benchmark* b : all_benchmarks()) {
    (kind_of(*b) == WorkloadKind::application ? apps : names).emplace_back(b->name());
    if (kind_of(*b) == WorkloadKind::benchmark) {
      EXPECT_TRUE(apps.empty()) << b->name() << " after an application";
    }
  }
  ASSERT_GE(names.size(), 19u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 4),
            (std::vector<std::string>{"echo", "bandwidth", "ring", "barrier"}));
  EXPECT_EQ(apps, (std::vector<std::string>{"md", "matmul", "radixsort", "halo"}));
  EXPECT_EQ(kind_name(kind_of(*find_benchmark("halo"))), "application");
}

class Twin final : public Benchmark {
 public:
  std::string_view name() const override { return "echo"; }
  std::string_view description() const override { return "a second echo"; }
  std::vector<Op> needs() const override { return {Op::echo}; }
  void run(Backend&, const RunParams&, Reporter&) const override {}
};

// A second workload of a name is refused (at start, where registrars run), never listed.
TEST(Workloads, SecondWorkloadOfANameIsRefused) {
  static const Twin twin;
  const std::size_t before = all_benchmarks().size();
  EXPECT_THROW(register_workload(twin, WorkloadKind::benchmark, 1), std::logic_error);
  EXPECT_EQ(all_benchmarks().size(), before);
  EXPECT_NE(find_benchmark("echo"), &twin);
}

// The smoke run of the generated run tests: size 8 where the benchmark takes sizes,
// none where it takes none, the application's own tiny problem.
TEST(Workloads, SmokeRuns) {
  EXPECT_EQ(find_benchmark("echo")->smoke_sizes(), std::vector<std::size_t>{8});
  EXPECT_TRUE(find_benchmark("barrier")->smoke_sizes().empty());
  EXPECT_EQ(find_benchmark("md")->smoke_params().at("steps"), "12");
}

TEST(Catalog, KnowsTheBackendsAndBenchmarks) {
  for (const char* b : {"pvm", "mpi", "armci"}) EXPECT_NE(find_backend_spec(b), nullptr) << b;
  EXPECT_EQ(find_backend_spec("nope"), nullptr);
  for (const char* b : {"echo", "barrier", "reduce", "broadcast", "multicast", "lock", "shared", "fence",
                        "bandwidth", "ring", "overhead"})
    EXPECT_NE(find_benchmark(b), nullptr) << b;
}

TEST(Catalog, NotOfferedWhereTheSystemLacksTheOperation) {
  const BackendSpec& armci = *find_backend_spec("armci");
  const BackendSpec& pvm = *find_backend_spec("pvm");
  const BackendSpec& mpi = *find_backend_spec("mpi");
  EXPECT_EQ(missing_ops(*find_benchmark("multicast"), armci), std::vector<Op>{Op::multicast});
  EXPECT_EQ(missing_ops(*find_benchmark("fence"), pvm), std::vector<Op>{Op::fence});
  EXPECT_EQ(missing_ops(*find_benchmark("scan"), pvm), std::vector<Op>{Op::scan});
  // mpi offers every benchmark but the emulated COP's floor (cop's own transport).
  for (const Benchmark* b : all_benchmarks()) {
    if (b->name() == "emulation")
      EXPECT_EQ(missing_ops(*b, mpi), std::vector<Op>{Op::floor_loops});
    else
      EXPECT_TRUE(missing_ops(*b, mpi).empty()) << b->name();
  }
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
