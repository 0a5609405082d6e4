// Runs one benchmark (or the verification) on an initialised backend; rank 0 writes.
#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "copbench/clock.h"
#include "copbench/worker.h"

namespace copbench {
namespace {

class Collector final : public Reporter {
 public:
  void report(PointResult point) override { points.push_back(std::move(point)); }
  std::vector<PointResult> points;
};

}  // namespace

void report_worker_error(const WorkerArgs& args, const std::string& message) {
  std::fprintf(stderr, "copbench worker: error: %s\n", message.c_str());
  if (!args.error_path.empty()) {
    std::ofstream f(args.error_path, std::ios::app);  // any rank may fail; the first line is shown
    f << message << "\n";
  }
}

namespace {

// `copbench verify`: the checks' lines and verdict in the result file (rank 0); exit code
// 3 when a check failed.
int run_verification(Backend& b, const WorkerArgs& args) {
  bool ok = true;
  std::vector<std::string> lines = verify_backend(b, ok);
  if (b.rank() == 0) {
    nlohmann::json j{{"backend", b.name()}, {"route", b.route()}, {"nodes", b.nodes()},
                     {"tasks_per_node", b.tasks_per_node()}, {"ok", ok}, {"checks", lines}};
    if (!args.result_path.empty()) write_file_atomically(args.result_path, j.dump(2) + "\n");
    if (!ok) report_worker_error(args, fmt::format("{} failed verification on {} nodes x {} tasks", b.name(), b.nodes(), b.tasks_per_node()));
  }
  return ok ? 0 : 3;
}

// The benchmark's points as Google Benchmark JSON (rank 0), with the run's context.
int run_benchmark(Backend& b, const WorkerArgs& args) {
  const Benchmark* bench = find_benchmark(args.benchmark);
  if (!bench) throw std::invalid_argument("unknown benchmark '" + args.benchmark + "'");
  for (Op op : bench->needs())
    if (!b.offers(op)) throw NotOffered(b.name(), op);
  if (b.ranks() < bench->min_ranks())
    throw std::invalid_argument(fmt::format("{} needs at least {} ranks", bench->name(), bench->min_ranks()));

  Collector collector;
  bench->run(b, args.params, collector);
  b.sync();
  if (b.rank() == 0 && !args.result_path.empty()) {
    RunContext ctx = args.context;
    // The backend's own settings that change what was measured (cop: copd's I/O threads, polling).
    for (auto& [key, value] : b.context_settings()) ctx.settings[key] = value;
    // A skew injected into the ranks' clocks (a test setting, copbench/clock.h).
    if (const std::string skew = injected_clock_skew(); !skew.empty()) ctx.settings["clock_skew_injected"] = skew;
    ctx.benchmark = std::string(bench->name());
    ctx.backend = b.name();
    ctx.route = b.route();
    ctx.encoding = args.encoding;
    ctx.nodes = b.nodes();
    ctx.tasks_per_node = b.tasks_per_node();
    ctx.host = host_name();
    ctx.executable = "copbench-worker-" + b.name();
    write_file_atomically(args.result_path, make_gbench_json(ctx, collector.points).dump(2) + "\n");
  }
  return 0;
}

}  // namespace

int run_worker(Backend& b, const WorkerArgs& args) {
  if (b.ranks() != args.nodes * args.tasks_per_node || b.tasks_per_node() != args.tasks_per_node)
    throw std::runtime_error(fmt::format("{} started {} ranks of {} per node; wanted {} nodes x {} tasks", b.name(),
                                         b.ranks(), b.tasks_per_node(), args.nodes, args.tasks_per_node));
  return args.verify ? run_verification(b, args) : run_benchmark(b, args);
}

}  // namespace copbench
