// copdrv: the channel driver of one compute node (seed 000 ch. V); see
// driver.h. Foreground; logs to stderr; SIGTERM or SIGINT end it cleanly
// (copd is told, local tasks get link_down).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "driver/driver.h"
#include "driver/port.h"
#include "link/auth.h"
#include "link/daemon.h"
#include "link/fault.h"
#include "link/ready.h"
#include "link/ready_options.h"

namespace {

int g_channel = 0;

using cop::link::LogLevel;

void log_line(LogLevel level, const std::string& line) {
  cop::link::log_line(fmt::format("copdrv[{}]", g_channel), level, line);
}
void log_error(const std::string& line) { log_line(LogLevel::error, line); }

// What copdrv is told on its command line.
struct Options {
  cop::driver::DriverConfig config;
  std::string controller, local = "0.0.0.0", key_file, faults;
  cop::link::ReadyTarget ready;
};

void add_options(CLI::App& app, Options& o) {
  cop::driver::DriverConfig& config = o.config;
  app.add_option("--channel", config.channel, "this node's channel number (1..64)")
      ->required()
      ->check(CLI::Range(1, cop::wire::kChannels));
  app.add_option("--controller", o.controller, "copd's IP[:PORT] on the secondary network (port default 7040)")
      ->required();
  app.add_option("--local", o.local, "this node's IP on the secondary network")->capture_default_str();
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
  app.add_option("--key", o.key_file,
                 "the cluster key copd has: a file of 32 random bytes, mode 0600 (default: $COP_KEY)")
      ->envname("COP_KEY");
  app.add_option("--allow-uid", config.allow_uid,
                 "the user whose tasks may enrol (checked with SO_PEERCRED; root's always may; the socket is "
                 "mode 0600, owned by that user). Default: the user copdrv runs as; a root-run copdrv serving a "
                 "job names the job's user")
      ->check(CLI::Range(0, 2147483647));
  cop::link::add_ready_options(app, o.ready, "registered with copd and serving its socket",
                               "channel, controller and socket");
  app.add_option("--faults", o.faults,
                 "inject link faults (cop/link/fault.h), e.g. drop=0.05,dup=0.05,delay=0.05,delay_ms=5,seed=7 "
                 "(default: $COP_FAULTS)");
}

// The link faults (--faults, else COP_FAULTS), the cluster key and the addresses into
// the driver's configuration; false (said) when one is wrong.
bool configure(Options& o) {
  cop::driver::DriverConfig& config = o.config;
  {
    std::string why;
    const char* env = std::getenv("COP_FAULTS");
    const std::string spec_text = !o.faults.empty() ? o.faults : (env ? env : "");
    if (!spec_text.empty()) {
      auto spec = cop::link::parse_faults(spec_text, why);
      if (!spec) {
        log_error(fmt::format("{}: {}", o.faults.empty() ? "COP_FAULTS" : "--faults", why));
        return false;
      }
      cop::link::set_faults(*spec, cop::link::node_fault_salt(uint32_t(config.channel), cop::wire::kMaxTkno));
    }
  }
  {
    std::string why;
    const auto key = o.key_file.empty() ? std::nullopt : cop::link::load_key_file(o.key_file, why);
    if (!key) {
      log_error(o.key_file.empty() ? "no cluster key: give --key FILE (or COP_KEY), the file copd has" : "--key: " + why);
      return false;
    }
    config.key = *key;
  }
  try {
    config.controller = cop::link::parse_endpoint(o.controller, cop::link::kDefaultPort);
    config.local = cop::link::parse_endpoint(o.local, 0);
  } catch (const std::exception& e) {
    log_error(e.what());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"copdrv: the COP channel driver of one compute node (seed 000). Registers its channel with copd and "
               "serves the local tasks through DIR/copdrv.sock."};
  Options o;
  o.config.dir = cop::driver::default_driver_dir();
  add_options(app, o);
  CLI11_PARSE(app, argc, argv);
  g_channel = o.config.channel;
  if (!configure(o)) return 2;
  const cop::driver::DriverConfig& config = o.config;
  const cop::link::ReadyTarget& ready = o.ready;
  const auto& stop = cop::link::install_stop_signals();
  try {
    cop::driver::Driver driver(config, log_line);
    if (const auto* f = cop::link::active_faults())
      log_line(LogLevel::info, "injecting link faults: " + cop::link::to_string(*f));
    driver.start(stop);
    std::string why;
    if (!cop::link::report_ready(ready.file, ready.fd,
                                 {{"channel", std::to_string(config.channel)},
                                  {"controller", cop::link::to_string(config.controller)},
                                  {"socket", config.dir + "/" + cop::driver::kSocketName}},
                                 why)) {
      log_error(why);
      driver.shutdown();
      return 1;
    }
    driver.run(stop);
    driver.shutdown();
  } catch (const std::exception& e) {
    log_error(fmt::format("channel {}: {}", config.channel, e.what()));
    return 1;
  }
  return 0;
}
