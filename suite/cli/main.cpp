#include <exception>

#include "cli/commands.h"
#include "copbench/log.h"

int main(int argc, char** argv) {
  CLI::App app{"copbench: COP system emulation and cluster benchmark suite"};
  app.require_subcommand(1);
  copbench::cli::add_model_command(app);
  copbench::cli::add_run_command(app);
  copbench::cli::add_list_command(app);
  copbench::cli::add_verify_command(app);
  copbench::cli::add_campaign_command(app);
  copbench::cli::add_report_command(app);
  copbench::cli::add_compare_command(app);
  copbench::cli::add_simulate_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    copbench::log().error("{}", e.what());  // "copbench: error: ..."
    return 1;
  }
  return 0;
}
