// The campaign's progress: a bar on a terminal, a line per finished point in a log.
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "campaign/internal.h"

namespace copbench::campaign {
namespace {

std::string format_duration(double seconds) {
  long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace

Progress::Progress(int total, bool quiet) : total_(total), quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::show(int finished, int timed_points, double timed_seconds, const std::string& current, bool starting) {
  if (quiet_ || (starting && !tty_)) return;
  int left = total_ - finished;
  std::string eta = timed_points > 0 ? format_duration(timed_seconds / timed_points * left) : "?";
  const int width = 30;
  int filled = total_ > 0 ? finished * width / total_ : width;
  std::string bar = std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '.');
  std::string text = fmt::format("[{}] {}/{} done, {} left, ETA {}  {}", bar, finished, total_, left, eta, current);
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    if (left == 0) std::fputc('\n', stderr);
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

void Progress::line(const std::string& text) {
  if (quiet_) return;
  if (tty_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "%s\n", text.c_str());
}

}  // namespace copbench::campaign
