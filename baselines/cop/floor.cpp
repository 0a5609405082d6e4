// The cop backend's floor (floor.h; Op::floor_loops): the floor controller started and
// stopped by rank 0, each rank's socket to it, the operations, and the CPU readings of
// the floor controller and of copd.
#include "cop/floor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pvm3.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "cop/cop_backend.h"
#include "cop/link.h"
#include "lib/commands.h"

namespace copbench::cop {
namespace fs = std::filesystem;

namespace {

constexpr int kFloorTag = 1900;           // rank 0 -> the others: the floor controller's address
constexpr int kAnswerTimeoutMs = 10000;   // no answer this long: an error, never a hang

// ------------------------------------------------------------------ the frames' sizes

std::size_t frame_size(const std::vector<::cop::link::Entry>& entries) {
  ::cop::link::Frame f;
  f.entries = entries;
  std::vector<std::uint8_t> out;
  return ::cop::link::encode(f, out);
}

// The burst libcop sends for the call (cop/lib/commands.h), as a frame's entries.
std::vector<::cop::link::Entry> up_entries(const ::cop::commands::Burst& burst) {
  std::vector<::cop::link::Entry> e;
  for (const auto& m : burst)
    e.push_back(::cop::link::make_entry(m, ::cop::wire::Direction::to_controller, ::cop::link::EntryKind::command));
  return e;
}

// What copd sends back: an answer per command (ACK), then the results (op to the node).
std::vector<::cop::link::Entry> down_entries(std::size_t answers, ::cop::wire::Opcode result, std::size_t results) {
  std::vector<::cop::link::Entry> e;
  for (std::size_t i = 0; i < answers; ++i)
    e.push_back(::cop::link::make_entry(::cop::wire::make(::cop::wire::Opcode::ACK), ::cop::wire::Direction::to_node,
                                        ::cop::link::EntryKind::answer));
  for (std::size_t i = 0; i < results; ++i)
    e.push_back(::cop::link::make_entry(::cop::wire::make(result), ::cop::wire::Direction::to_node,
                                        ::cop::link::EntryKind::broadcast));
  return e;
}

// ------------------------------------------------------------------ processes' CPU

// All threads of process `pid`, in seconds (its CPU clock: nanoseconds, where
// /proc/PID/stat counts 10 ms ticks); nullopt when it is not there.
std::optional<double> process_cpu(pid_t pid) {
  clockid_t clock;
  timespec t{};
  if (pid <= 0 || ::clock_getcpuclockid(pid, &clock) != 0 || ::clock_gettime(clock, &t) != 0) return std::nullopt;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// NUL-separated strings of /proc/PID/{cmdline,environ}.
std::vector<std::string> proc_strings(pid_t pid, const char* what) {
  std::vector<std::string> out;
  std::string s = read_all(fs::path("/proc") / std::to_string(pid) / what);
  std::size_t at = 0;
  while (at < s.size()) {
    const std::size_t end = s.find('\0', at);
    out.push_back(s.substr(at, end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

// The copd processes of the run's COP stack (COP_STACK_DIR: copd, copd1.., copl2, by their
// PID files, each checked to run copd still); none where the stack is not on this machine.
std::vector<pid_t> copd_pids() {
  std::vector<pid_t> pids;
  const char* dir = std::getenv("COP_STACK_DIR");
  if (!dir || !*dir) return pids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!(name.rfind("copd", 0) == 0 || name == "copl2.pid") || e.path().extension() != ".pid") continue;
    const pid_t pid = std::atoi(read_all(e.path()).c_str());
    const auto cmd = proc_strings(pid, "cmdline");
    if (pid > 0 && !cmd.empty() && fs::path(cmd[0]).filename() == "copd") pids.push_back(pid);
  }
  return pids;
}

// A setting as copd runs with it: its option on copd's command line, else its variable in
// copd's environment, else in ours; "default" when none says.
std::string copd_setting(const std::vector<pid_t>& copd, const std::string& option, bool flag, const char* variable) {
  for (pid_t pid : copd) {
    const auto cmd = proc_strings(pid, "cmdline");
    for (std::size_t i = 1; i < cmd.size(); ++i) {
      if (cmd[i] == option) return flag ? "on" : (i + 1 < cmd.size() ? cmd[i + 1] : "");
      if (cmd[i].rfind(option + "=", 0) == 0) return cmd[i].substr(option.size() + 1);
    }
    for (const auto& kv : proc_strings(pid, "environ"))
      if (kv.rfind(std::string(variable) + "=", 0) == 0) return kv.substr(std::strlen(variable) + 1);
  }
  if (const char* v = std::getenv(variable); v && *v) return v;
  return "default";
}

// ------------------------------------------------------------------ where the floor listens

std::optional<std::string> controller_ip() {
  std::string addr;
  if (const char* c = std::getenv("COP_CONTROLLER"); c && *c) addr = c;
  if (addr.empty())
    if (const char* dir = std::getenv("COP_STACK_DIR"); dir && *dir) {
      std::ifstream env(fs::path(dir) / "stack.env");
      for (std::string line; std::getline(env, line);)
        if (line.rfind("STACK_CONTROLLER=", 0) == 0) addr = line.substr(17);
    }
  if (addr.empty()) return std::nullopt;
  return addr.substr(0, addr.find(':'));
}

// This host's address on the way to `ip` (the COP network when ip is copd's).
std::optional<std::string> local_address_towards(const std::string& ip) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(7040);
  if (::inet_pton(AF_INET, ip.c_str(), &to.sin_addr) != 1) return std::nullopt;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in me{};
  socklen_t len = sizeof me;
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0;
  ::close(fd);
  if (!ok) return std::nullopt;
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &me.sin_addr, text, sizeof text);
  return std::string(text);
}

std::optional<std::string> resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return std::nullopt;
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, text, sizeof text);
  ::freeaddrinfo(res);
  return std::string(text);
}

// Where rank 0 starts the floor controller: COPBENCH_FLOOR_ADDR; else its address towards
// copd (COP_CONTROLLER, or the stack's stack.env); else loopback when every task is on this
// host; else its host's name on the COP network (<host>-cop, as the emulated cluster's
// /etc/hosts has it), else its host's name. The second word says which.
std::pair<std::string, std::string> floor_address(bool one_host) {
  if (const char* a = std::getenv("COPBENCH_FLOOR_ADDR"); a && *a) return {a, "COPBENCH_FLOOR_ADDR"};
  if (auto ip = controller_ip())
    if (auto me = local_address_towards(*ip)) return {*me, "towards copd " + *ip};
  if (one_host) return {"127.0.0.1", "loopback"};
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  if (auto a = resolve(std::string(host) + "-cop")) return {*a, std::string(host) + "-cop"};
  if (auto a = resolve(host)) return {*a, std::string(host) + " (not the COP network: no copd address known)"};
  throw std::runtime_error("floor: no address for the floor controller (set COPBENCH_FLOOR_ADDR)");
}

// A UDP socket connected to the floor controller at ip:port.
int connect_floor(const std::string& ip, const std::string& port) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(std::atoi(port.c_str())));
  if (::inet_pton(AF_INET, ip.c_str(), &to.sin_addr) != 1) throw std::runtime_error("floor: bad address " + ip);
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("floor: socket failed");
  const int buf = 8 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    throw std::runtime_error(fmt::format("floor: connect {}:{}: {}", ip, port, std::strerror(errno)));
  }
  return fd;
}

}  // namespace

