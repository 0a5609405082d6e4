// copdrv: the channel driver of one compute node (seed 000 ch. V); see
// driver.h. Foreground; logs to stderr; SIGTERM or SIGINT end it cleanly
// (copd is told, local tasks get link_down).
#include <csignal>
#include <cstdio>
#include <ctime>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "driver/driver.h"
#include "driver/port.h"

namespace {

std::atomic<bool> g_stop{false};
int g_channel = 0;

void on_signal(int) { g_stop.store(true); }

void log_line(const std::string& line) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  localtime_r(&ts.tv_sec, &t);
  fmt::print(stderr, "{:02}:{:02}:{:02}.{:03} copdrv[{}]: {}\n", t.tm_hour, t.tm_min, t.tm_sec,
             ts.tv_nsec / 1000000, g_channel, line);
  std::fflush(stderr);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"copdrv: the COP channel driver of one compute node (seed 000). Registers its channel with copd and "
               "serves the local tasks through DIR/copdrv.sock."};
  cop::driver::DriverConfig config;
  std::string controller, local = "0.0.0.0";
  config.dir = cop::driver::default_driver_dir();
  app.add_option("--channel", config.channel, "this node's channel number (1..64)")
      ->required()
      ->check(CLI::Range(1, cop::wire::kChannels));
  app.add_option("--controller", controller, "copd's IP[:PORT] on the secondary network (port default 7040)")
      ->required();
  app.add_option("--local", local, "this node's IP on the secondary network")->capture_default_str();
  app.add_option("--dir", config.dir, "driver directory (tasks set COP_DRIVER to it)")->capture_default_str();
  app.add_option("--heartbeat-ms", config.heartbeat_ms, "heartbeat period (renews copd's lease on the channel)")
      ->check(CLI::Range(10, 60000))
      ->capture_default_str();
  app.add_option("--dead-ms", config.dead_ms, "copd silent this long: link_down")
      ->check(CLI::Range(50, 600000))
      ->capture_default_str();
  app.add_option("--register-timeout-ms", config.register_timeout_ms, "give up registering after this long")
      ->check(CLI::Range(100, 3600000))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  g_channel = config.channel;
  try {
    config.controller = cop::link::parse_endpoint(controller, cop::link::kDefaultPort);
    config.local = cop::link::parse_endpoint(local, 0);
  } catch (const std::exception& e) {
    fmt::print(stderr, "copdrv: {}\n", e.what());
    return 2;
  }
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  try {
    cop::driver::Driver driver(config, log_line);
    driver.start(g_stop);
    driver.run(g_stop);
    driver.shutdown();
  } catch (const std::exception& e) {
    fmt::print(stderr, "copdrv: channel {}: {}\n", config.channel, e.what());
    return 1;
  }
  return 0;
}
