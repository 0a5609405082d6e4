// The parts of `copbench report` (suite/report/ and its unit tests only): the campaign's
// results as loaded (load_results.cpp), the tables (tables.cpp, seed_table.cpp,
// reference_campaign.cpp), the seeds' published cells (seed_cells.cpp), the plots
// (plots.cpp) and index.md (index.cpp). Each builder is a function of loaded data, so a
// test can give it fixed data and read what it builds.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "copbench/backend.h"
#include "copbench/bench.h"
#include "copbench/catalog.h"
#include "copbench/report.h"

namespace copbench::report {

// ------------------------------------------------------------------ the campaign's results

// One backend in one mode (route, encoding) on one link profile: a column of the tables,
// a curve of the plots.
struct BackendMode {
  std::string backend, route, encoding, profile;
  // "pvm/direct/raw", with " PROFILE" after it when `with_profile`.
  std::string label(bool with_profile) const;
  // Its backend's report_order (backends.json): cop first (the system under study), then
  // the baselines in the order the thesis names them, then the others.
  int rank() const;
  auto key() const { return std::make_tuple(profile, rank(), backend, route, encoding); }
  bool operator<(const BackendMode& o) const { return key() < o.key(); }
  bool operator==(const BackendMode& o) const { return key() == o.key(); }
};

// The median aggregate of one point of one result file (raw/*.json).
struct PointMedian {
  std::string benchmark, run_name, family;
  // The family without its placement ("echo/on-host" -> "echo"): on-host and inter-host
  // echo are curves of one plot, like the thesis's Figure 15.
  std::string plot_family;
  std::string placement;  // the point's label placement=on-host|inter-host (echo), else ""
  BackendMode mode;
  int nodes = 0;
  int tasks = 1;  // tasks per node: a point with several is never mixed with one without
  std::optional<double> bytes;
  double median_us = 0;
  std::optional<double> modelled_us;
  bool ci_met = true;
  std::map<std::string, double> counters;
  std::string source;  // the raw file's stem
  bool loop = false;   // measured by the loop method (its name had method:loop/)
  // A collective's timing method (suite/bench/common.h): "window" (the default, issue 35),
  // "sync" or "loop"; "" for a point that is not a collective's. A result from before the
  // window method names its sync points plainly: those read as "sync".
  std::string method;
  long timed_calls = 0, invalid_calls = 0;  // the window method's calls, and those left out
  double clock_bound_us = 0;                // the window method's common-clock error bound
  double window_us = 0;                     // the window method's final W
  std::string clock_basis;                  // simulated, one-kernel, estimated ("" for other methods)
  double clock_offset_us = 0, clock_offset_bound_us = 0;  // the ranks' offsets measured by round trips
  // The system's settings its result's context names (kEmulationSettings: copd's I/O
  // threads and polling, COP_POLL_US), where it names them.
  std::map<std::string, std::string> settings;
};
// The point's workload: the result's copbench_benchmark, else (a result without one) its
// name's first part.
std::string workload_of(const PointMedian& m);
// The report traits its workload declares (copbench/bench.h); none for a workload this
// build does not know.
ReportTraits traits_of(const PointMedian& m);
// The point's counter `key`, when its result has it.
inline std::optional<double> counter(const PointMedian& m, const std::string& key) {
  auto it = m.counters.find(key);
  if (it == m.counters.end()) return std::nullopt;
  return it->second;
}
inline constexpr const char* kEmulationSettings[] = {"copd_io_threads", "copd_poll", "cop_poll_us"};
// The COP a sim-cop point simulated (baselines/simcop/platform.cpp, record_cop_hardware):
// the report computes the libcop-call model with it (validation.cpp).
inline constexpr const char* kCopHardwareSettings[] = {"cop_clock_ns",      "cop_link_bytes_per_s", "cop_flight_cycles",
                                                       "cop_t_cn_cop",      "cop_t_cop_cn",         "cop_t_op_int",
                                                       "cop_t_op_fp",       "cop_full_duplex"};

// A point that did not run (status/*.json): "not offered", "skipped" or "failed", and why.
struct PointStatus {
  std::string point, benchmark, status, reason;
  BackendMode mode;
  int nodes = 0;
  int tasks = 1;
};

// Sorts on-host before inter-host before unplaced points of one backend mode.
int placement_rank(const std::string& placement);

// The machine the hosts ran on, where they were emulated on it (the manifest's
// machine.cpus and cluster.emulated, unless every profile was simulated): with more hosts than cores the hosts take turns
// on the cores, and above a few per core a time is the machine's scheduling, not the
// network the thesis measures (seed 000 ch. VI: one workstation per host).
struct HostsOnCores {
  int cpus = 0;
  bool emulated = false;
  // More emulated hosts than cores at `nodes`.
  bool crowded(int nodes) const { return emulated && cpus > 0 && nodes > cpus; }
  // "64 emulated hosts on 2 cores: 32 per core" where crowded(nodes), else "".
  std::string text(int nodes) const;
  // Hosts per core ("32", "2.5") where crowded(nodes), else "".
  std::string per_core(int nodes) const;
  static constexpr const char* kNote =
      "above a few emulated hosts per core the measured times show the machine (hosts waiting for a core), "
      "not the network";
};
HostsOnCores hosts_on_cores(const nlohmann::json& manifest);

// Everything a campaign directory measured, and what the tables' layout depends on.
struct CampaignResults {
  HostsOnCores machine;                    // where the hosts ran (load_results reads the manifest)
  std::vector<PointMedian> medians;
  std::vector<PointStatus> statuses;
  std::set<BackendMode> modes;
  std::set<std::string> profiles;
  bool multi_profile = false;
  bool multi_tasks = false;                // some point ran with several tasks per node
  std::set<std::string> multi_encoding;    // backends measured with more than one encoding

