// The suite's one whole-file reader.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "copbench/files.h"

namespace copbench {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path.string() + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw std::runtime_error("cannot read " + path.string() + ": read error");
  return ss.str();
}

}  // namespace copbench