// ------------------------------------------------------------------ start and stop

void CopBackend::ensure_floor() {
  if (floor_fd_ >= 0) return;
  std::string ip, port;
  if (rank_ == 0) {
    auto [addr, why] = floor_address(pvm::virtual_machine_hosts() == 1);
    floor_where_ = addr + " (" + why + ")";
    const fs::path exe = fs::read_symlink("/proc/self/exe").parent_path() / "copbench-cop-floor";
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("floor: pipe failed");
    const std::string nranks = std::to_string(ranks());
    // It polls as copd does (scripts/lib/stack.sh gives copd --poll-us COP_POLL_US).
    const char* poll = std::getenv("COP_POLL_US");
    const std::string poll_us = std::to_string(poll && *poll ? std::max(0, std::atoi(poll)) : 0);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("floor: fork failed");
    if (pid == 0) {  // only async-signal-safe calls until exec
      ::dup2(out[1], STDOUT_FILENO);
      const char* argv[] = {exe.c_str(), "--listen", addr.c_str(), "--ranks", nranks.c_str(),
                            "--poll-us", poll_us.c_str(), nullptr};
      ::execv(exe.c_str(), const_cast<char* const*>(argv));
      ::_exit(127);
    }
    floor_pid_ = pid;
    ::close(out[1]);
    // Its first line is its port; EOF first: it did not start.
    for (char c = 0; port.size() < 16;) {
      const ssize_t n = ::read(out[0], &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || c == '\n') break;
      port += c;
    }
    ::close(out[0]);
    if (port.empty() || std::atoi(port.c_str()) <= 0) {
      stop_floor();
      throw std::runtime_error(fmt::format("floor: {} did not start on {} (see the worker's log)", exe.string(), addr));
    }
    ip = addr;
    std::string both = ip + " " + port;
    pvm::pvm_check(pvm_initsend(PvmDataDefault), "pvm_initsend");
    pvm::pvm_check(pvm_pkstr(both.data()), "pvm_pkstr");
    if (ranks() > 1)
      pvm::pvm_check(pvm_mcast(tids_.data() + 1, ranks() - 1, kFloorTag), "pvm_mcast (floor address)");
  } else {
    pvm::pvm_check(pvm_recv(tids_[0], kFloorTag), "pvm_recv (floor address)");
    char both[128] = {};
    pvm::pvm_check(pvm_upkstr(both), "pvm_upkstr");
    std::istringstream in(both);
    in >> ip >> port;
  }
  floor_fd_ = connect_floor(ip, port);
  if (const char* p = std::getenv("COP_POLL_US"); p && *p) floor_poll_us_ = std::max(0, std::atoi(p));
  floor_rx_.resize(floor::kMaxDatagram);
  // Hello until the controller has our address (a datagram may be lost: a few tries).
  floor::Header h;
  h.type = floor::Type::hello;
  h.rank = static_cast<std::uint16_t>(rank_);
  bool acked = false;
  for (int attempt = 0; attempt < 5 && !acked; ++attempt) {
    ::send(floor_fd_, &h, sizeof h, 0);
    pollfd p{floor_fd_, POLLIN, 0};
    while (!acked && ::poll(&p, 1, 1000) > 0) {
      floor::Header a;
      if (::recv(floor_fd_, &a, sizeof a, 0) >= static_cast<ssize_t>(sizeof a) && a.magic == floor::kMagic &&
          a.type == floor::Type::hello_ack)
        acked = true;
    }
  }
  if (!acked) throw std::runtime_error(fmt::format("floor: the floor controller at {}:{} does not answer", ip, port));
  sync();  // every rank known to it before the first operation
}

