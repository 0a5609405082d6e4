// Registration of copbench's subcommands; each is defined in its own *_cmd.cpp.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace copbench::cli {

// `copbench model ...`: the COP cycle timing model (Table III and ch. VI figures).
void add_model_command(CLI::App& app);

// `copbench run BENCH --backend NAME --nodes N ...`: one benchmark on one backend.
void add_run_command(CLI::App& app);
// `copbench list`: every benchmark x backend pair, "not offered" where so.
void add_list_command(CLI::App& app);
// `copbench verify --backend NAME --nodes N`: a backend's operations checked for correctness.
void add_verify_command(CLI::App& app);
// `copbench campaign run FILE ...`: a campaign file, point by point, resumable.
void add_campaign_command(CLI::App& app);
// `copbench report DIR`: tables, plots and index of a campaign directory.
void add_report_command(CLI::App& app);

// `copbench compare OLD NEW [--tolerance 10%]`: medians side by side with a verdict.
void add_compare_command(CLI::App& app);

// The seeds' tables (results/reference of the source tree): --reference's default of
// `copbench campaign` and `copbench report`.
std::string default_reference_dir();

// `copbench simulate calibrate DIR`: a SimGrid platform fitted to a campaign's echo and
// bandwidth points.
void add_simulate_command(CLI::App& app);

}  // namespace copbench::cli
