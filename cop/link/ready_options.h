// copd's and copdrv's --ready-file and --ready-fd (link/ready.h), declared once.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

namespace cop::link {

struct ReadyTarget {
  std::string file;  // --ready-file ("" : none)
  int fd = -1;       // --ready-fd (-1: none)
};

// `when`: when the daemon is ready; `says`: what it writes after pid and start_time.
inline void add_ready_options(CLI::App& app, ReadyTarget& to, const std::string& when, const std::string& says) {
  app.add_option("--ready-file", to.file,
                 "once " + when + ", write pid, start_time, " + says +
                     " as KEY=VALUE lines here, atomically (link/ready.h)");
  app.add_option("--ready-fd", to.fd, "the same text to this open file descriptor, then closed")
      ->check(CLI::Range(0, 1 << 20));
}

}  // namespace cop::link
