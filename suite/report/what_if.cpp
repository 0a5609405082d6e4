// COP on today's network vs Open MPI's algorithms on the same network (what_if.h).
#include "report/what_if.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "copbench/bench.h"
#include "copbench/campaign.h"
#include "copbench/csv.h"

namespace copbench::report {
namespace fs = std::filesystem;

namespace {

using campaign::simulated_platform;

// An operation as the what-if compares it: its family and size.
using OpKey = std::pair<std::string, double>;  // plot_family, bytes (-1: none)

std::string op_label(const OpKey& op) {
  return op.second < 0 ? op.first : fmt::format("{} {}B", op.first, format_size(std::size_t(op.second)));
}

// One platform's, one operation's simulated times at one node count.
struct Pair {
  std::optional<double> cop_us, mpi_us;
};
// platform -> operation -> nodes -> the two times.
using Pairs = std::map<std::string, std::map<OpKey, std::map<int, Pair>>>;

// The points of the method the report reads (load_results: the window method's by default)
// with one task per node (loop points overlap their calls).
Pairs collect(const CampaignResults& results) {
  Pairs all;
  for (const PointMedian& m : results.medians) {
    const std::string platform = simulated_platform(m.mode.profile);
    if (platform.empty() || m.tasks != 1 || m.loop) continue;
    // A simulated backend (backends.json "simulates"): of the studied system (sim-cop) or of
    // the other one simulated (smpi: mpi).
    const BackendSpec* spec = find_backend_spec(m.mode.backend);
    if (!spec || spec->simulates.empty()) continue;
    Pair& p = all[platform][{m.plot_family, m.bytes.value_or(-1)}][m.nodes];
    (spec->simulates == studied_backend().name ? p.cop_us : p.mpi_us) = m.median_us;
  }
  // Only the node counts with both times: the table compares, it does not list.
  for (auto& [platform, ops] : all) {
    for (auto& [op, by_nodes] : ops)
      std::erase_if(by_nodes, [](const auto& e) { return !e.second.cop_us || !e.second.mpi_us; });
    std::erase_if(ops, [](const auto& e) { return e.second.empty(); });
  }
  std::erase_if(all, [](const auto& e) { return e.second.empty(); });
  return all;
}

double ratio_of(const Pair& p) { return *p.mpi_us / *p.cop_us; }

std::string faster_of(double ratio) { return ratio > 1 ? "COP" : ratio < 1 ? "Open MPI" : "equal"; }

// Where Open MPI ÷ COP crosses 1 between two consecutive node counts.
struct Crossover {
  std::string text;            // "COP faster from 64 nodes (Open MPI at 32)", "none: ..."
  std::optional<int> cop_from;  // the first node count of the last run of COP-faster counts reaching the largest
};
Crossover crossover_of(const std::map<int, Pair>& by_nodes) {
  std::vector<std::pair<int, double>> r;
  for (const auto& [nodes, p] : by_nodes) r.emplace_back(nodes, ratio_of(p));
  std::vector<std::string> changes;
  for (std::size_t i = 1; i < r.size(); ++i)
    if ((r[i - 1].second > 1) != (r[i].second > 1))
      changes.push_back(fmt::format("{} faster from {} nodes ({} at {})", faster_of(r[i].second) == "COP" ? "COP" : "Open MPI",
                                    r[i].first, faster_of(r[i - 1].second), r[i - 1].first));
  Crossover c;
  const auto span = fmt::format("{}-{} nodes", r.front().first, r.back().first);
  if (changes.empty())
    c.text = r.front().second > 1 ? "none: COP faster at every node count (" + span + ")"
                                  : "none: Open MPI faster (or equal) at every node count (" + span + ")";
  else
    for (const std::string& s : changes) c.text += (c.text.empty() ? "" : "; ") + s;
  if (r.back().second > 1) {
    std::size_t i = r.size() - 1;
    while (i > 0 && r[i - 1].second > 1) --i;
    c.cop_from = r[i].first;
  }
  return c;
}

std::optional<double> number(const std::string& text, const std::string& where, bool optional) {
  if (optional && text.empty()) return std::nullopt;
  std::size_t end = 0;
  double v = 0;
  try {
    v = std::stod(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  if (end != text.size() || !(v > 0)) throw std::runtime_error(fmt::format("{}: '{}' is not a positive number", where, text));
  return v;
}

std::string ratio_note() {
  const SimulatedNames& n = simulated_names();
  return fmt::format(
      "Open MPI ÷ COP: {1}'s simulated time over {0}'s on the same platform, the same operation and node count "
      "(the collective method the report reads, the window method unless --collective-method names another; one "
      "task per node); above 1 the COP is faster. {1} runs Open MPI's collective algorithms "
      "(SMPI's ompi selector; the broadcast by the binomial tree, the barrier from 256 ranks on by the tree, "
      "baselines/backends.json); {0} "
      "runs the controller core and libcop's commands on the platform's COP side.",
      n.of_studied, n.other);
}

// "COP (sim-cop)" and "Open MPI (smpi)": a side of the comparison and its backend.
std::string cop_side() { return "COP (" + simulated_names().of_studied + ")"; }
std::string mpi_side() { return "Open MPI (" + simulated_names().other + ")"; }
}  // namespace

std::vector<InNetworkRow> load_in_network_rows(const fs::path& file) {
  const CsvFile csv = read_csv(file, "in-network collectives table");
  const std::vector<std::string> want = {"system", "network", "operation", "nodes", "in_network_us", "host_based_us", "source"};
  if (csv.header != want)
    throw std::runtime_error(fmt::format("{}:1: header must be {}", file.string(), fmt::join(want, ",")));
  std::vector<InNetworkRow> rows;
  for (const CsvRecord& r : csv.records) {
    const std::string where = fmt::format("{}:{}", file.string(), r.line);
    InNetworkRow row;
    row.system = r.fields[0];
    row.network = r.fields[1];
    row.operation = r.fields[2];
    row.source = r.fields[6];
    if (row.source.empty()) throw std::runtime_error(where + ": a published latency needs its source");
    row.nodes = int(*number(r.fields[3], where, false));
    row.in_network_us = *number(r.fields[4], where, false);
    row.host_based_us = number(r.fields[5], where, true);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<ReportTable> what_if_table(const CampaignResults& results, const std::vector<InNetworkRow>& published) {
  const Pairs pairs = collect(results);
  if (pairs.empty()) return std::nullopt;
  ReportTable t;
  t.title = "COP on today's network vs Open MPI's algorithms on the same network";
  t.source = fmt::format("{} and {} simulated on each platform (results/platforms/NAME.xml); reference rows: {}",
                         simulated_names().of_studied, simulated_names().other, kInNetworkFile);
  t.description =
      "Per platform, operation and node count the COP's simulated time, Open MPI's on the same network and their "
      "ratio; then published latencies of in-network collectives (measured on their vendors' hardware, not "
      "simulated here), each with its source.";
  t.header = {"row", "network", "operation", "nodes", "in-network µs", "software µs", "software ÷ in-network", "faster",
              "source"};
  // Simulated rows: the COP is the in-network side, Open MPI the software side.
  for (const auto& [platform, ops] : pairs)
    for (const auto& [op, by_nodes] : ops)
      for (const auto& [nodes, p] : by_nodes)
        t.rows.push_back({"simulated", platform, op_label(op), std::to_string(nodes), format_number(*p.cop_us),
                          format_number(*p.mpi_us), format_ratio(ratio_of(p)), faster_of(ratio_of(p)),
                          fmt::format("{} (COP) and {} (Open MPI), this campaign", simulated_names().of_studied,
                                      simulated_names().other)});
  for (const InNetworkRow& r : published)
    t.rows.push_back({"published: " + r.system, r.network, r.operation, std::to_string(r.nodes),
                      format_number(r.in_network_us), r.host_based_us ? format_number(*r.host_based_us) : "—",
                      r.host_based_us ? format_ratio(*r.host_based_us / r.in_network_us) : "—",
                      r.host_based_us ? (*r.host_based_us > r.in_network_us ? "in-network" : "software") : "—",
                      r.source});
  t.notes.push_back(ratio_note());
  t.notes.push_back(fmt::format("In the simulated rows, in-network µs is the COP's ({}), software µs Open MPI's ({}); in "
                                "the published rows, the source's in-network latency and, where it gives one, its "
                                "host-based (software) time of the same operation on the same machine.",
                                simulated_names().of_studied, simulated_names().other));
  if (published.empty()) t.notes.push_back(std::string("no reference rows: ") + kInNetworkFile + " was not found or is empty");
  return t;
}

std::optional<ReportTable> what_if_crossover_table(const CampaignResults& results) {
  const Pairs pairs = collect(results);
  if (pairs.empty()) return std::nullopt;
  ReportTable t;
  t.title = "Where the COP overtakes Open MPI on the same network";
  t.source = "the what-if table's simulated rows";
  t.description = "Per platform and operation: Open MPI ÷ COP at the fewest and the most nodes compared, and the node "
                  "counts between which the ratio crosses 1.";
  t.header = {"network", "operation", "nodes", "ratio at fewest", "ratio at most", "crossover", "COP faster from"};
  for (const auto& [platform, ops] : pairs)
    for (const auto& [op, by_nodes] : ops) {
      const Crossover c = crossover_of(by_nodes);
      t.rows.push_back({platform, op_label(op),
                        fmt::format("{}-{} ({} counts)", by_nodes.begin()->first, by_nodes.rbegin()->first, by_nodes.size()),
                        format_ratio(ratio_of(by_nodes.begin()->second)), format_ratio(ratio_of(by_nodes.rbegin()->second)),
                        c.text, c.cop_from ? std::to_string(*c.cop_from) + " nodes" : "—"});
    }
  t.notes.push_back(ratio_note());
  t.notes.push_back("COP faster from: the first node count of the run of counts, reaching the largest compared, at which "
                    "the COP is faster (— where Open MPI is faster at the largest).");
  return t;
}

std::vector<PlotSpec> what_if_plots(const CampaignResults& results, const std::string& campaign) {
  std::vector<PlotSpec> out;
  for (const auto& [platform, ops] : collect(results)) {
    PlotSpec ratio;
    ratio.stem = "what-if-ratio-" + platform;
    ratio.title = fmt::format("Open MPI ÷ COP vs nodes on platform {} (above 1: COP faster) — campaign {}", platform, campaign);
    ratio.xlabel = "nodes";
    ratio.ylabel = mpi_side() + " ÷ " + cop_side();
    ratio.log_x = true;
    ratio.x_bytes = false;
    int lo = 0, hi = 0;
    for (const auto& [op, by_nodes] : ops) {
      PlotSpec times;
      const std::string label = op_label(op);
      times.stem = fmt::format("what-if-{}-{}", label, platform);
      std::replace(times.stem.begin(), times.stem.end(), '/', '-');
      std::replace(times.stem.begin(), times.stem.end(), ' ', '-');
      times.title = fmt::format("{} vs nodes on platform {}: COP and Open MPI on the same network — campaign {}", label,
                                platform, campaign);
      times.xlabel = "nodes";
      times.ylabel = "time per operation [µs]";
      times.log_x = true;
      times.x_bytes = false;
      const std::string cop = cop_side(), mpi = mpi_side();
      times.curve_order = {cop, mpi};
      ratio.curve_order.push_back(label);
      for (const auto& [nodes, p] : by_nodes) {
        times.curves[cop].emplace_back(nodes, *p.cop_us);
        times.curves[mpi].emplace_back(nodes, *p.mpi_us);
        ratio.curves[label].emplace_back(nodes, ratio_of(p));
        lo = lo ? std::min(lo, nodes) : nodes;
        hi = std::max(hi, nodes);
      }
      out.push_back(std::move(times));
    }
    const std::string equal = "1 (equal)";
    ratio.curve_order.push_back(equal);
    ratio.curves[equal] = {{lo, 1.0}, {hi, 1.0}};
    out.push_back(std::move(ratio));
  }
  return out;
}

}  // namespace copbench::report
