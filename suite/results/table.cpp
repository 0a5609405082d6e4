// The terminal table: one row per point, from the aggregates of a result file.
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "copbench/results.h"

namespace copbench {
namespace {

// Keys every entry has; anything else is a benchmark's own counter, shown at the end.
const std::set<std::string> kStandardKeys = {
    "name", "run_name", "threads", "iterations", "real_time", "cpu_time", "time_unit", "label",
    "family_index", "per_family_instance_index", "run_type", "repetitions", "repetition_index",
    "aggregate_name", "discarded_reps", "ci95_half_us", "ci_met", "timer_overhead_us", "nodes", "bytes",
    "kept_reps"};

std::string fmt_us(double us) {
  if (us >= 1e5) return fmt::format("{:.0f}", us);
  if (us >= 100) return fmt::format("{:.1f}", us);
  return fmt::format("{:.2f}", us);
}

std::string fmt_counter(double v) {
  if (v == static_cast<double>(static_cast<long long>(v)) && std::abs(v) < 1e12)
    return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:.4g}", v);
}

}  // namespace

std::string render_table(const nlohmann::json& g) {
  const auto& c = g.at("context");
  auto ctx = [&](const char* key) { return c.contains(key) ? c[key].get<std::string>() : std::string("-"); };
  std::string out = fmt::format("{} on {} (route {}{}), {} nodes x {} tasks, link {}, host {}, commit {}\n",
                                ctx("copbench_benchmark"), ctx("backend"), ctx("route"),
                                c.contains("encoding") ? ", encoding " + ctx("encoding") : "",
                                ctx("nodes"), ctx("tasks_per_node"), ctx("link_profile"),
                                ctx("host_name"), ctx("commit"));
  out += fmt::format("timer: {}\n", ctx("timer"));

  struct Row {
    std::map<std::string, const nlohmann::json*> agg;
  };
  std::vector<std::string> order;
  std::map<std::string, Row> rows;
  for (const auto& e : g.at("benchmarks")) {
    if (e.value("run_type", "") != "aggregate") continue;
    std::string run = e.at("run_name");
    if (!rows.count(run)) order.push_back(run);
    rows[run].agg[e.at("aggregate_name")] = &e;
  }
  out += fmt::format("{:<36} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>6}  {}\n", "point",
                     "median us", "mean us", "stddev", "min us", "max us", "reps/dis", "CI%", "counters");
  for (const auto& run : order) {
    const Row& r = rows[run];
    auto t = [&](const char* a) { return r.agg.count(a) ? r.agg.at(a)->at("real_time").get<double>() : 0.0; };
    const nlohmann::json& any = *r.agg.begin()->second;
    double mean = t("mean");
    double ci = any.value("ci95_half_us", 0.0);
    // One kept repetition has no interval: "-" (with "!" when the protocol could not
    // take it as met, suite/timing/protocol.cpp).
    const char* missed = any.value("ci_met", false) ? "" : "!";
    std::string ci_text = any.value("repetitions", 0) < 2 ? fmt::format("-{}", missed)
                          : mean > 0                      ? fmt::format("{:.1f}{}", 100.0 * ci / mean, missed)
                                                          : "-";
    std::string counters;
    for (const auto& [key, value] : any.items()) {
      if (kStandardKeys.count(key) || !value.is_number()) continue;
      counters += fmt::format("{}{}={}", counters.empty() ? "" : " ", key, fmt_counter(value.get<double>()));
    }
    out += fmt::format("{:<36} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>6}  {}\n", run,
                       fmt_us(t("median")), fmt_us(mean), fmt_us(t("stddev")), fmt_us(t("min")),
                       fmt_us(t("max")),
                       fmt::format("{}/{}", any.value("repetitions", 0), any.value("discarded_reps", 0)),
                       ci_text, counters);
  }
  out += "CI% = 95 % confidence half-width over mean of the kept repetitions; ! = target of 10 % not met\n";
  // The same in words, one line per point and problem, and each point's timing method.
  std::map<std::string, std::vector<std::string>> by_method;
  for (const auto& run : order) {
    const nlohmann::json& any = *rows[run].agg.begin()->second;
    if (any.contains("timing_method")) by_method[any.at("timing_method").get<std::string>()].push_back(run);
    if (any.contains("warnings"))
      for (const auto& w : any.at("warnings")) out += fmt::format("warning: {}: {}\n", run, w.get<std::string>());
  }
  for (const auto& [method, runs] : by_method)
    out += fmt::format("timing of {}{}: {}\n", runs.front(), runs.size() > 1 ? fmt::format(" and {} more", runs.size() - 1) : "",
                       method);
  return out;
}

}  // namespace copbench