void CopBackend::stop_floor() {
  if (floor_fd_ >= 0 && rank_ == 0) {
    floor::Header h;
    h.type = floor::Type::stop;
    ::send(floor_fd_, &h, sizeof h, 0);
  }
  if (floor_fd_ >= 0) ::close(floor_fd_);
  floor_fd_ = -1;
  if (floor_pid_ > 0) {
    // Ours, by PID: it ends on `stop`; TERM when it has not within a second.
    int status = 0;
    for (int i = 0; i < 100 && ::waitpid(floor_pid_, &status, WNOHANG) == 0; ++i) ::usleep(10000);
    if (::waitpid(floor_pid_, &status, WNOHANG) == 0) {
      ::kill(floor_pid_, SIGTERM);
      ::waitpid(floor_pid_, &status, 0);
    }
    floor_pid_ = -1;
  }
}

// ------------------------------------------------------------------ one operation

const CopBackend::FloorSizes& CopBackend::floor_sizes(floor::Kind kind, std::size_t bytes, bool root) {
  const auto key = std::make_tuple(static_cast<int>(kind), bytes, root);
  if (auto it = floor_sizes_.find(key); it != floor_sizes_.end()) return it->second;
  namespace cmd = ::cop::commands;
  using ::cop::wire::Opcode;
  FloorSizes s;
  const std::size_t esize = kind == floor::Kind::reduce_i32 ? 4 : 8;
  const std::size_t count = bytes / esize;
  const cmd::Sender sender{1, 1};
  const std::uint64_t all = nodes() >= 64 ? ~0ULL : (1ULL << nodes()) - 1;
  if (bytes > floor::kMaxDatagram - floor::kDataOffset)
    throw std::invalid_argument(fmt::format("floor: {} bytes is more than one link frame carries", bytes));
  if (kind == floor::Kind::barrier) {
    const auto burst = cmd::barrier(sender, kBarrierTag, all);
    s.up = frame_size(up_entries(burst));
    s.answer = frame_size(down_entries(burst.size(), Opcode::BENTRY, 1));
  } else if (count <= 1) {  // one element: the frames libcop sends for it
    const std::vector<std::uint64_t> word(1, 0);
    if (kind == floor::Kind::broadcast) {
      const auto burst = cmd::broadcast(sender, Opcode::BCAST64, kCastFirst, word, all);
      s.up = frame_size(up_entries(burst));
      s.answer = frame_size(down_entries(burst.size(), Opcode::BCAST64, 0));
      s.result = frame_size(down_entries(0, Opcode::BCAST64, 1));
    } else {
      const Opcode op = kind == floor::Kind::reduce_i32 ? Opcode::SUMI32 : Opcode::SUMF;
      const auto burst = cmd::reduction(sender, op, kReduceFirst, word, all, 1);
      s.up = frame_size(up_entries(burst));
      s.answer = frame_size(down_entries(burst.size(), op, root ? 1 : 0));
    }
  } else {  // an array: its bytes behind a frame header, an answer a bare header
    s.up = floor::kDataOffset + bytes;
    s.answer = floor::kDataOffset + (root && kind != floor::Kind::broadcast ? bytes : 0);
    s.result = kind == floor::Kind::broadcast ? floor::kDataOffset + bytes : 0;
  }
  return floor_sizes_.emplace(key, s).first->second;
}

