// A real COP stack on loopback for tests: copd and one copdrv per emulated
// node, as child processes of the test (the binaries the build made), torn
// down by PID.
#pragma once
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "link/auth.h"
#include "wait.h"

extern char** environ;

namespace cop::testing {

// A value of a daemon's ready file (cop/link/ready.h: KEY=VALUE lines, written whole);
// "" while there is none.
inline std::string ready_field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

inline pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

// Waits for a child to end; returns its exit status (or 128+signal), -1 on timeout.
inline int wait_exit(pid_t pid, int timeout_ms) {
  int rc = -1;
  wait_until(
      [&] {
        int st = 0;
        const pid_t r = ::waitpid(pid, &st, WNOHANG);
        if (r == pid) rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0) rc = -2;  // not (or no longer) our child
        return r != 0;
      },
      std::chrono::milliseconds(timeout_ms));
  return rc;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// How many times `text` occurs in `log`.
inline size_t count_of(const std::string& text, const std::string& log) {
  size_t n = 0;
  for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) n++;
  return n;
}

class Stack {
 public:
  // nodes copdrv processes on channels 1..nodes; copd with `channels` channels.
  explicit Stack(int nodes, int channels = 8, std::vector<std::string> copd_extra = {}) {
    char tmpl[] = "/tmp/copstack.XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    // The stack's cluster key (cop/link.h "Keys"), as scripts/cop-stack makes one.
    std::string why;
    if (!cop::link::write_key_file(key_file(), why)) throw std::runtime_error(why);
    key_ = *cop::link::load_key_file(key_file(), why);
    // Any free port: copd binds it and names it in its ready file (no port picked by a
    // bind-and-close here that another process may take meanwhile).
    std::vector<std::string> args = {COPD_BIN, "--listen", "127.0.0.1:0", "--channels", std::to_string(channels),
                                     "--lease-ms", "1000", "--key", key_file(), "--ready-file", copd_ready_file()};
    // copd's I/O threads as scripts/cop-stack passes them (a test may run the stack's checks on several).
    if (const char* io = std::getenv("COPD_IO_THREADS"); io && *io) args.insert(args.end(), {"--io-threads", io});
    args.insert(args.end(), copd_extra.begin(), copd_extra.end());
    copd_args_ = args;
    start_copd();
    for (int k = 1; k <= nodes; ++k) start_driver(k);
    for (int k = 1; k <= nodes; ++k) wait_for_driver(k);
  }
  ~Stack() {
    for (pid_t p : drivers_)
      if (p > 0) stop(p);
    if (copd_ > 0) stop(copd_);
    std::error_code ec;
    if (!std::getenv("COPSTACK_KEEP")) std::filesystem::remove_all(dir_, ec);
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string driver_dir(int k) const { return dir_ + "/node" + std::to_string(k); }
  std::string dir() const { return dir_; }
  std::string key_file() const { return dir_ + "/cluster.key"; }
  std::string copd_ready_file() const { return dir_ + "/copd.ready"; }
  const cop::link::Key& key() const { return key_; }
  pid_t copd_pid() const { return copd_; }
  pid_t driver_pid(int k) const { return drivers_[size_t(k - 1)]; }
  std::string copd_log() const { return read_file(dir_ + "/copd.log"); }
  std::string driver_log(int k) const { return read_file(dir_ + "/copdrv" + std::to_string(k) + ".log"); }

  // local: the node's address (another loopback address, 127.0.0.2, is another node).
  pid_t start_driver(int k, const std::string& channel = "", const std::string& local = "127.0.0.1") {
    if (drivers_.size() < size_t(k)) drivers_.resize(size_t(k), -1);
    const pid_t p = spawn({COPDRV_BIN, "--channel", channel.empty() ? std::to_string(k) : channel, "--controller",
                           endpoint(), "--local", local, "--dir", driver_dir(k), "--key", key_file(), "--heartbeat-ms", "50",
                           "--dead-ms", "1000", "--register-timeout-ms", "5000"},
                          dir_ + "/copdrv" + std::to_string(k) + ".log");
    drivers_[size_t(k - 1)] = p;
    return p;
  }
  // Waits until node k's driver log, or copd's, has `text` `count` times. A daemon may
  // write its line after the answer a test saw (copdrv logs a refusal after sending it),
  // so a test checks a log line with these, never with one read of the log.
  bool wait_for_driver_log(int k, const std::string& text, int count = 1, int timeout_ms = 10000) const {
    return wait_until([&] { return count_of(text, driver_log(k)) >= size_t(count); },
                      std::chrono::milliseconds(timeout_ms));
  }
  bool wait_for_copd_log(const std::string& text, int count = 1, int timeout_ms = 10000) const {
    return wait_until([&] { return count_in_copd_log(text) >= size_t(count); }, std::chrono::milliseconds(timeout_ms));
  }
  bool wait_for_driver(int k, int timeout_ms = 10000) const {
    const std::string sock = driver_dir(k) + "/copdrv.sock";
    struct stat st{};
    return wait_until([&] { return ::stat(sock.c_str(), &st) == 0; }, std::chrono::milliseconds(timeout_ms));
  }
  // Starts copd (again, after kill_copd: the same address, a fresh controller) and waits
  // for its ready file: bound and serving. The first start learns the port copd bound.
  void start_copd() {
    std::error_code ec;
    std::filesystem::remove(copd_ready_file(), ec);
    copd_ = spawn(copd_args_, dir_ + "/copd.log");
    std::string port;
    wait_until([&] { return !(port = ready_field(copd_ready_file(), "port")).empty(); }, std::chrono::seconds(10));
    if (port.empty()) {
      std::fprintf(stderr, "copd did not say it is ready within 10 s (%s)\n", copd_log().c_str());
      return;
    }
    port_ = std::stoi(port);
    for (size_t i = 0; i + 1 < copd_args_.size(); ++i)
      if (copd_args_[i] == "--listen") copd_args_[i + 1] = endpoint();  // a restart: the same address
  }
  size_t count_in_copd_log(const std::string& text) const { return count_of(text, copd_log()); }
  // Kills a process of the stack outright (no clean shutdown).
  void kill_copd() { kill_hard(copd_); }
  void kill_driver(int k) { kill_hard(drivers_[size_t(k - 1)]); }
  int terminate_copd(int timeout_ms = 5000) {
    ::kill(copd_, SIGTERM);
    const int rc = wait_exit(copd_, timeout_ms);
    copd_ = -1;
    return rc;
  }

 private:
  static void stop(pid_t p) {
    int st = 0;
    if (::waitpid(p, &st, WNOHANG) != 0) return;  // already ended and reaped
    ::kill(p, SIGTERM);
    if (wait_exit(p, 3000) < 0) {
      ::kill(p, SIGKILL);
      wait_exit(p, 3000);
    }
  }
  void kill_hard(pid_t& p) {
    ::kill(p, SIGKILL);
    wait_exit(p, 3000);
    p = -1;
  }
  std::string dir_;
  cop::link::Key key_{};
  std::vector<std::string> copd_args_;
  int port_ = 0;
  pid_t copd_ = -1;
  std::vector<pid_t> drivers_;
};

}  // namespace cop::testing
