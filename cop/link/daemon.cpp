#include "link/daemon.h"

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace cop::link {

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

spdlog::level::level_enum spdlog_level(LogLevel level) {
  switch (level) {
    case LogLevel::debug: return spdlog::level::debug;
    case LogLevel::info: return spdlog::level::info;
    case LogLevel::warn: return spdlog::level::warn;
    case LogLevel::error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

// The process's limiter and one logger per daemon name, all behind one mutex
// (so a single-threaded sink will do); the summaries still pending are
// written at exit. The loggers are held here, not in spdlog's registry, which
// static destruction may take down before the exit handler runs.
struct ProcessLog {
  std::mutex mutex;
  LogLimiter limiter;
  std::string last_name = "log";
  std::shared_ptr<spdlog::sinks::stderr_sink_st> sink = std::make_shared<spdlog::sinks::stderr_sink_st>();
  std::map<std::string, std::shared_ptr<spdlog::logger>, std::less<>> loggers;

  spdlog::logger& logger(const std::string& name) {
    auto it = loggers.find(name);
    if (it == loggers.end()) {
      auto l = std::make_shared<spdlog::logger>(name, sink);
      l->set_pattern("%H:%M:%S.%e %n %l: %v");
      l->set_level(spdlog::level::trace);
      l->flush_on(spdlog::level::trace);  // a daemon killed -9 leaves its last line in the log
      it = loggers.emplace(name, std::move(l)).first;
    }
    return *it->second;
  }
};

void flush_at_exit();

ProcessLog& process_log() {
  static ProcessLog* log = [] {
    auto* l = new ProcessLog;  // never destroyed: usable from exit handlers
    std::atexit(flush_at_exit);
    return l;
  }();
  return *log;
}

void flush_at_exit() {
  ProcessLog& log = process_log();
  std::lock_guard lock(log.mutex);
  for (const std::string& s : log.limiter.flush()) log.logger(log.last_name).warn("{}", s);
}

}  // namespace

const std::atomic<bool>& install_stop_signals() {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return g_stop;
}

void log_line(const std::string& name, LogLevel level, std::string_view cause, const std::string& line) {
  ProcessLog& log = process_log();
  std::lock_guard lock(log.mutex);
  log.last_name = name;
  std::vector<std::string> out = log.limiter.admit(cause, line);
  // admit gives the summaries first, then the line itself unless it was suppressed.
  const bool line_through = !out.empty() && out.back() == line;
  spdlog::logger& logger = log.logger(name);
  for (size_t i = 0; i < out.size(); ++i) {
    const bool is_line = line_through && i + 1 == out.size();
    logger.log(is_line ? spdlog_level(level) : spdlog::level::warn, "{}", out[i]);
  }
}

void log_line(const std::string& name, LogLevel level, const std::string& line) {
  log_line(name, level, LogLimiter::cause_of(line), line);
}

void set_log_limit(int per_second) {
  ProcessLog& log = process_log();
  std::lock_guard lock(log.mutex);
  log.limiter.set_limit(per_second);
}

LogLimiter::LogLimiter(int per_second, Clock now_ms)
    : per_second_(per_second), now_(now_ms ? std::move(now_ms) : Clock(steady_ms)) {}

std::string LogLimiter::cause_of(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size();) {
    if (std::isdigit(static_cast<unsigned char>(line[i]))) {
      if (line[i] == '0' && i + 1 < line.size() && (line[i + 1] == 'x' || line[i + 1] == 'X')) {
        i += 2;
        while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
      }
      while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
      out += '#';
    } else {
      out += line[i++];
    }
  }
  return out;
}

std::string LogLimiter::summary(std::string_view cause, uint64_t n) {
  return fmt::format("... {} similar line{} suppressed (like: {})", n, n == 1 ? "" : "s", cause);
}

void LogLimiter::summarise_quiet_causes(int64_t now, std::string_view except, std::vector<std::string>& out) {
  for (auto it = causes_.begin(); it != causes_.end();) {
    Cause& c = it->second;
    const bool over = now - c.window_start >= 1000;
    if (over && c.suppressed > 0 && it->first != except) {
      out.push_back(summary(it->first, c.suppressed));
      c.suppressed = 0;
    }
    // A cause quiet for a whole window is forgotten (the map stays small).
    if (over && c.suppressed == 0 && it->first != except) it = causes_.erase(it);
    else ++it;
  }
  last_sweep_ = now;
}

std::vector<std::string> LogLimiter::admit(std::string_view cause_in, std::string line) {
  std::vector<std::string> out;
  if (per_second_ <= 0) {
    out.push_back(std::move(line));
    return out;
  }
  const int64_t now = now_();
  std::string cause(cause_in);
  if (now - last_sweep_ >= 1000) summarise_quiet_causes(now, cause, out);
  auto it = causes_.find(cause);
  if (it == causes_.end()) {
    if (causes_.size() >= kMaxCauses) cause = "(other)";
    it = causes_.try_emplace(cause, Cause{now, 0, 0}).first;
  }
  Cause& c = it->second;
  if (now - c.window_start >= 1000) {  // a new window: the lines held back are reported first
    c.window_start = now;
    c.lines = 0;
    if (c.suppressed > 0) {
      out.push_back(summary(cause, c.suppressed));
      c.suppressed = 0;
    }
  }
  if (c.lines < per_second_) {
    ++c.lines;
    out.push_back(std::move(line));
  } else {
    ++c.suppressed;
    ++suppressed_total_;
  }
  return out;
}

std::vector<std::string> LogLimiter::flush() {
  std::vector<std::string> out;
  for (auto& [cause, c] : causes_)
    if (c.suppressed > 0) {
      out.push_back(summary(cause, c.suppressed));
      c.suppressed = 0;
    }
  return out;
}

}  // namespace cop::link
