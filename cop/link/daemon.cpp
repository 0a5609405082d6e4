#include "link/daemon.h"

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

#include <fmt/format.h>

namespace cop::link {

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void write_line(const std::string& name, const std::string& line) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  localtime_r(&ts.tv_sec, &t);
  fmt::print(stderr, "{:02}:{:02}:{:02}.{:03} {}: {}\n", t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1000000, name,
             line);
  std::fflush(stderr);
}

// The process's limiter; the summaries still pending are written at exit.
struct ProcessLog {
  std::mutex mutex;
  LogLimiter limiter;
  std::string last_name = "log";
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
  for (const std::string& s : log.limiter.flush()) write_line(log.last_name, s);
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

void log_line(const std::string& name, std::string_view cause, const std::string& line) {
  ProcessLog& log = process_log();
  std::lock_guard lock(log.mutex);
  log.last_name = name;
  for (const std::string& s : log.limiter.admit(cause, line)) write_line(name, s);
}

void log_line(const std::string& name, const std::string& line) {
  log_line(name, LogLimiter::cause_of(line), line);
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
