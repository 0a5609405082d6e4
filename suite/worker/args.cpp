// The worker's command line: WorkerArgs::to_argv writes it (the CLI, the campaign
// runner), parse_worker_args reads it (the worker). People rarely type it.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "copbench/timing.h"
#include "copbench/number_options.h"
#include "copbench/worker.h"

#ifdef COPBENCH_SIMULATED_CLOCK
#include <xbt/config.hpp>
#endif

namespace copbench {
namespace {

std::string sizes_text(const std::vector<std::size_t>& sizes) {
  std::string s;
  for (std::size_t b : sizes) s += (s.empty() ? "" : ",") + std::to_string(b);
  return s;
}

// What the worker reads besides WorkerArgs' own fields (text to convert after parsing).
struct Unparsed {
  std::string sizes;
  std::vector<std::string> params;
  int max_reps = 0;
  std::optional<std::string> methods;  // not given: every method
};

void add_options(CLI::App& app, WorkerArgs& a, Unparsed& u) {
  app.add_option("--bench", a.benchmark);
  app.add_flag("--verify", a.verify);
  app.add_option("--sizes", u.sizes);
  app.add_option("--param", u.params);
  app.add_option("--warmup", a.params.timing.warmup)->check(whole_number(0));
  app.add_option("--iters", a.params.timing.iterations)->check(whole_number(1));
  app.add_option("--reps", a.params.timing.min_reps)->check(whole_number(1));
  app.add_option("--max-reps", u.max_reps)->check(whole_number(1));
  app.add_option("--methods", u.methods);
  app.add_option("--route", a.route);
  app.add_option("--encoding", a.encoding);
  app.add_option("--nodes", a.nodes)->check(whole_number(1));
  app.add_option("--tasks-per-node", a.tasks_per_node)->check(whole_number(1));
  app.add_option("--timeout", a.timeout_s)->check(whole_number(0));
  app.add_option("--result", a.result_path);
  app.add_option("--error-file", a.error_path);
  app.add_option("--link-profile", a.context.link_profile);
  app.add_option("--commit", a.context.commit);
  app.add_option("--platform", a.platform);
  app.allow_extras(false);
}

// The platform goes into the result's context. A simulated worker (the smpi build,
// baselines/smpi) also says so, with the collective selector and computation setting
// and network model SimGrid runs it under, read back from SimGrid's configuration rather than assumed.
void set_platform_context(WorkerArgs& a) {
#ifdef COPBENCH_SIMULATED_CLOCK
  if (a.platform.empty()) throw std::invalid_argument("worker: --platform is required (a simulated worker)");
  a.context.settings["simulated"] = "true";
  a.context.settings["coll_selector"] = simgrid::config::get_value<std::string>("smpi/coll-selector");
  // The algorithms named in place of the selector's (backends.json: the barrier, the
  // broadcast and the harness's allreduce at every rank count); "" where the selector chooses.
  for (const char* op : {"allreduce", "barrier", "bcast"}) {
    const std::string chosen = simgrid::config::get_value<std::string>(std::string("smpi/") + op);
    if (!chosen.empty()) a.context.settings[std::string("smpi_") + op] = chosen;
  }
  a.context.settings["simulate_computation"] =
      simgrid::config::get_value<bool>("smpi/simulate-computation") ? "yes" : "no";
  a.context.settings["network_model"] = simgrid::config::get_value<std::string>("network/model");
#else
  // sim-cop (baselines/simcop) simulates in this process: it has installed its clock.
  const bool simulated = simulated_clock().now != nullptr;
  if (!a.platform.empty() && !simulated)
    throw std::invalid_argument("worker: --platform " + a.platform + ": this worker is not simulated (smpi, sim-cop only)");
  if (simulated && a.platform.empty()) throw std::invalid_argument("worker: --platform is required (a simulated worker)");
  if (simulated) a.context.settings["simulated"] = "true";
#endif
  if (!a.platform.empty()) a.context.settings["platform"] = a.platform;
}

}  // namespace

int default_max_reps(int reps) { return 4 * reps; }

std::pair<std::string, std::string> parse_param(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument(fmt::format("--param '{}': expected KEY=VALUE", text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<std::string> WorkerArgs::to_argv() const {
  std::vector<std::string> v;
  auto add = [&v](const char* option, const std::string& value) {
    if (!value.empty()) v.insert(v.end(), {option, value});
  };
  add("--bench", benchmark);
  if (verify) v.push_back("--verify");
  add("--sizes", sizes_text(params.sizes));
  for (const auto& [k, val] : params.options) add("--param", k + "=" + val);
  const TimingConfig& t = params.timing;
  v.insert(v.end(), {"--warmup", std::to_string(t.warmup), "--iters", std::to_string(t.iterations), "--reps",
                     std::to_string(t.min_reps)});
  if (t.max_reps > 0) add("--max-reps", std::to_string(t.max_reps));
  if (t.methods != TimingConfig{}.methods) add("--methods", methods_text(t.methods));  // the default: none
  add("--route", route);
  add("--encoding", encoding);
  v.insert(v.end(), {"--nodes", std::to_string(nodes), "--tasks-per-node", std::to_string(tasks_per_node), "--timeout",
                     std::to_string(timeout_s)});
  add("--result", result_path);
  add("--error-file", error_path);
  add("--link-profile", context.link_profile);
  add("--commit", context.commit);
  add("--platform", platform);
  return v;
}

WorkerArgs parse_worker_args(const std::vector<std::string>& args) {
  WorkerArgs a;
  a.raw = args;
  CLI::App app{"copbench worker (started by `copbench run`)"};
  Unparsed u;
  add_options(app, a, u);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(std::string("worker arguments: ") + e.what());
  }
  if (!u.sizes.empty()) a.params.sizes = parse_sizes(u.sizes);
  for (const std::string& kv : u.params) {
    try {
      auto [key, value] = parse_param(kv);
      a.params.options[key] = value;  // the last one given wins
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("worker: ") + e.what());
    }
  }
  if (a.benchmark.empty() && !a.verify) throw std::invalid_argument("worker: --bench or --verify is required");
  set_platform_context(a);
  TimingConfig& t = a.params.timing;
  if (u.methods) {
    try {
      t.methods = parse_methods(*u.methods);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("worker: --methods: ") + e.what());
    }
    // A run that picked its methods says so (the default, all three, adds nothing).
    a.context.settings["methods"] = methods_text(t.methods);
  }
  t.max_reps = std::max(u.max_reps > 0 ? u.max_reps : default_max_reps(t.min_reps), t.min_reps + 1);
  return a;
}

WorkerArgs parse_worker_args(int argc, char** argv) {
  return parse_worker_args(std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
}

}  // namespace copbench
