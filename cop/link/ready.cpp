#include "link/ready.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace cop::link {

namespace {

// Field 22 of /proc/self/stat; the fields after the command name (which may hold
// spaces and parentheses) start after its last ')'.
std::string own_start_time() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return "0";
  std::istringstream rest(stat.substr(close + 1));
  std::string word;
  for (int field = 3; field <= 22 && rest >> word; ++field) {
  }
  return word.empty() ? "0" : word;
}

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

}  // namespace

std::string ready_text(const ReadyFields& fields) {
  std::string text = "pid=" + std::to_string(::getpid()) + "\nstart_time=" + own_start_time() + "\n";
  for (const auto& [key, value] : fields) text += key + "=" + value + "\n";
  return text;
}

bool report_ready(const std::string& path, int fd, const ReadyFields& fields, std::string& why) {
  const std::string text = ready_text(fields);
  if (!path.empty()) {
    const std::string tmp = path + ".tmp";
    const int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const bool ok = out >= 0 && write_all(out, text) && ::fsync(out) == 0;
    const int err = errno;
    if (out >= 0) ::close(out);
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
      why = "--ready-file " + path + ": " + std::strerror(ok ? errno : err);
      ::unlink(tmp.c_str());
      return false;
    }
  }
  if (fd >= 0) {
    const bool ok = write_all(fd, text);
    const int err = errno;
    ::close(fd);
    if (!ok) {
      why = "--ready-fd " + std::to_string(fd) + ": " + std::strerror(err);
      return false;
    }
  }
  return true;
}

}  // namespace cop::link
