// Readiness as the daemon itself reports it (issue 27: nobody scrapes copd's log or
// probes its port). copd and copdrv take --ready-file PATH and --ready-fd N; once
// they serve (copd: bound, and a level-1 copd registered with its level 2; copdrv:
// registered with copd and its socket listening) they write one small text of
// KEY=VALUE lines: always pid (as the daemon sees itself) and start_time (field 22
// of /proc/self/stat, clock ticks after boot), then what the daemon adds (copd: its
// bound address and port, the real one when --listen asked for port 0; copdrv: its
// channel, controller and socket). The file is written under PATH.tmp and renamed,
// so whoever sees PATH reads it whole; the fd gets the same text and is closed.
// pid and start_time are the one process identity the start scripts use
// (scripts/lib/daemons.sh): a PID whose /proc start time differs is not ours.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace cop::link {

using ReadyFields = std::vector<std::pair<std::string, std::string>>;

// The text: pid and start_time first, then `fields`, one KEY=VALUE a line.
std::string ready_text(const ReadyFields& fields);

// Writes the text to `path` (atomically; skipped when empty) and to `fd` (skipped
// when negative; closed after). False with the reason in `why` when either fails.
bool report_ready(const std::string& path, int fd, const ReadyFields& fields, std::string& why);

}  // namespace cop::link
