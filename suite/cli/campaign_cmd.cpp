// `copbench campaign run FILE [--cluster local|INVENTORY] [--launcher local|ssh|slurm] [--resume DIR]` and
// `copbench campaign check FILE [--cluster local|INVENTORY | --nodes N]`: campaigns (suite/campaigns/*.yml).
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "copbench/campaign.h"
#include "copbench/launch.h"
#include "copbench/report.h"

namespace copbench::cli {
namespace fs = std::filesystem;

namespace {
// The options bound straight into what run_campaign takes.
struct CampaignOptions {
  campaign::RunOptions run;
  int planned_nodes = 0;  // check: a cluster of this many hosts, not up yet
  bool no_report = false;  // run: leave the report to `copbench report DIR`
  CampaignOptions() {
    run.results_root = "results/campaigns";
    run.reference_dir = default_reference_dir();
  }
};
}  // namespace

// The seeds' tables as the build lays them out beside the binaries (suite/CMakeLists.txt).
std::string default_reference_dir() { return executable_dir() + "/../share/copbench/reference"; }

void add_campaign_command(CLI::App& app) {
  auto opt = std::make_shared<CampaignOptions>();
  CLI::App* campaign = app.add_subcommand("campaign", "run a campaign file (suite/campaigns/*.yml)");
  campaign->require_subcommand(1);

  CLI::App* run = campaign->add_subcommand("run", "run every point of a campaign, or the rest of one with --resume");
  campaign::RunOptions& bind = opt->run;
  run->add_option("file", bind.file, "campaign file, e.g. suite/campaigns/quick.yml")->required();
  run->add_option("--cluster", bind.cluster, "`local` (ranks on loopback) or the cluster's Ansible inventory (run on its head node)");
  run->add_option("--launcher", bind.launcher,
                  "how each point's worker starts: local, ssh (the cluster's hostfile) or slurm (a Slurm job of exactly "
                  "its node count); default: ssh with --cluster INVENTORY, local otherwise")
      ->check(CLI::IsMember(launch_method_names()));
  run->add_option("--resume", bind.resume, "a results directory of this campaign: run only the points not finished there");
  run->add_option("--results", bind.results_root, "where the new results/campaigns/<name>-<timestamp>/ goes");
  run->add_option("--reference", bind.reference_dir, "the seeds' tables (results/reference)");
  run->add_flag("--quiet", bind.quiet, "no progress bar");
  run->add_flag("--no-report", opt->no_report, "do not write the report (tables, plots, index.md) at the end");
  run->callback([opt] {
    const campaign::RunOptions& o = opt->run;
    if (!o.resume.empty() && !fs::is_directory(o.resume))
      throw std::invalid_argument(fmt::format("--resume {}: no such directory", o.resume.string()));
    campaign::RunSummary s = campaign::run_campaign(o);
    std::printf("campaign %s: %d points: %d already done, %d ran, %d not offered, %d skipped, %d failed\n",
                o.file.stem().c_str(), s.total, s.already_done, s.ran, s.not_offered, s.skipped, s.failed);
    std::printf("results: %s\n", s.dir.c_str());
    // The run ends with its report (tables, plots, index.md in the results directory), as
    // `copbench report DIR` writes it, also when points failed (they are listed there).
    if (!opt->no_report) {
      const report::ReportOutput r = report::make_report({.dir = s.dir, .out = {}, .reference_dir = o.reference_dir,
                                                          .plots = true, .collective_method = "window", .measured = {}});
      if (!r.plot_problem.empty()) std::fprintf(stderr, "copbench: warning: %s\n", r.plot_problem.c_str());
      std::printf("report: %s (%zu tables, %zu plots)\n", r.index.c_str(), r.tables.size(), r.plots.size());
    }
    std::fflush(stdout);
    if (s.failed > 0) throw std::runtime_error(fmt::format("{} points failed (see {}/campaign.log); "
                                                           "run again with --resume {} to retry them", s.failed, s.dir.string(), s.dir.string()));
  });

  CLI::App* check = campaign->add_subcommand("check", "validate a campaign file and list its points; runs nothing");
  check->add_option("file", bind.file, "campaign file")->required();
  check->add_option("--cluster", bind.cluster, "`local` or an Ansible inventory (node counts are checked against it)");
  check->add_option("--reference", bind.reference_dir, "the seeds' tables (results/reference)");
  check->add_option("--nodes", opt->planned_nodes,
                    "check node counts against a cluster of this many hosts that is not up yet (scripts/bench "
                    "checks the file before it brings the cluster up)")
      ->check(CLI::Range(1, 4096))
      ->excludes("--cluster");
  check->callback([opt] {
    const campaign::RunOptions& o = opt->run;
    campaign::Cluster cluster = campaign::describe_cluster(o.cluster);
    if (opt->planned_nodes > 0) {
      cluster.name = fmt::format("--nodes {}", opt->planned_nodes);
      cluster.size = opt->planned_nodes;
    }
    campaign::Campaign c = campaign::load_campaign(o.file, cluster, o.reference_dir);
    for (const auto& p : c.points) std::printf("%s\n", p.id.c_str());
    std::printf("campaign %s: %zu points, cluster %s (%d nodes, profile %s)\n", c.name.c_str(), c.points.size(),
                cluster.name.c_str(), cluster.size, cluster.profile.c_str());
  });
}

}  // namespace copbench::cli