void CopBackend::floor_send(const floor::Header& h, const void* data, std::size_t size) {
  floor_tx_.assign(std::max(size, floor::kDataOffset + h.bytes), 0);
  std::memcpy(floor_tx_.data(), &h, sizeof h);
  if (data && h.bytes) std::memcpy(floor_tx_.data() + floor::kDataOffset, data, h.bytes);
  ssize_t n;
  while ((n = ::send(floor_fd_, floor_tx_.data(), floor_tx_.size(), 0)) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(floor_tx_.size()))
    throw std::runtime_error(fmt::format("floor: send failed: {}", std::strerror(errno)));
}

// The answer to operation `seq`, as the task waits for COP's: polling COP_POLL_US first,
// then asleep in poll(2); an error after kAnswerTimeoutMs (a lost datagram is not retried).
const floor::Header& CopBackend::floor_wait(std::uint32_t seq) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    ssize_t n = -1;
    if (floor_poll_us_ > 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(floor_poll_us_);
      do n = ::recv(floor_fd_, floor_rx_.data(), floor_rx_.size(), MSG_DONTWAIT);
      while (n < 0 && std::chrono::steady_clock::now() < until);
    }
    if (n < 0) {
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
      pollfd p{floor_fd_, POLLIN, 0};
      const int left = kAnswerTimeoutMs - static_cast<int>(waited.count());
      if (left <= 0 || ::poll(&p, 1, left) == 0)
        throw std::runtime_error(fmt::format("floor: no answer to operation {} within {} s (rank {})", seq,
                                             kAnswerTimeoutMs / 1000, rank_));
      n = ::recv(floor_fd_, floor_rx_.data(), floor_rx_.size(), MSG_DONTWAIT);
      if (n < 0) continue;
    }
    if (n < static_cast<ssize_t>(sizeof(floor::Header))) continue;
    std::memcpy(&floor_rx_header_, floor_rx_.data(), sizeof(floor::Header));
    const floor::Header& h = floor_rx_header_;
    if (h.magic != floor::kMagic || h.type != floor::Type::answer || h.seq != seq) continue;  // an earlier one's
    if (h.bytes && static_cast<std::size_t>(n) < floor::kDataOffset + h.bytes)
      throw std::runtime_error(fmt::format("floor: a short answer to operation {} ({} bytes)", seq, n));
    return h;
  }
}

void CopBackend::floor_barrier() {
  ensure_floor();
  const FloorSizes& s = floor_sizes(floor::Kind::barrier, 0, false);
  floor::Header h;
  h.kind = floor::Kind::barrier;
  h.rank = static_cast<std::uint16_t>(rank_);
  h.seq = ++floor_seq_;
  h.answer_size = static_cast<std::uint32_t>(s.answer);
  floor_send(h, nullptr, s.up);
  floor_wait(h.seq);
}

