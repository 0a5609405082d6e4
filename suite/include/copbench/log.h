// Diagnostics of the suite (warnings, the campaign runner's lines) go through spdlog:
// one logger, set up here, writing "copbench: LEVEL: text" to stderr.
#pragma once

#include <spdlog/spdlog.h>

namespace copbench {

// The suite's logger ("copbench", to stderr); made on first use.
spdlog::logger& log();

}  // namespace copbench

#include <filesystem>
#include <memory>

namespace copbench {

// A log file of its own (appended, every line flushed at once, so a killed process
// loses none): "2026-01-31T12:00:00 text" lines. Not registered with spdlog.
std::shared_ptr<spdlog::logger> file_log(const std::filesystem::path& path);

}  // namespace copbench
