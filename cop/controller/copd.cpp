// copd: the coordination processor node as a daemon (seed 000 ch. IV-V).
// One process per controller node, serving up to 64 channels over the
// secondary network; see server.h for the protocol rules and cop/link.h for
// the frames. Foreground; logs to stderr; SIGTERM or SIGINT end it cleanly.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <string>

#include "controller/server.h"
#include "link/auth.h"
#include "link/daemon.h"
#include "link/fault.h"
#include "link/ready.h"
#include "link/ready_options.h"

namespace {

using cop::link::LogLevel;

void log_line(LogLevel level, const std::string& line) { cop::link::log_line("copd", level, line); }
void log_info(const std::string& line) { log_line(LogLevel::info, line); }
void log_error(const std::string& line) { log_line(LogLevel::error, line); }

// Two levels (seed 000 ch. IV, Figure 5): a level-2 copd's channels are level-1 copd.
struct Levels {
  int level = 1, cntno = 0;
  std::string parent;
};

void add_level_options(CLI::App& app, Levels& l) {
  app.add_option("--level", l.level, "1: channels are nodes; 2: channels are level-1 controllers (channel c: CNTNO c-1)")
      ->check(CLI::Range(1, 2))
      ->capture_default_str();
  app.add_option("--parent", l.parent,
                 "level 1: the level-2 copd's IP:PORT (this copd registers as its channel CNTNO+1)");
  app.add_option("--cntno", l.cntno, "this controller's number CNTNO (SAS word 0)")
      ->check(CLI::Range(0, cop::wire::kChannels - 1))
      ->capture_default_str();
}

// The controller's level and CNTNO, and a level-1's link to its parent; false (said) when they do not fit.
bool configure_levels(const Levels& l, cop::controller::ServerConfig& config) {
  config.controller.level = l.level;
  config.controller.cntno = static_cast<uint8_t>(l.cntno);
  if (l.parent.empty()) return true;
  if (l.level != 1) {
    log_error("--parent: only a level-1 copd has a parent");
    return false;
  }
  cop::controller::ParentLinkOptions up;
  try {
    up.parent = cop::link::parse_endpoint(l.parent, cop::link::kDefaultPort);
  } catch (const std::exception& e) {
    log_error(fmt::format("--parent: {}", e.what()));
    return false;
  }
  up.cntno = static_cast<uint8_t>(l.cntno);
  up.dead_ms = std::max(1500, config.lease_ms);
  config.controller.has_parent = true;
  config.parent = up;
  return true;
}

// What copd is told on its command line.
struct Options {
  std::string listen = "127.0.0.1", key_file, faults;
  cop::controller::ServerConfig config;
  int io_threads = 1;
  cop::link::ReadyTarget ready;
  Levels levels;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--listen", o.listen, "IP[:PORT] to serve on (port default 7040; 0 = any free port, printed)")
      ->capture_default_str();
  app.add_option("--channels", o.config.controller.channels, "channels 1..N this controller has (N <= 64)")
      ->check(CLI::Range(1, cop::wire::kChannels))
      ->capture_default_str();
  app.add_option("--tasks-per-channel", o.config.controller.tasks_per_channel,
                 "task address spaces in each channel address space")
      ->check(CLI::Range(1u, cop::wire::kMaxTtkno + 1))
      ->capture_default_str();
  app.add_option("--tas-words", o.config.controller.tas_words, "64-bit words in one task address space")
      ->check(CLI::Range(1u, cop::wire::kMaxTasOffset + 1))
      ->capture_default_str();
  app.add_option("--gas-words", o.config.controller.gas_words, "words of the global address space")
      ->check(CLI::Range(1u, cop::wire::kMaxMsgtag + 1))
      ->capture_default_str();
  app.add_option("--partitions", o.config.controller.partitions,
                 "partitions (PPN 0..N-1): PPN 0 is the channels' own, each job sharing the controller takes "
                 "one of the others while it has tasks (1: jobs are not kept apart)")
      ->check(CLI::Range(1, int(cop::wire::kMaxPpn) + 1))
      ->capture_default_str();
  app.add_option("--lease-ms", o.config.lease_ms, "a channel silent this long is declared down")
      ->check(CLI::Range(50, 600000))
      ->capture_default_str();
  app.add_option("--lock-limit-ms", o.config.lock_limit_ms,
                 "deadlock timer: a LOCK held this long is taken back from its holder, whose locked sequence "
                 "then fails with lock_timeout (CopErrLockTimeout); 0: never")
      ->check(CLI::Range(0, 600000))
      ->capture_default_str();
  app.add_option("--poll-us", o.config.poll_us,
                 "after a datagram keep polling the socket this long before sleeping (0: sleep at once)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--io-threads", o.io_threads,
                 "I/O threads of the link side, like the hardware's channel interfaces: each has its own socket "
                 "on the listen port and the channels (c-1) mod N, receives, checks and sends for them in "
                 "parallel, and hands their commands in order to the one controller core (1, the default: the "
                 "core does it all itself, which measured faster over loopback even with a core per rank; "
                 "0: min(channels, cores - 1, 8); COPD_IO_THREADS in scripts/cop-stack)")
      ->check(CLI::Range(0, cop::wire::kChannels));
  app.add_flag("--poll", o.config.poll,
               "a dedicated controller node (cores of its own): the core and the I/O threads spin on their "
               "sockets (non-blocking receives) instead of sleeping in poll(); each takes a core (default off; "
               "COPD_POLL=1 in scripts/cop-stack; the tasks' side is COP_POLL_US)");
  app.add_option("--runs", o.config.runs,
                 "1 (default): a burst's elements go through copd's service path as one run; 0: one by one, "
                 "as before issue 36 (the answers are the same: for comparison; COPD_RUNS in scripts/cop-stack)")
      ->check(CLI::Range(0, 1));
  app.add_flag("--verbose", o.config.verbose, "log resends and failed sends too");
  app.add_option("--key", o.key_file,
                 "the cluster key: a file of 32 random bytes, mode 0600, shared with every copdrv and a level-2 "
                 "parent (default: $COP_KEY)")
      ->envname("COP_KEY");
  cop::link::add_ready_options(app, o.ready, "serving (a level-1 copd with --parent: once registered with it)",
                               "address and port (the bound one), level and cntno");
  add_level_options(app, o.levels);
  app.add_option("--faults", o.faults,
                 "inject link faults (cop/link/fault.h), e.g. drop=0.05,dup=0.05,delay=0.05,delay_ms=5,seed=7 "
                 "(default: $COP_FAULTS)");
}

// The link faults (--faults, else checked COP_FAULTS), the address, the levels, the I/O
// threads and the cluster key into the server's configuration; false (said) when one
// is wrong.
bool configure(Options& o) {
  if (!o.faults.empty()) {
    std::string why;
    auto spec = cop::link::parse_faults(o.faults, why);
    if (!spec) {
      log_error(fmt::format("--faults: {}", why));
      return false;
    }
    cop::link::set_faults(*spec, 0);
  } else if (const char* env = std::getenv("COP_FAULTS"); env && *env) {
    std::string why;
    if (!cop::link::parse_faults(env, why)) {
      log_error(fmt::format("COP_FAULTS: {}", why));
      return false;
    }
  }

  try {
    o.config.listen = cop::link::parse_endpoint(o.listen, cop::link::kDefaultPort);
  } catch (const std::exception& e) {
    log_error(fmt::format("--listen: {}", e.what()));
    return false;
  }
  if (!configure_levels(o.levels, o.config)) return false;
  o.config.io_threads = o.io_threads > 0 ? o.io_threads : cop::controller::default_io_threads(o.config.controller.channels);
  {
    std::string why;
    const auto key = o.key_file.empty() ? std::nullopt : cop::link::load_key_file(o.key_file, why);
    if (!key) {
      log_error(o.key_file.empty() ? "no cluster key: give --key FILE (or COP_KEY); scripts/cop-stack makes one per stack"
                                 : "--key: " + why);
      return false;
    }
    o.config.key = *key;
    if (o.config.parent) o.config.parent->key = *key;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"copd: the emulated COP controller node (seed 000). Serves the channels' copdrv drivers over UDP."};
  Options o;
  cop::controller::ServerConfig& config = o.config;
  config.controller.tasks_per_channel = 64;
  // Each job sharing the controller gets its own partition (jobs.h); PPN 0 is
  // the channels' own. 8: seven jobs at once (each partition is its own CAS,
  // GAS and mask RAMs, about 12 MB here; 16 would be ~200 MB per copd).
  config.controller.partitions = 8;
  add_options(app, o);
  CLI11_PARSE(app, argc, argv);
  if (!configure(o)) return 2;
  const Levels& levels = o.levels;
  cop::link::ReadyTarget& ready = o.ready;
  const auto& stop = cop::link::install_stop_signals();
  // Readiness, said once; a copd that cannot say it stops (its starter would wait in vain).
  bool ready_failed = false;
  cop::link::ReadyFields ready_fields;
  auto report_ready = [&] {
    if (ready.file.empty() && ready.fd < 0) return;
    std::string why;
    if (!cop::link::report_ready(ready.file, ready.fd, ready_fields, why)) {
      log_error(why);
      ready_failed = true;
      std::raise(SIGTERM);
    }
    ready = {};
  };
  if (config.parent) config.parent->on_registered = report_ready;
  try {
    cop::controller::Server server(config, log_line);
    const auto bound = server.address();
    ready_fields = {{"address", cop::link::to_string(bound)}, {"port", std::to_string(ntohs(bound.sin_port))},
                    {"level", std::to_string(levels.level)}, {"cntno", std::to_string(levels.cntno)}};
    log_info(fmt::format("level {} CNTNO {}{}: serving {} channels on {} (tasks per channel {}, TAS words {}, GAS words {}, "
                         "lease {} ms, lock limit {} ms, I/O threads {}, {})",
                         levels.level, levels.cntno, levels.parent.empty() ? "" : ", parent " + levels.parent,
                         config.controller.channels,
                         cop::link::to_string(server.address()),
                         config.controller.tasks_per_channel, config.controller.tas_words,
                         config.controller.gas_words, config.lease_ms, config.lock_limit_ms, server.io_threads(),
                         config.poll ? "polling" : "sleeping when idle"));
    if (const auto* f = cop::link::active_faults()) log_info("injecting link faults: " + cop::link::to_string(*f));
    if (!config.parent) report_ready();
    server.run(stop);
    const auto& st = server.controller().stats();
    const auto& ls = server.link_stats();
    log_info(fmt::format("signal received: shutting down ({} channels registered, {} commands serviced, {} NACKs, "
                         "{} broadcasts, {} modelled cycles; frames refused: {} bad MAC, {} other session, "
                         "{} not enrolled, {} stale, {} bad proofs, {} stale heartbeats)",
                         server.registered_channels(), st.serviced, st.nacks, st.broadcasts,
                         server.controller().cycles(), ls.bad_mac, ls.other_session, ls.not_enrolled, ls.stale,
                         ls.bad_proofs, ls.stale_heartbeats));
  } catch (const std::exception& e) {
    log_error(e.what());
    return 1;
  }
  return ready_failed ? 1 : 0;
}
