// Where a result came from: host name and the source tree's commit.
#include <unistd.h>

#include <array>

#include "copbench/source_commit.h"
#include "copbench/results.h"

namespace copbench {

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

// The commit of the tree this binary was built from ("-dirty" with uncommitted changes),
// stamped at build time (cmake/source_commit.cmake): a rebuild after a commit says the
// new one, and no binary asks the source tree at run time.
std::string source_commit() { return COPBENCH_COMMIT; }

}  // namespace copbench
