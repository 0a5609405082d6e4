// Temporary file + fsync + rename: a reader sees the old file or the new one.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "copbench/results.h"

namespace copbench {

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::path dir = path.parent_path().empty() ? "." : path.parent_path();
  if (!std::filesystem::is_directory(dir))
    throw std::runtime_error("cannot write " + path.string() + ": no directory " + dir.string());
  std::string name = path.filename().string();
  name.insert(name.begin(), '.');
  name += ".tmp.XXXXXX";
  std::string tmpl = (dir / name).string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmpl.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err));
  }
}

}  // namespace copbench
