// `copbench report DIR [--out DIR] [--no-plots]`: tables, plots and index.md of a campaign.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "copbench/report.h"

namespace copbench::cli {

namespace {
// The options bind straight into the report's own (no copy field by field).
struct ReportCmdOptions {
  report::ReportOptions report{.dir = {},
                               .out = {},
                               .reference_dir = default_reference_dir(),
                               .plots = true,
                               .collective_method = "window",
                               .measured = {}};
  bool no_plots = false, quiet = false;
};

void print_report(const report::ReportOutput& r, bool quiet) {
  if (!quiet) std::printf("%s\n", r.main_table.c_str());
  if (!r.plot_problem.empty()) std::fprintf(stderr, "copbench: warning: %s\n", r.plot_problem.c_str());
  if (!r.reference_problem.empty()) std::fprintf(stderr, "copbench: warning: %s\n", r.reference_problem.c_str());
  if (!r.reference_summary.empty()) std::printf("%s\n", r.reference_summary.c_str());
  std::printf("tables: %s\n", r.tables.empty() ? "" : r.tables.front().parent_path().c_str());
  std::printf("plots:  %zu in %s\n", r.plots.size(), (r.index.parent_path() / "plots").c_str());
  std::printf("index:  %s\n", r.index.c_str());
}
}  // namespace

void add_report_command(CLI::App& app) {
  auto opt = std::make_shared<ReportCmdOptions>();
  report::ReportOptions& o = opt->report;
  CLI::App* cmd = app.add_subcommand("report", "tables (Markdown, CSV), plots (PNG, SVG) and index.md of a campaign directory");
  cmd->add_option("dir", o.dir, "a campaign directory, results/campaigns/<name>-<timestamp>")->required();
  cmd->add_option("--out", o.out, "write the report here instead of into the campaign directory");
  cmd->add_option("--reference", o.reference_dir, "the seeds' tables, when the directory has no copy");
  cmd->add_option("--measured", o.measured, "a campaign directory of measured points to set simulated ones beside");
  cmd->add_flag("--no-plots", opt->no_plots, "tables and index only");
  cmd->add_option("--collective-method", o.collective_method,
                  "collectives as timed from one start instant on a common clock (window, the default), by the "
                  "thesis (sync: a sync before each call) or by IMB / OSU (loop)")
      ->check(CLI::IsMember({"window", "sync", "loop"}))
      ->capture_default_str();
  cmd->add_flag("--quiet", opt->quiet, "print only where the report is");
  cmd->callback([opt] {
    opt->report.plots = !opt->no_plots;
    print_report(report::make_report(opt->report), opt->quiet);
  });
}

}  // namespace copbench::cli