  // Fills the sets and flags from `medians` and `statuses`.
  void index_modes();
  // A backend measured with one encoding throughout is named without it.
  std::string label(BackendMode mode, bool with_profile) const;
  std::string label(const BackendMode& mode) const { return label(mode, multi_profile); }
  const PointMedian* find(const BackendMode& mode, const std::string& run_name, int nodes, int tasks) const;
  // "not offered" / "skipped" / "failed" when the point of this cell did not run, else "—".
  std::string missing_cell(const BackendMode& mode, const std::string& benchmark, int nodes, int tasks) const;
  // The modes without their profile, sorted: the columns of a table, one block per profile.
  std::vector<BackendMode> column_modes() const;
  std::string profile_text() const;  // "native+fast-ethernet"
  std::size_t count_done() const;    // measured points (mode, benchmark, nodes, tasks)
};

// A collective's points come three ways (suite/bench/common.h, measure_collective): the
// window method under the plain name, the thesis's sync method (ch. VI) and the loop
// method of IMB and OSU with "method:sync/" or "method:loop/" before the last part. Of
// each point's twins `method` (window, sync, loop) keeps the one measured that way, under
// the plain name, else the plainly named one (a result from before the window method:
// its sync point); every other twin is dropped.
std::vector<PointMedian> load_medians(const std::filesystem::path& raw_dir, const std::string& method);
std::vector<PointStatus> load_statuses(const std::filesystem::path& status_dir);
CampaignResults load_results(const std::filesystem::path& campaign_dir, const std::string& method);
// index.md's row saying how the collectives shown were timed, with the window method's
// invalid calls and clock bound over every point shown.
std::string collective_method_row(const std::string& method, const CampaignResults& results);
// index.md's row of whole runs timed by the window method (the applications': each run
// started at one instant of the common clock, apps/common.h), with their invalid runs;
// "" when the campaign has none.
std::string whole_runs_row(const CampaignResults& results);
std::string read_text(const std::filesystem::path& p);

// ------------------------------------------------------------------ tables

std::string format_number(double v);  // 4 significant places, fewer for large values
std::string format_ratio(double v);   // "2.50x"

struct ReportTable {
  std::string title, source, description;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;
  // A seed table's pairing: for each row and backend mode, the point(s) it read or divided.
  std::vector<std::string> pairing_header;
  std::vector<std::vector<std::string>> pairing;

