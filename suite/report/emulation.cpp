// The emulation's floor in the report (the `emulation` benchmark, suite/bench/emulation.cpp;
// the floor itself baselines/cop/floor.h): the emulation table, the cop ÷ floor plot, and
// the floor that the summary table and the nodes plots put beside cop.
#include <algorithm>

#include <fmt/format.h>

#include "report/report_parts.h"

namespace copbench::report {
namespace {

// "barrier", "reduce/double/size:8", ...: the emulation point's operation (its name after
// "<workload>/", ReportTraits::floors_of_points).
std::string operation_of(const PointMedian& m) {
  const std::string prefix = workload_of(m) + "/";
  std::string op = m.run_name.rfind(prefix, 0) == 0 ? m.run_name.substr(prefix.size()) : m.run_name;
  if (auto at = op.find("/nodes:"); at != std::string::npos) op.erase(at);
  return op;
}

// The operations in the benchmark's order (barrier, small, then arrays), else by name.
int operation_rank(const std::string& op) {
  static const std::vector<std::string> order = {"barrier",          "reduce/double/size:8", "broadcast/size:8",
                                                 "broadcast/size:16384", "reduce/int/size:8192",
                                                 "reduce/double/size:8192"};
  auto it = std::find(order.begin(), order.end(), op);
  return it == order.end() ? static_cast<int>(order.size()) : static_cast<int>(it - order.begin());
}

std::vector<const PointMedian*> emulation_points(const CampaignResults& results) {
  std::vector<const PointMedian*> v;
  for (const auto& m : results.medians)
    if (!m.loop && traits_of(m).floors_of_points) v.push_back(&m);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) {
    return std::make_tuple(a->mode.profile, a->nodes, a->tasks, operation_rank(operation_of(*a)), operation_of(*a),
                           a->mode) < std::make_tuple(b->mode.profile, b->nodes, b->tasks,
                                                      operation_rank(operation_of(*b)), operation_of(*b), b->mode);
  });
  return v;
}

std::string cell(std::optional<double> v, bool ratio = false) {
  return v ? (ratio ? format_ratio(*v) : format_number(*v)) : "—";
}

std::string setting(const PointMedian& m, const char* key) {
  auto it = m.settings.find(key);
  return it == m.settings.end() ? "—" : it->second;
}

}  // namespace

std::optional<double> cop_floor_of(const CampaignResults& results, const PointMedian& m) {
  // Only a backend with a floor (backends.json offers floor-loops: cop) has a twin there.
  const BackendSpec* spec = find_backend_spec(m.mode.backend);
  if (!spec || !spec->offers(Op::floor_loops) || m.loop) return std::nullopt;
  if (auto own = counter(m, "floor_us")) return own;
  for (const auto& e : results.medians)
    if (!e.loop && e.run_name == workload_of(e) + "/" + m.run_name && e.nodes == m.nodes && e.tasks == m.tasks &&
        e.mode.profile == m.mode.profile && e.mode.backend == m.mode.backend && traits_of(e).floors_of_points)
      if (auto f = counter(e, "floor_us")) return f;
  return std::nullopt;
}

