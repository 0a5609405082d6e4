// Results: Google Benchmark JSON (so compare.py from libbenchmark-tools reads two of our
// files) with copbench's context fields, written atomically, and a terminal table.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "copbench/bench.h"

namespace copbench {

struct RunContext {
  std::string benchmark;
  std::string backend;
  std::string route;     // route or mode
  std::string encoding;  // PVM data encoding, "" elsewhere
  int nodes = 0;
  int tasks_per_node = 1;
  std::string link_profile;  // "loopback" on one machine
  std::string host;
  std::string commit;
  std::string executable;
  // Settings of the measured system that change its times (mpi: mpi_yield_when_idle),
  // written into the context as they are.
  std::map<std::string, std::string> settings;
};

// The whole file: {"context": {...}, "benchmarks": [per repetition..., aggregates...]}.
nlohmann::json make_gbench_json(const RunContext& context, const std::vector<PointResult>& points);

// Writes `content` to a temporary file beside `path` and renames it over `path`, so a
// reader sees the old file or the new one, never half of one.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// A readable table of the aggregates of a file made by make_gbench_json.
std::string render_table(const nlohmann::json& gbench);

// This machine's host name and the source tree's commit ("unknown" outside git).
std::string host_name();
std::string source_commit();

}  // namespace copbench
