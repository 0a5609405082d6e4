// The methods table (issue 35): every collective point timed by the window method beside
// the same point timed by the thesis's sync method and by the IMB/OSU loop, with the
// window's invalid calls and the common clock it ran on (suite/timing/window.cpp,
// suite/timing/clock.cpp).
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "copbench/campaign.h"
#include "report/report_parts.h"

namespace copbench::report {
namespace {

using Key = std::tuple<std::string, int, int, std::string, std::string>;  // profile, nodes, tasks, mode, point

Key key_of(const PointMedian& m) {
  std::string mode = m.mode.backend;
  for (const std::string& part : {m.mode.route, m.mode.encoding})
    if (!part.empty()) mode += "/" + part;
  return {m.mode.profile, m.nodes, m.tasks, mode, m.run_name};
}

// The points measured by `method`, by key.
std::map<Key, PointMedian> by_key(const std::filesystem::path& raw, const std::string& method) {
  std::map<Key, PointMedian> out;
  for (PointMedian& m : load_medians(raw, method))
    if (m.method == method) out.emplace(key_of(m), std::move(m));
  return out;
}

std::string clock_cell(const PointMedian& w) {
  if (w.clock_basis == "simulated") return "simulated (exact)";
  if (w.clock_basis.empty()) return "—";
  return fmt::format("{}: |offset| {} us (bound {} us)", w.clock_basis, format_number(w.clock_offset_us),
                     format_number(w.clock_offset_bound_us));
}

}  // namespace

std::optional<ReportTable> methods_table(const std::filesystem::path& campaign_dir) {
  const auto raw = campaign_dir / campaign::kRawDir;
  const auto window = by_key(raw, "window");
  const auto sync = by_key(raw, "sync");
  const auto loop = by_key(raw, "loop");
  ReportTable t;
  t.title = "Collectives by three methods: window (default), sync, loop";
  t.description =
      "Each collective point timed from one start instant on a common clock (window: the last rank's end minus the "
      "instant; ReproMPI, MPIX_Harmonize), after the backend's barrier (sync: the thesis's ch. VI, each rank from its "
      "own release) and back to back (loop: IMB, OSU). sync ÷ window above 1: the barrier's release skew is in the "
      "sync figure. invalid: window calls a rank started late, left out. clock: the common clock's basis and the "
      "ranks' offsets to rank 0 measured by round trips through the backend's messages (max over ranks).";
  t.header = {"backend", "point", "nodes", "window us", "sync us", "loop us", "sync ÷ window", "invalid / calls",
              "W us", "clock"};
  // A campaign of several profiles (the what-if's two platforms) says each row's.
  const bool profiles = std::any_of(window.begin(), window.end(), [&](const auto& e) {
    return std::get<0>(e.first) != std::get<0>(window.begin()->first);
  });
  if (profiles) t.header.insert(t.header.begin() + 1, "profile");
  for (const auto& [key, w] : window) {
    auto s = sync.find(key);
    if (s == sync.end()) continue;
    auto l = loop.find(key);
    const std::string mode = std::get<3>(key);
    t.rows.push_back({mode, w.run_name, std::to_string(w.nodes) + (w.tasks > 1 ? "x" + std::to_string(w.tasks) : ""),
                      format_number(w.median_us), format_number(s->second.median_us),
                      l == loop.end() ? "—" : format_number(l->second.median_us),
                      w.median_us > 0 ? format_ratio(s->second.median_us / w.median_us) : "—",
                      fmt::format("{} / {}", w.invalid_calls, w.timed_calls),
                      format_number(w.window_us),
                      clock_cell(w)});
    if (profiles) t.rows.back().insert(t.rows.back().begin() + 1, std::get<0>(key));
  }
  if (t.rows.empty()) return std::nullopt;
  return t;
}

}  // namespace copbench::report