std::optional<ReportTable> emulation_table(const CampaignResults& results) {
  const auto points = emulation_points(results);
  if (points.empty()) return std::nullopt;
  const bool crowded = std::any_of(points.begin(), points.end(),
                                   [&](const PointMedian* m) { return results.machine.crowded(m->nodes); });
  ReportTable t;
  t.title = "cop beside its transport's floor";
  t.source = "the emulation benchmark (suite/bench/emulation.cpp; the floor: baselines/cop/floor.h)";
  t.description =
      "The same operation through the emulated COP (libcop, copdrv, copd) and through its floor: one bare floor "
      "controller process on the COP network that receives the call's link frames (an array: its data bytes behind a "
      "frame header) from every rank with recvmmsg and answers with sendmmsg, no COP logic, no MAC; both timed by the "
      "sync method (cop µs, floor µs) and by the window method (one start instant on the common clock: no barrier's "
      "release skew, which flatters the sync method's floor), repetitions interleaved, every result of both checked "
      "against a local computation. CPU per "
      "operation per channel: the controller process's CPU clock (copd's, the floor controller's) around the "
      "operations, each after a barrier on the other controller (cop's after a floor barrier, the floor's after a cop "
      "barrier), divided by the channels.";
  t.header = {"nodes"};
  if (crowded) t.header.push_back("emulated hosts per core");
  if (results.multi_profile) t.header.push_back("profile");
  t.header.insert(t.header.end(), {"operation", "mode", "cop µs", "floor µs", "cop ÷ floor", "cop µs (window)",
                                   "floor µs (window)", "cop ÷ floor (window)", "copd CPU µs/op/channel",
                                   "floor CPU µs/op/channel", "copd ÷ floor CPU", "copd I/O threads", "copd poll",
                                   "COP_POLL_US"});
  for (const PointMedian* m : points) {
    std::vector<std::string> row = {std::to_string(m->nodes)};
    if (crowded) row.push_back(results.machine.crowded(m->nodes) ? results.machine.per_core(m->nodes) : "—");
    if (results.multi_profile) row.push_back(m->mode.profile);
    row.push_back(operation_of(*m));
    row.push_back(results.label(m->mode));
    row.push_back(format_number(m->median_us) + (m->ci_met ? "" : " !"));
    row.push_back(cell(counter(*m, "floor_us")));
    row.push_back(cell(counter(*m, "cop_over_floor"), true));
    row.push_back(cell(counter(*m, "window_us")));
    row.push_back(cell(counter(*m, "floor_window_us")));
    row.push_back(cell(counter(*m, "cop_over_floor_window"), true));
    row.push_back(cell(counter(*m, "copd_cpu_us_per_channel")));
    row.push_back(cell(counter(*m, "floor_cpu_us_per_channel")));
    row.push_back(cell(counter(*m, "copd_cpu_over_floor"), true));
    for (const char* key : kEmulationSettings) row.push_back(setting(*m, key));
    t.rows.push_back(std::move(row));
  }
  t.notes = {"cop ÷ floor near 1: the operation costs what the transport costs; well above: the emulation's own work "
             "(copd's core, the link protocol, libcop) is what is measured, not the transport.",
             "(window) —: the run did not time by the window method (its methods: copbench run --methods, a campaign's "
             "methods:).",
             "copd CPU —: copd was not on the machine rank 0 ran on (a cluster's controller host), so its CPU was not read.",
             "copd I/O threads, copd poll, COP_POLL_US: as the point's result context recorded them (default: not set).",
             "`!` marks a cop median whose 95 % confidence interval missed 10 % of the mean."};
  if (crowded)
    t.notes.push_back(fmt::format("emulated hosts per core: the nodes were emulated hosts sharing the machine's {} "
                                  "cores; {}.",
                                  results.machine.cpus, HostsOnCores::kNote));
  return t;
}

std::vector<PlotSpec> emulation_plots(const CampaignResults& results, const std::string& campaign_name) {
  const auto points = emulation_points(results);
  std::set<int> nodes;
  for (auto* m : points) nodes.insert(m->nodes);
  if (points.empty() || nodes.size() < 2) return {};
  PlotSpec p;
  p.stem = "emulation-cop-over-floor";
  p.title = fmt::format("cop ÷ its transport's floor vs nodes — campaign {}, profile {}", campaign_name,
                        results.profile_text());
  p.xlabel = "nodes";
  p.ylabel = "cop ÷ floor (time; CPU per channel)";
  p.x_bytes = false;
  std::vector<const PointMedian*> by_op = points;
  std::stable_sort(by_op.begin(), by_op.end(), [](auto* a, auto* b) {
    return operation_rank(operation_of(*a)) < operation_rank(operation_of(*b));
  });
  auto add = [&](const std::string& label, double x, double y) {
    if (!p.curves.count(label)) p.curve_order.push_back(label);
    p.curves[label].emplace_back(x, y);
  };
  const bool profiles = results.multi_profile;
  // One curve per operation and figure: the time ratio by each method, then the CPU ratio.
  const std::pair<const char*, const char*> figures[] = {
      {"cop_over_floor", " time"}, {"cop_over_floor_window", " time (window)"}, {"copd_cpu_over_floor", " CPU per channel"}};
  for (const auto& [key, what] : figures)
    for (auto* m : by_op) {
      const std::string op = operation_of(*m) + (profiles ? " " + m->mode.profile : "");
      if (auto r = counter(*m, key)) add(op + what, m->nodes, *r);
    }
  if (p.curves.empty()) return {};
  if (results.machine.crowded(*nodes.rbegin())) {
    p.title += " — " + results.machine.text(*nodes.rbegin());
    p.note = HostsOnCores::kNote;
  }
  return {p};
}

}  // namespace copbench::report
