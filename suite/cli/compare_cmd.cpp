// `copbench compare OLD NEW [--tolerance 10%] [--missing-fails]`: every point's median in
// both, the ratio and a verdict. Exit 0 when no point got slower beyond the tolerance, 3
// when one did (or, with --missing-fails, when a point is missing on either side), 1 on
// an error, so a CI job can run it after a benchmark run.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/commands.h"
#include "copbench/compare.h"

namespace copbench::cli {

namespace {
struct CompareCmdOptions {
  std::string old_path, new_path;
  std::string tolerance = "10%";
  bool missing_fails = false;
};
}  // namespace

void add_compare_command(CLI::App& app) {
  auto opt = std::make_shared<CompareCmdOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "medians of two result files or campaign directories side by side, with a verdict per point "
                 "(exit 3 when a point got slower beyond the tolerance)");
  cmd->add_option("old", opt->old_path, "the reference: a result file (copbench run --out) or a campaign directory")
      ->required();
  cmd->add_option("new", opt->new_path, "the result to judge, of the same kind")->required();
  cmd->add_option("--tolerance", opt->tolerance, "how much slower or faster still counts as the same (10% or 0.1)")
      ->capture_default_str();
  cmd->add_flag("--missing-fails", opt->missing_fails, "a point present on one side only also fails (exit 3)");
  cmd->callback([opt] {
    const double tolerance = compare::parse_tolerance(opt->tolerance);
    auto rows = compare::compare(compare::load_medians(opt->old_path), compare::load_medians(opt->new_path), tolerance);
    if (rows.empty()) throw std::runtime_error("no points in " + opt->old_path + " or " + opt->new_path);
    std::fputs(compare::render(rows, tolerance).c_str(), stdout);
    bool fail = false;
    for (const auto& r : rows) {
      if (r.verdict == compare::Verdict::slower) fail = true;
      if (opt->missing_fails &&
          (r.verdict == compare::Verdict::missing_old || r.verdict == compare::Verdict::missing_new))
        fail = true;
    }
    std::fflush(stdout);
    if (fail) std::exit(3);
  });
}

}  // namespace copbench::cli
