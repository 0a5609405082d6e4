// `copbench report DIR [--out DIR] [--no-plots]`: tables, plots and index.md of a campaign.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "copbench/report.h"

namespace copbench::cli {

namespace {
struct ReportCmdOptions {
  std::string dir, out;
  std::string reference = std::string(COPBENCH_SOURCE_DIR) + "/results/reference";
  std::string collective_method = "sync";
  bool no_plots = false, quiet = false;
};
}  // namespace

void add_report_command(CLI::App& app) {
  auto opt = std::make_shared<ReportCmdOptions>();
  CLI::App* cmd = app.add_subcommand("report", "tables (Markdown, CSV), plots (PNG, SVG) and index.md of a campaign directory");
  cmd->add_option("dir", opt->dir, "a campaign directory, results/campaigns/<name>-<timestamp>")->required();
  cmd->add_option("--out", opt->out, "write the report here instead of into the campaign directory");
  cmd->add_option("--reference", opt->reference, "the seeds' tables, when the directory has no copy");
  cmd->add_flag("--no-plots", opt->no_plots, "tables and index only");
  cmd->add_option("--collective-method", opt->collective_method,
                  "collectives as timed by the thesis (sync: a sync before each call) or by IMB / OSU (loop)")
      ->check(CLI::IsMember({"sync", "loop"}))
      ->capture_default_str();
  cmd->add_flag("--quiet", opt->quiet, "print only where the report is");
  cmd->callback([opt] {
    report::ReportOptions o;
    o.dir = opt->dir;
    o.out = opt->out;
    o.reference_dir = opt->reference;
    o.plots = !opt->no_plots;
    o.collective_method = opt->collective_method;
    report::ReportOutput r = report::make_report(o);
    if (!opt->quiet) std::printf("%s\n", r.main_table.c_str());
    if (!r.plot_problem.empty()) std::fprintf(stderr, "copbench: warning: %s\n", r.plot_problem.c_str());
    if (!r.reference_problem.empty()) std::fprintf(stderr, "copbench: warning: %s\n", r.reference_problem.c_str());
    if (!r.reference_summary.empty()) std::printf("%s\n", r.reference_summary.c_str());
    std::printf("tables: %s\n", r.tables.empty() ? "" : r.tables.front().parent_path().c_str());
    std::printf("plots:  %zu in %s\n", r.plots.size(), (r.index.parent_path() / "plots").c_str());
    std::printf("index:  %s\n", r.index.c_str());
  });
}

}  // namespace copbench::cli
