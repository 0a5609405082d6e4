// Where a result came from: host name and the source tree's commit.
#include <unistd.h>

#include <array>

#include "copbench/process.h"
#include "copbench/results.h"

namespace copbench {

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

// The commit of the tree this binary was built from ("-dirty" with changes), asked of
// git at run time: a binary rebuilt from the same tree after a commit says the new one.
std::string source_commit() {
#ifdef COPBENCH_SOURCE_DIR
  ProcessOptions quiet;
  quiet.capture = true;
  quiet.capture_stderr = false;
  quiet.timeout_s = 30;
  const ProcessResult head = run_process({"git", "-C", COPBENCH_SOURCE_DIR, "rev-parse", "--short=12", "HEAD"}, quiet);
  std::string out = head.status() == 0 ? head.output : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.empty()) return "unknown";
  const ProcessResult diff = run_process({"git", "-C", COPBENCH_SOURCE_DIR, "diff", "--quiet", "HEAD", "--"}, quiet);
  if (diff.status() != 0) out += "-dirty";
  return out;
#else
  return "unknown";
#endif
}

}  // namespace copbench
