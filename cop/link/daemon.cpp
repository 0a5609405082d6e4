#include "link/daemon.h"

#include <csignal>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>

namespace cop::link {

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

}  // namespace

const std::atomic<bool>& install_stop_signals() {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return g_stop;
}

void log_line(const std::string& name, const std::string& line) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  localtime_r(&ts.tv_sec, &t);
  fmt::print(stderr, "{:02}:{:02}:{:02}.{:03} {}: {}\n", t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1000000, name,
             line);
  std::fflush(stderr);
}

}  // namespace cop::link
