// cop_difftest's faults (faults.h).
#include "faults.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "../cop/wait.h"

extern char** environ;

namespace difftest {
namespace {

pid_t daemon_pid(const std::string& dir, const std::string& name) {
  std::ifstream in(dir + "/" + name + ".pid");
  pid_t pid = 0;
  return in >> pid && pid > 0 && ::kill(pid, 0) == 0 ? pid : 0;
}

std::vector<std::string> cmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> args;
  for (std::string a; std::getline(in, a, '\0');) args.push_back(a);
  return args;
}

std::string ready_field(const std::string& dir, const std::string& key) {
  std::ifstream in(dir + "/copd.ready");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

int run_and_wait(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// copd killed -9 and started again as the stack started it: the same arguments (less the
// ready file lib/daemons.sh adds again), the port it was bound to.
bool restart_copd(const std::string& dir, std::string& why) {
  const pid_t pid = daemon_pid(dir, "copd");
  if (!pid) return why = "no copd in " + dir, false;
  std::vector<std::string> old = cmdline(pid), args;
  const std::string port = ready_field(dir, "port");
  if (old.empty() || port.empty()) return why = "copd's arguments or port not found", false;
  for (size_t i = 1; i < old.size(); ++i) {
    if (old[i] == "--ready-file" && i + 1 < old.size()) { ++i; continue; }
    args.push_back(old[i]);
    if (old[i] == "--listen" && i + 1 < old.size()) {
      const std::string a = old[++i];
      args.push_back(a.substr(0, a.rfind(':') + 1) + port);
    }
  }
  ::kill(pid, SIGKILL);
  cop::testing::wait_until([&] { return ::kill(pid, 0) != 0; }, std::chrono::seconds(5));
  char self[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string bin = std::string(self, size_t(n > 0 ? n : 0));
  bin = bin.substr(0, bin.rfind('/'));
  std::vector<std::string> cmd = {bin + "/copbench-daemon", "start", dir, "copd", "copd", "--"};
  cmd.insert(cmd.end(), args.begin(), args.end());
  if (run_and_wait(cmd) != 0) return why = "copbench-daemon could not start copd again (" + dir + "/copd.log)", false;
  return true;
}

}  // namespace

bool make_fault(const std::string& dir, Fault f, int ms, int node, const std::vector<pid_t>& node_tasks,
                std::string& why) {
  if (f == Fault::restart) return restart_copd(dir, why);
  const std::string name = f == Fault::stop ? "copd" : "node" + std::to_string(node);
  std::vector<pid_t> stopped = {daemon_pid(dir, name)};
  if (!stopped[0] || ::kill(stopped[0], SIGSTOP) != 0) return why = "cannot stop " + name + " of " + dir, false;
  if (f == Fault::partition)
    for (pid_t p : node_tasks)
      if (::kill(p, SIGSTOP) == 0) stopped.push_back(p);
  // The fault itself: nothing is heard or answered this long (not a wait for a condition).
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  for (pid_t p : stopped) ::kill(p, SIGCONT);
  return true;
}

void continue_all(const std::string& dir, int nodes) {
  if (pid_t p = daemon_pid(dir, "copd")) ::kill(p, SIGCONT);
  for (int k = 1; k <= nodes; ++k)
    if (pid_t p = daemon_pid(dir, "node" + std::to_string(k))) ::kill(p, SIGCONT);
}

}  // namespace difftest