  std::string markdown() const;
  std::string csv() const { return csv_of(header, rows); }
  // Drops the columns named `prefix...` that hold nothing ("—") in every row.
  void drop_empty_columns(const std::string& prefix);
  static std::string csv_of(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
};

// The best (smallest) value of a backend over its modes on one profile.
std::optional<double> best_of(const std::map<BackendMode, double>& values, const std::string& backend,
                              const std::string& profile);
// The baselines of the ratio columns: the backends with a report_order but the studied
// one (backends.json: pvm, mpi, armci), in that order.
std::vector<std::string> ratio_baselines();
// The simulated backends by their declared names (backends.json "simulates"), for the
// report's words: the one that simulates the studied system (sim-cop), another one
// (smpi) and the backend that one simulates (mpi); "" where the catalog has none.
struct SimulatedNames {
  std::string of_studied, other, other_simulates;
};
const SimulatedNames& simulated_names();
std::vector<std::string> ratio_header();
// The studied backend's (cop's) modelled time and each baseline's ratio to it, for one row
// and profile.
std::vector<std::string> ratio_cells(const std::map<BackendMode, double>& values,
                                     const std::map<BackendMode, double>& modelled, const std::string& profile);

// ------------------------------------------------------------------ the emulation's floor

struct PlotSpec;

// Every collective point measured by more than one method: window, sync and loop side by
// side, sync ÷ window, the window's invalid calls and its clock (basis, measured offsets
// and bound). Nothing when the campaign has no point measured both window and sync.
std::optional<ReportTable> methods_table(const std::filesystem::path& campaign_dir);

// The floor beside a cop point (the `emulation` benchmark, baselines/cop/floor.h): its own
// floor_us counter, or that of the emulation point of the same operation
// ("emulation/" + its run name) at the same nodes, tasks per node and profile; nullopt
// where none was measured.
std::optional<double> cop_floor_of(const CampaignResults& results, const PointMedian& m);
// One row per node count and operation of the emulation benchmark: cop, floor, cop ÷
// floor, copd's and the floor controller's CPU per operation per channel, the settings;
// nullopt without emulation points.
std::optional<ReportTable> emulation_table(const CampaignResults& results);
// cop ÷ floor against nodes, a curve per operation (the CPU ratio dashed beside it).
std::vector<PlotSpec> emulation_plots(const CampaignResults& results, const std::string& campaign_name);

// Every point, one column per backend mode.
ReportTable summary_table(const CampaignResults& results, const std::string& campaign_name);
// Thesis Table V from the md application (apps/md); nullopt without md points.
std::optional<ReportTable> md_table_v(const CampaignResults& results);

// The campaign's `reference:` comparison (copbench compare's verdicts against an earlier
// campaign); nullopt with result.reference_problem set (or empty) when there is none.
inline constexpr const char* kReferenceTable = "reference-campaign";
std::optional<ReportTable> reference_campaign_table(const nlohmann::json& manifest, const std::filesystem::path& dir,
                                                    ReportOutput& result);

// ------------------------------------------------------------------ seed tables

// A seed table as data: one published cell per line. The optional columns say what a
// row needs beyond its benchmarks (`needs`: operation names, as `copbench list` prints
// them), which benchmark writes the point a ratio divides by (`over_benchmark`, default
// `benchmark`), where our points are not the seed's method (`note`), and the spread the
// seed states for its number (`tolerance`, in the row's unit: "X" for value ± X, "-A+B"
// for value - A to value + B).
struct SeedCell {
  std::string source, table, row, column, unit, benchmark, point, metric, backend;
  double value = 0;
  std::optional<int> nodes;
  std::string over_benchmark, note;
  std::vector<Op> needs;
  std::optional<std::pair<double, double>> spread;  // below, above the value
};

// "X" -> (X, X); "-A+B" -> (A, B); nullopt with `why` set on anything else.
std::optional<std::pair<double, double>> parse_spread(const std::string& text, std::string& why);
// Throws std::runtime_error "FILE:LINE: reason" on a cell that is not a seed cell.
std::vector<SeedCell> load_seed_cells(const std::filesystem::path& file);

// What one row of a seed table read for one backend mode: the point(s), our value or why
// there is none.
struct SeedRowValue {
  std::string point, over;  // the point read (numerator) and the point divided by
  std::optional<double> value, modelled;
  std::string missing;  // why there is no value ("not offered", "failed", "—")
};
// The seeds ran one task per host: only points with one task per node stand beside them.
// A ratio divides two points of the same backend, mode, profile and node count.
SeedRowValue read_seed_row(const CampaignResults& results, const SeedCell& key, const BackendMode& mode, int nodes);
// The node count we compare a seed row at: the seed's if we measured it, else the nearest.
std::optional<int> seed_row_nodes(const CampaignResults& results, const SeedCell& key);
// Ours against one published number with a stated spread.
std::string spread_verdict(double ours, const SeedCell& published);

// The seed table `stem` beside our points, with its pairing.
ReportTable seed_table(const CampaignResults& results, const std::string& stem, const std::vector<SeedCell>& cells);

// ------------------------------------------------------------------ plots

struct PlotSpec {
  std::string stem, title, xlabel, ylabel;
  bool log_x = false;
  bool x_bytes = true;  // with log_x: tics as sizes (1 KB); otherwise plain numbers (nodes)
  std::map<std::string, std::vector<std::pair<double, double>>> curves;  // label -> (x, y)
  std::vector<std::string> curve_order;
  std::string note;
};

std::vector<PlotSpec> plan_plots(const CampaignResults& results, const std::string& campaign_name);
std::string gnuplot_data(const PlotSpec& plot);    // STEM.dat: one block per curve
std::string gnuplot_script(const PlotSpec& plot);  // STEM.gp: PNG and SVG from STEM.dat
// Writes and draws every plot into out/plots; (stem, title) of each drawn one.
std::vector<std::pair<std::string, std::string>> draw_plots(const std::vector<PlotSpec>& plots,
                                                            const std::filesystem::path& out, ReportOutput& result);

// ------------------------------------------------------------------ index.md

struct IndexInputs {
  const nlohmann::json& manifest;
  const CampaignResults& results;
  const ReportOptions& options;
  std::filesystem::path out;
  std::string name, main;
  const std::vector<std::pair<std::string, ReportTable>>& tables;
  const std::vector<std::pair<std::string, std::string>>& plots;
};
std::string index_markdown(const IndexInputs& in, const ReportOutput& result);

}  // namespace copbench::report
