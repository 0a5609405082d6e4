// `copbench simulate calibrate DIR`: a SimGrid platform whose links are fitted to a
// campaign directory's measured echo and bandwidth points (suite/report/simulate.h), for
// the smpi backend to simulate the measured cluster (`--platform NAME` once the file is
// results/platforms/NAME.xml).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "copbench/campaign.h"
#include "copbench/launch.h"
#include "copbench/results.h"
#include "report/simulate.h"

namespace copbench::cli {
namespace {

namespace fs = std::filesystem;
using campaign::kManifest;
using campaign::kRawDir;

struct CalibrateOptions {
  std::string dir;
  std::string backend = "mpi";
  std::string name = "calibrated";
  std::string out;
};

// The campaign directory and what its manifest says of the run (campaign, commit, cluster).
std::string origin_of(const fs::path& dir) {
  std::string origin = dir.lexically_normal().string();  // as given: a file in the repository names no machine's path
  std::ifstream in(dir / kManifest);
  const nlohmann::json m = nlohmann::json::parse(in, nullptr, false);
  if (m.is_discarded() || !m.is_object()) return origin;
  if (m.contains("campaign")) origin += fmt::format(", campaign {}", m["campaign"].get<std::string>());
  if (m.contains("commit")) origin += fmt::format(", commit {}", m["commit"].get<std::string>());
  if (m.contains("cluster") && m["cluster"].contains("name"))
    origin += fmt::format(", cluster {}", m["cluster"]["name"].get<std::string>());
  return origin;
}

void calibrate(const CalibrateOptions& o) {
  const fs::path dir = o.dir;
  if (!fs::is_directory(dir / kRawDir))
    throw std::invalid_argument(fmt::format("{}: no {}/ (not a campaign directory)", o.dir, kRawDir));
  if (o.name.empty() || o.name.find('/') != std::string::npos)
    throw std::invalid_argument(fmt::format("--name '{}': a platform name is a file name", o.name));
  const report::LinkFit fit = report::fit_link(report::load_medians(dir / kRawDir, "sync"), o.backend);
  const fs::path out = o.out.empty() ? dir / "platforms" / (o.name + ".xml") : fs::path(o.out);
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  write_file_atomically(out, report::calibrated_platform_xml(fit, o.name, origin_of(dir), kPlatformHosts));
  fmt::print("{}: latency {:.3f} us, bandwidth {:.1f} MB/s (residual RMS {:.3f} us, {} points of {})\n", out.string(),
             fit.latency_us, fit.bandwidth_bytes_per_s / 1e6, fit.rms_residual_us, fit.sources.size(), o.backend);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  CLI::App* simulate = app.add_subcommand("simulate", "the simulated backends' platforms (smpi, sim-cop)");
  simulate->require_subcommand(1);
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cal = simulate->add_subcommand(
      "calibrate", "fit latency and bandwidth to a campaign's echo and bandwidth points; write a SimGrid platform");
  cal->add_option("dir", o->dir, "campaign results directory (raw/*.json)")->required();
  cal->add_option("--backend", o->backend, "whose points to fit (default mpi)");
  cal->add_option("--name", o->name, "the platform's name (default calibrated)");
  cal->add_option("--out", o->out, "platform file to write, atomically (default DIR/platforms/NAME.xml)");
  cal->callback([o] { calibrate(*o); });
}

}  // namespace copbench::cli
