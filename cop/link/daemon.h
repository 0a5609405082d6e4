// What copd and copdrv share as foreground daemons: a stop flag set by
// SIGTERM/SIGINT (SIGPIPE ignored) and timestamped log lines on stderr.
#pragma once
#include <atomic>
#include <string>

namespace cop::link {

// Installs the handlers; the returned flag becomes true on SIGTERM or SIGINT.
const std::atomic<bool>& install_stop_signals();
// "HH:MM:SS.mmm NAME: line" on stderr, flushed.
void log_line(const std::string& name, const std::string& line);

}  // namespace cop::link
