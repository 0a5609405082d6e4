// What copd and copdrv share as foreground daemons: a stop flag set by
// SIGTERM/SIGINT (SIGPIPE ignored) and their diagnostics on stderr through
// spdlog, limited per cause so that a flood of bad datagrams cannot fill the
// disk.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cop::link {

// Installs the handlers; the returned flag becomes true on SIGTERM or SIGINT.
const std::atomic<bool>& install_stop_signals();

enum class LogLevel : uint8_t { debug, info, warn, error };

// "HH:MM:SS.mmm NAME LEVEL: line" on stderr (spdlog, flushed at each line);
// goes through the process's LogLimiter with the cause derived from the line
// (LogLimiter::cause_of). Its summaries of suppressed lines are warnings.
void log_line(const std::string& name, LogLevel level, const std::string& line);
// The same with an explicit cause (lines of one cause are limited together).
void log_line(const std::string& name, LogLevel level, std::string_view cause, const std::string& line);
// Lines per second and cause that log_line lets through (default 10; 0: no limit).
void set_log_limit(int per_second);

// At most `per_second` lines of one cause in each one-second window (a window
// opens with the first line of its cause); the rest are counted, and the next
// line of that cause let through after them is preceded by one summary line
// "... N similar lines suppressed (like: CAUSE)". Summaries of causes that went
// quiet come with the next line of any cause once their window is over, and
// from flush(). At most kMaxCauses causes are tracked; beyond that, lines share
// one cause "(other)".
class LogLimiter {
 public:
  static constexpr size_t kMaxCauses = 1024;
  using Clock = std::function<int64_t()>;  // milliseconds, monotonic

  explicit LogLimiter(int per_second = 10, Clock now_ms = {});

  // What to write for a line of `cause` now, in order: pending summaries, then
  // the line itself unless it is suppressed (then nothing of it).
  std::vector<std::string> admit(std::string_view cause, std::string line);
  // Summaries of everything suppressed and not yet reported (at exit).
  std::vector<std::string> flush();
  void set_limit(int per_second) { per_second_ = per_second; }

  // The cause of a free-text line: the line with every number (decimal or 0x
  // hex, so also addresses, ports, channels, sizes) replaced by '#'.
  static std::string cause_of(std::string_view line);

  uint64_t suppressed_total() const { return suppressed_total_; }

 private:
  struct Cause {
    int64_t window_start = 0;
    int lines = 0;            // let through in this window
    uint64_t suppressed = 0;  // since the last summary
  };
  static std::string summary(std::string_view cause, uint64_t n);
  // Summaries of causes whose window is over (not `except`'s: its own line
  // reports it), and forgets causes quiet for a whole window.
  void summarise_quiet_causes(int64_t now, std::string_view except, std::vector<std::string>& out);

  int per_second_;
  Clock now_;
  std::unordered_map<std::string, Cause> causes_;
  int64_t last_sweep_ = 0;
  uint64_t suppressed_total_ = 0;
};

}  // namespace cop::link
