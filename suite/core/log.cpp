// The suite's logger: stderr, "copbench: warning: text" (the form its messages always had).
#include <spdlog/sinks/stdout_sinks.h>

#include "copbench/log.h"

namespace copbench {

spdlog::logger& log() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    auto l = std::make_shared<spdlog::logger>("copbench", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("copbench: %l: %v");
    l->set_level(spdlog::level::info);
    l->flush_on(spdlog::level::info);
    return l;
  }();
  return *logger;
}

}  // namespace copbench

#include <spdlog/sinks/basic_file_sink.h>

namespace copbench {

std::shared_ptr<spdlog::logger> file_log(const std::filesystem::path& path) {
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path.string(), false);
  auto l = std::make_shared<spdlog::logger>("copbench-file", std::move(sink));
  l->set_pattern("%Y-%m-%dT%H:%M:%S %v");
  l->set_level(spdlog::level::info);
  l->flush_on(spdlog::level::info);
  return l;
}

}  // namespace copbench