void CopBackend::floor_reduce(const void* in, void* out, std::size_t count, Elem elem, int root) {
  ensure_floor();
  const std::size_t bytes = count * elem_size(elem);
  const floor::Kind kind = elem == Elem::i32 ? floor::Kind::reduce_i32 : floor::Kind::reduce_f64;
  const FloorSizes& s = floor_sizes(kind, bytes, rank_ == root);
  floor::Header h;
  h.kind = kind;
  h.rank = static_cast<std::uint16_t>(rank_);
  h.seq = ++floor_seq_;
  h.bytes = static_cast<std::uint32_t>(bytes);
  h.root = static_cast<std::uint16_t>(root);
  h.answer_size = static_cast<std::uint32_t>(s.answer);
  floor_send(h, in, s.up);
  const floor::Header& a = floor_wait(h.seq);
  if (rank_ == root) {
    if (a.bytes != bytes) throw std::runtime_error(fmt::format("floor: reduce result of {} bytes, not {}", a.bytes, bytes));
    std::memcpy(out, floor_rx_.data() + floor::kDataOffset, bytes);
  }
}

void CopBackend::floor_broadcast(std::span<std::byte> buffer, int root) {
  ensure_floor();
  if (ranks() < 2) return;
  const FloorSizes& s = floor_sizes(floor::Kind::broadcast, buffer.size(), rank_ == root);
  const std::uint32_t seq = ++floor_seq_;
  if (rank_ == root) {
    floor::Header h;
    h.kind = floor::Kind::broadcast;
    h.rank = static_cast<std::uint16_t>(rank_);
    h.seq = seq;
    h.bytes = static_cast<std::uint32_t>(buffer.size());
    h.root = static_cast<std::uint16_t>(root);
    h.answer_size = static_cast<std::uint32_t>(s.answer);
    h.result_size = static_cast<std::uint32_t>(s.result);
    floor_send(h, buffer.data(), s.up);
    floor_wait(seq);
    return;
  }
  const floor::Header& a = floor_wait(seq);
  if (a.bytes != buffer.size())
    throw std::runtime_error(fmt::format("floor: broadcast of {} bytes, not {}", a.bytes, buffer.size()));
  std::memcpy(buffer.data(), floor_rx_.data() + floor::kDataOffset, buffer.size());
}

// ------------------------------------------------------------------ CPU and settings

std::optional<double> CopBackend::floor_cpu_seconds() {
  if (rank_ != 0) return std::nullopt;
  return process_cpu(floor_pid_);
}

std::optional<double> CopBackend::controller_cpu_seconds() {
  if (rank_ != 0) return std::nullopt;
  const std::vector<pid_t> pids = copd_pids();
  if (pids.empty()) return std::nullopt;
  double sum = 0;
  for (pid_t pid : pids) {
    auto c = process_cpu(pid);
    if (!c) return std::nullopt;
    sum += *c;
  }
  return sum;
}

std::map<std::string, std::string> CopBackend::context_settings() {
  const std::vector<pid_t> copd = copd_pids();
  std::map<std::string, std::string> s = {
      {"copd_io_threads", copd_setting(copd, "--io-threads", false, "COPD_IO_THREADS")},
      {"copd_poll", copd_setting(copd, "--poll", true, "COPD_POLL")},
      {"cop_poll_us", [] {
         const char* v = std::getenv("COP_POLL_US");
         return std::string(v && *v ? v : "default");
       }()},
      {"cop_groups", groups_},
      {"copd_cpu", copd.empty() ? "not on this machine (no COP_STACK_DIR with copd's PID)" : "read from /proc (its CPU clock)"}};
  if (!floor_where_.empty()) s["floor_controller"] = floor_where_;
  // What the floor moved (floor.h): each operation's datagrams, up and down.
  static constexpr const char* kKinds[] = {"", "barrier", "reduce int", "reduce double", "broadcast"};
  std::string moved;
  for (const auto& [key, z] : floor_sizes_) {
    const auto& [kind, bytes, root] = key;
    moved += fmt::format("{}{} {} B {}: up {} B, answer {} B{}", moved.empty() ? "" : "; ", kKinds[kind], bytes,
                         root ? "root" : "other", z.up, z.answer, z.result ? fmt::format(", to receivers {} B", z.result) : "");
  }
  if (!moved.empty()) s["floor_datagrams"] = moved;
  return s;
}

}  // namespace copbench::cop
