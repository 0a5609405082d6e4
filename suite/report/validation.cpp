// Simulated against modelled and measured (validation.h).
#include "report/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "copbench/bench.h"
#include "copbench/campaign.h"
#include "model/scale.h"

namespace copbench::report {

namespace {

using campaign::simulated_platform;

constexpr const char* kCalibrated = "calibrated";
const std::set<std::string> kValidatedFamilies = {"echo", "barrier", "reduce/double", "reduce/int", "broadcast"};

bool is_simulated(const PointMedian& m) { return !simulated_platform(m.mode.profile).empty(); }

std::string relative_error(double simulated, double reference) {
  return reference > 0 ? fmt::format("{:+.1f} %", (simulated / reference - 1) * 100) : "—";
}

std::string size_of(const PointMedian& m) { return m.bytes ? format_size(std::size_t(*m.bytes)) + "B" : ""; }

// The measured point of `backend` at the simulated point's benchmark, size and nodes.
const PointMedian* measured_twin(const CampaignResults& measured, const PointMedian& sim, const std::string& backend) {
  for (const PointMedian& m : measured.medians)
    if (!is_simulated(m) && m.mode.backend == backend && m.run_name == sim.run_name && m.nodes == sim.nodes &&
        m.tasks == 1 && m.placement != "on-host")
      return &m;
  return nullptr;
}

// smpi's calibrated points that mpi measured: the check of the calibration.
bool smpi_validated(const PointMedian& m) {
  if (m.mode.backend != "smpi" || simulated_platform(m.mode.profile) != kCalibrated) return false;
  if (m.nodes < 2 || m.nodes > 4 || !kValidatedFamilies.count(m.plot_family)) return false;
  if (m.plot_family.rfind("reduce", 0) == 0) return m.bytes && *m.bytes == 8;
  if (m.plot_family == "broadcast") return m.bytes && *m.bytes == 1024;
  return true;
}

void add_curve_point(PlotSpec& p, const std::string& label, double x, double y) {
  if (!p.curves.count(label)) p.curve_order.push_back(label);
  p.curves[label].emplace_back(x, y);
}

}  // namespace

std::optional<double> cop_model_us(const PointMedian& m) {
  using cop::model::DataType;
  using cop::model::Function;
  const cop::model::Timing timing;
  const auto elements_of = [&] {
    const auto e = m.counters.find("elements");
    if (e != m.counters.end()) return uint64_t(std::max(1.0, e->second));
    return uint64_t(std::max(1.0, std::ceil(m.bytes.value_or(8) / 8)));
  };
  if (m.nodes < 2 || m.nodes > 4096) return std::nullopt;
  const uint64_t n = uint64_t(m.nodes);
  if (m.plot_family == "barrier") return cop::model::scale_analytic_us(Function::barrier_spmd, DataType::integer, timing, n, 1);
  if (m.plot_family == "reduce/double" || m.plot_family == "reduce/int")
    return cop::model::scale_analytic_us(Function::reduce,
                                         m.plot_family == "reduce/double" ? DataType::floating : DataType::integer, timing,
                                         n, elements_of());
  if (m.plot_family == "broadcast") return cop::model::scale_analytic_us(Function::bcast, DataType::integer, timing, n, elements_of());
  return std::nullopt;
}

std::optional<ReportTable> validation_table(const CampaignResults& simulated, const CampaignResults& measured) {
  ReportTable t;
  t.title = "Simulation checked against the model and the measurements";
  t.source = "sim-cop vs cop/model (seed 000 ch. VI); smpi on the calibrated platform vs mpi measured";
  t.description =
      "Each simulated point beside what it simulates: sim-cop beside the COP's analytic model (one controller up to 64 "
      "nodes, two levels above), smpi on the platform calibrated by `copbench simulate calibrate` beside the mpi points "
      "measured on the cluster it was fitted to. Relative error = simulated / reference - 1.";
  t.header = {"check", "point", "platform", "nodes", "simulated µs", "reference µs", "reference", "relative error"};
  bool any = false;
  for (const PointMedian& m : simulated.medians) {
    if (!is_simulated(m)) continue;
    any = true;
    const std::string platform = simulated_platform(m.mode.profile);
    if (m.mode.backend == "sim-cop") {
      if (auto model = cop_model_us(m))
        t.rows.push_back({"sim-cop vs cop model", m.run_name, platform, std::to_string(m.nodes), format_number(m.median_us),
                          format_number(*model), "modelled (analytic)", relative_error(m.median_us, *model)});
    } else if (smpi_validated(m)) {
      const PointMedian* mpi = measured_twin(measured, m, "mpi");
      t.rows.push_back({"smpi (calibrated) vs mpi", m.run_name, platform, std::to_string(m.nodes),
                        format_number(m.median_us), mpi ? format_number(mpi->median_us) : "—",
                        mpi ? "measured (" + mpi->mode.profile + ")" : "not measured",
                        mpi ? relative_error(m.median_us, mpi->median_us) : "—"});
    }
  }
  if (!any) return std::nullopt;
  // By check, point (without its node count), platform and node count (as a number).
  const auto key = [](const std::vector<std::string>& row) {
    return std::make_tuple(row[0], row[1].substr(0, row[1].find("/nodes:")), row[2], std::stoi(row[3]));
  };
  std::stable_sort(t.rows.begin(), t.rows.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  if (t.rows.empty()) t.notes.push_back("no simulated point here has a modelled or measured twin");
  return t;
}

std::vector<PlotSpec> validation_plots(const CampaignResults& simulated, const CampaignResults& measured,
                                       const std::string& campaign) {
  // One plot per platform and operation (family and size).
  std::map<std::tuple<std::string, std::string, double>, PlotSpec> plots;
  for (const PointMedian& m : simulated.medians) {
    if (!is_simulated(m) || m.tasks != 1) continue;
    const std::string platform = simulated_platform(m.mode.profile);
    PlotSpec& p = plots[{platform, m.plot_family, m.bytes.value_or(-1)}];
    if (p.stem.empty()) {
      const std::string size = size_of(m);
      p.stem = fmt::format("simulated-{}{}-{}", m.plot_family, size.empty() ? "" : "-" + size, platform);
      std::replace(p.stem.begin(), p.stem.end(), '/', '-');
      p.title = fmt::format("{}{} vs nodes on platform {} — campaign {}", m.plot_family, size.empty() ? "" : " " + size,
                            platform, campaign);
      p.xlabel = "nodes";
      p.ylabel = "time per operation [µs]";
      p.log_x = true;
      p.x_bytes = false;
    }
    add_curve_point(p, fmt::format("{} simulated ({})", m.mode.backend, platform), m.nodes, m.median_us);
    if (auto model = cop_model_us(m)) add_curve_point(p, "cop modelled (ch. VI analytic)", m.nodes, *model);
    for (const char* backend : {"mpi", "cop", "pvm", "armci"})
      if (const PointMedian* real = measured_twin(measured, m, backend))
        add_curve_point(p, fmt::format("{} measured ({})", backend, real->mode.profile), m.nodes, real->median_us);
  }
  std::vector<PlotSpec> out;
  for (auto& [key, p] : plots) {
    for (auto& [label, points] : p.curves) {
      std::sort(points.begin(), points.end());
      points.erase(std::unique(points.begin(), points.end()), points.end());
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace copbench::report
