// Where a result came from: host name and the source tree's commit.
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "copbench/results.h"

namespace copbench {

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

std::string source_commit() {
#ifdef COPBENCH_SOURCE_DIR
  std::string cmd = "git -C '" COPBENCH_SOURCE_DIR "' rev-parse --short=12 HEAD 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return "unknown";
  std::array<char, 64> buf{};
  std::string out;
  while (fgets(buf.data(), static_cast<int>(buf.size()), pipe.get())) out += buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.empty()) return "unknown";
  std::string dirty = "git -C '" COPBENCH_SOURCE_DIR "' diff --quiet HEAD -- 2>/dev/null";
  if (std::system(dirty.c_str()) != 0) out += "-dirty";
  return out;
#else
  return "unknown";
#endif
}

}  // namespace copbench
