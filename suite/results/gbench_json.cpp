// Google Benchmark's JSON layout: one "iteration" entry per kept repetition and
// "aggregate" entries (mean, median, stddev, min, max) per point, times in microseconds.
// compare.py matches entries by name, so names carry every parameter of the point.
#include <ctime>

#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include "copbench/results.h"
#include "copbench/timing.h"

namespace copbench {
namespace {

constexpr double kMicro = 1e6;

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
  return buf;
}

nlohmann::json entry(const PointResult& p, std::string name, double real_us, double cpu_us) {
  nlohmann::json e;
  e["name"] = std::move(name);
  e["run_name"] = p.name;
  e["threads"] = 1;
  e["iterations"] = p.summary.iterations;
  e["real_time"] = real_us;
  e["cpu_time"] = cpu_us;
  e["time_unit"] = "us";
  for (const auto& [key, value] : p.counters) e[key] = value;
  std::string label;
  for (const auto& [key, value] : p.labels) label += (label.empty() ? "" : " ") + key + "=" + value;
  if (!label.empty()) e["label"] = label;
  return e;
}

// The machine as Google Benchmark's own context describes it (its CPUInfo), under the
// names its JSON reporter gives them.
void add_machine(nlohmann::json& ctx) {
  const benchmark::CPUInfo& info = benchmark::CPUInfo::Get();
  ctx["num_cpus"] = info.num_cpus;
  ctx["mhz_per_cpu"] = static_cast<long>(info.cycles_per_second / 1e6 + 0.5);
  ctx["cpu_scaling_enabled"] = info.scaling == benchmark::CPUInfo::ENABLED;
  ctx["caches"] = nlohmann::json::array();
  for (const auto& cache : info.caches)
    ctx["caches"].push_back(
        {{"type", cache.type}, {"level", cache.level}, {"size", cache.size}, {"num_sharing", cache.num_sharing}});
  if (!info.load_avg.empty()) ctx["load_avg"] = info.load_avg;
}

// The window method's entries of an aggregate: its W, clock and invalid calls (none for
// a point timed another way).
void add_window(nlohmann::json& e, const Summary& s) {
  if (s.window <= 0) return;
  e["timed_calls"] = s.timed_calls;
  e["invalid_calls"] = s.invalid_calls;
  e["window_us"] = s.window * kMicro;
  e["late_tolerance_us"] = s.late_tolerance * kMicro;
  e["window_widenings"] = s.widenings;
  e["clock_bound_us"] = s.clock_bound * kMicro;
  e["clock"] = s.clock;
  e["clock_basis"] = s.clock_basis;
  e["clock_offset_us"] = s.clock_offset * kMicro;
  e["clock_offset_bound_us"] = s.clock_offset_bound * kMicro;
  if (s.clock_injected_error >= 0) e["clock_injected_error_us"] = s.clock_injected_error * kMicro;
}

}  // namespace

nlohmann::json make_gbench_json(const RunContext& c, const std::vector<PointResult>& points) {
  nlohmann::json ctx;
  ctx["date"] = now_iso8601();
  ctx["host_name"] = c.host;
  ctx["executable"] = c.executable;
  add_machine(ctx);
  ctx["library_build_type"] = "release";
  // copbench's own context (flat strings, like benchmark::AddCustomContext).
  ctx["copbench_benchmark"] = c.benchmark;
  ctx["backend"] = c.backend;
  ctx["route"] = c.route;
  if (!c.encoding.empty()) ctx["encoding"] = c.encoding;
  ctx["nodes"] = std::to_string(c.nodes);
  ctx["tasks_per_node"] = std::to_string(c.tasks_per_node);
  ctx["link_profile"] = c.link_profile;
  ctx["commit"] = c.commit;
  ctx["timer"] = timer_name();
  for (const auto& [key, value] : c.settings) ctx[key] = value;
  // What every point shares; each point's own entries say how its iterations were timed
  // (timing_method: the sync method or a loop) and carry plain-word warnings.
  ctx["timing_method"] =
      "warm-up; each point's timing_method says how its iterations were timed (collectives: window, "
      "the default, or method:sync / method:loop in the name); "
      "Libsplit-C repetitions (first discarded, >3x mean of next three discarded, "
      ">=30 iterations, 95% CI <= 10% of mean); timer overhead subtracted";

  nlohmann::json benches = nlohmann::json::array();
  for (std::size_t family = 0; family < points.size(); ++family) {
    const PointResult& p = points[family];
    const Summary& s = p.summary;
    for (std::size_t i = 0; i < s.reps.size(); ++i) {
      double cpu = i < s.cpu_reps.size() ? s.cpu_reps[i] : 0.0;
      nlohmann::json e = entry(p, p.name, s.reps[i] * kMicro, cpu * kMicro);
      e["family_index"] = family;
      e["per_family_instance_index"] = 0;
      e["run_type"] = "iteration";
      e["repetitions"] = s.reps.size();
      e["repetition_index"] = i;
      benches.push_back(std::move(e));
    }
    double cpu_mean = 0.0;
    for (double x : s.cpu_reps) cpu_mean += x;
    if (!s.cpu_reps.empty()) cpu_mean /= static_cast<double>(s.cpu_reps.size());
    auto aggregate = [&](const char* agg, double real) {
      nlohmann::json e = entry(p, p.name + "_" + agg, real * kMicro, cpu_mean * kMicro);
      e["family_index"] = family;
      e["per_family_instance_index"] = 0;
      e["run_type"] = "aggregate";
      e["repetitions"] = s.reps.size();
      e["aggregate_name"] = agg;
      e["discarded_reps"] = s.discarded;
      e["ci95_half_us"] = s.ci95_half * kMicro;
      e["ci_met"] = s.ci_met;
      e["timer_overhead_us"] = s.timer_overhead * kMicro;
      if (!s.modelled_reps.empty()) e["modelled_us"] = median_of(s.modelled_reps) * kMicro;
      if (!s.method.empty()) e["timing_method"] = s.method;
      e["kept_reps"] = s.reps.size();
      add_window(e, s);
      e["warnings"] = summary_warnings(s);
      benches.push_back(std::move(e));
    };
    aggregate("mean", s.mean);
    aggregate("median", s.median);
    aggregate("stddev", s.stddev);
    aggregate("min", s.min);
    aggregate("max", s.max);
  }
  return nlohmann::json{{"context", ctx}, {"benchmarks", benches}};
}

}  // namespace copbench
