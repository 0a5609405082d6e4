// Reports of a campaign directory: Markdown and CSV tables laid out like the seeds'
// tables (the seed's published value beside ours, the COP modelled value and the
// ratios), gnuplot PNG and SVG plots, and an index.md. A report depends only on the
// directory's files, so regenerating it gives the same tables.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace copbench::report {

struct ReportOptions {
  std::filesystem::path dir;            // a campaign directory (manifest.json, raw/, status/)
  std::filesystem::path out;            // where tables/, plots/ and index.md go; empty = dir
  std::filesystem::path reference_dir;  // seed tables when the directory has no copy of them
  bool plots = true;
  // Which of a collective's points the tables and plots show: "window" (one start instant
  // on a common clock, the default; issue 35), "sync" (the thesis's method, ch. VI) or
  // "loop" (IMB / OSU); index.md says which.
  std::string collective_method = "window";
  // A campaign directory of measured points to set the simulated ones beside (the
  // validation table and plots, report/validation.h); empty = `dir` itself.
  std::filesystem::path measured;
};

struct ReportOutput {
  std::string main_title;
  std::string main_table;  // Markdown of the campaign's main table (for the terminal)
  std::filesystem::path index;
  std::vector<std::filesystem::path> tables;
  std::vector<std::filesystem::path> plots;  // PNG files
  std::string plot_problem;                  // why plots were not drawn, or ""
  // The campaign's `reference:` comparison: its summary line (verdict counts), or why
  // there is none although the campaign names a reference ("" when it names none).
  std::string reference_summary, reference_problem;
};

// Throws std::runtime_error with a one-line reason when `dir` is not a campaign directory.
ReportOutput make_report(const ReportOptions& options);

}  // namespace copbench::report
