#include "driver/port.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <cop/cop.h>
#include <fmt/format.h>

#include "driver/protocol.h"
#include "link/fault.h"

namespace cop::driver {

using wire::Error;

namespace {

// The peer of a connected Unix socket closed it (copdrv's end goes when copdrv exits).
bool peer_closed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) != 0;
}

class DirectPort final : public Port {
 public:
  DirectPort(int conn, int udp, Window* w, const ChannelInfo& info, const link::Key& task_key,
             const link::Key& down_key, const LinkOptions& link)
      : conn_(conn), udp_(udp), client_(w, udp, info.tkno, task_key, down_key, link) {
    info_ = info;
    window_ = w;
    // Tasks sharing a fault seed do not drop in lockstep.
    link::set_fault_salt(link::node_fault_salt(info.chno, info.tkno));
    // copdrv's liveness: its end of this connection closes when it exits.
    client_.set_driver_connection(conn_);
  }
  ~DirectPort() override {
    ::munmap(window_, sizeof(Window));
    ::close(udp_);
    ::close(conn_);  // the driver frees our TKNO
  }
  Error exchange(std::span<const wire::Message> c, std::vector<Answer>& a) override { return client_.exchange(c, a); }
  Error send_only(std::span<const wire::Message> c) override { return client_.send_only(c); }
  Error finish(std::vector<Answer>& a) override { return client_.finish(a); }
  Error await(const Wanted& w, std::span<wire::Message> out, uint64_t* at) override {
    return client_.await(w, out, at);
  }
  void set_link_options(const LinkOptions& o) override { client_.set_options(o); }
  void set_partition(uint8_t ppn) { client_.set_partition(ppn); }
  bool direct() const override { return true; }
  bool driver_gone() const override { return peer_closed(conn_); }
  // As many as one frame carries (in compact runs; ChannelClient refuses a frame over kMaxFrameBytes).
  size_t max_commands() const override { return size_t(link::kMaxElements); }

 private:
  int conn_, udp_;
  ChannelClient client_;
};

class NormalPort final : public Port {
 public:
  NormalPort(int conn, Window* w, const ChannelInfo& info) : conn_(conn) {
    info_ = info;
    window_ = w;
  }
  ~NormalPort() override {
    ::munmap(window_, sizeof(Window));
    ::close(conn_);
  }
  Error exchange(std::span<const wire::Message> c, std::vector<Answer>& a) override {
    if (Error e = send_only(c); e != Error::none) return e;
    return finish(a);
  }
  Error send_only(std::span<const wire::Message> c) override {
    if (c.size() > size_t(kMaxNormalCommands)) return Error::word_count;
    // The first copy: the task's data into the request.
    req_.op = Op::send_only;
    req_.count = static_cast<uint32_t>(c.size());
    std::copy(c.begin(), c.end(), req_.commands);
    const size_t bytes = offsetof(ExchangeRequest, commands) + c.size() * sizeof(wire::Message);
    if (!write_all(&req_, bytes)) return Error::link_down;
    return Error::none;
  }
  Error finish(std::vector<Answer>& a) override {
    Op op = Op::finish;
    if (!write_all(&op, sizeof op)) return Error::link_down;
    const ssize_t n = read_one(&rep_, sizeof rep_);
    if (n < ssize_t(offsetof(ExchangeReply, answers))) return Error::link_down;
    a.assign(rep_.answers, rep_.answers + rep_.count);
    return static_cast<Error>(rep_.error);
  }
  Error await(const Wanted& w, std::span<wire::Message> out, uint64_t* at) override {
    if (w.count > kMaxAwait || out.size() < w.count) return Error::word_count;
    AwaitRequest r{Op::await, w};
    if (!write_all(&r, sizeof r)) return Error::link_down;
    const ssize_t n = read_one(&await_, sizeof await_);
    if (n < ssize_t(offsetof(AwaitReply, results))) return Error::link_down;
    std::copy(await_.results, await_.results + std::min<uint32_t>(await_.count, w.count), out.begin());
    if (at) *at = await_.at_cycle;
    return static_cast<Error>(await_.error);
  }
  void set_link_options(const LinkOptions& o) override {
    OptionsRequest r{Op::options, o};
    write_all(&r, sizeof r);
  }
  bool direct() const override { return false; }
  bool driver_gone() const override { return peer_closed(conn_); }
  size_t max_commands() const override { return size_t(kMaxNormalCommands); }

 private:
  bool write_all(const void* p, size_t n) { return ::send(conn_, p, n, MSG_NOSIGNAL) == ssize_t(n); }
  ssize_t read_one(void* p, size_t n) {
    for (;;) {
      const ssize_t r = ::recv(conn_, p, n, 0);
      if (r < 0 && errno == EINTR) continue;
      return r;  // 0: the driver is gone
    }
  }
  int conn_;
  ExchangeRequest req_{};
  ExchangeReply rep_{};
  AwaitReply await_{};
};

}  // namespace

std::string default_driver_dir() {
  if (const char* d = std::getenv("COP_DRIVER"); d && *d) return d;
  const char* tmp = std::getenv("TMPDIR");
  return fmt::format("{}/copbench-cop", tmp && *tmp ? tmp : "/tmp");
}

std::string default_job_id() {
  if (const char* j = std::getenv("COP_JOB"); j && *j) return j;
  // A Slurm job id is unique within its cluster only: the cluster's name with it
  // (two clusters' jobs on one copd, or a cluster renumbering after a reinstall).
  if (const char* s = std::getenv("SLURM_JOB_ID"); s && *s) {
    const char* cluster = std::getenv("SLURM_CLUSTER_NAME");
    return std::string("slurm:") + (cluster && *cluster ? cluster : "-") + ":" + s;
  }
  return {};
}

namespace {

// A connection to the channel driver's socket at `path` (in `dir`), or -1 with `r`
// saying why.
int connect_driver(const std::string& dir, const std::string& path, OpenResult& r) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    r.status = CopErrNoDriver;
    r.error = fmt::format("driver socket path too long: {}", path);
    return -1;
  }
  std::strcpy(addr.sun_path, path.c_str());
  const int conn = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (conn < 0 || ::connect(conn, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) {
    if (conn >= 0 && (errno == EACCES || errno == EPERM)) {
      // The socket admits only the job's user (copdrv --allow-uid).
      r.status = CopErrNotPermitted;
      r.error = fmt::format("the channel driver at {} admits only its job's user: {}", path, std::strerror(errno));
      ::close(conn);
      return -1;
    }
    r.status = CopErrNoDriver;
    r.error = fmt::format("no channel driver at {}: {} (is copdrv running? COP_DRIVER={})", path,
                          std::strerror(errno), dir);
    if (conn >= 0) ::close(conn);
    return -1;
  }
  return conn;
}

// The driver's RegisterReply and the descriptors that come with it (the channel window,
// and in direct mode the link socket): recvmsg's count, `nfds` the descriptors sent.
ssize_t receive_reply(int conn, RegisterReply& rep, int (&fds)[2], int& nfds) {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)];
  iovec iov{&rep, sizeof rep};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      nfds = int((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      std::memcpy(fds, CMSG_DATA(c), size_t(std::min(nfds, 2)) * sizeof(int));
    }
  return n;
}

}  // namespace

OpenResult open_port(const std::string& dir, bool direct, int tid, int wanted_tkno, const LinkOptions& link,
                     const std::string& job) {
  OpenResult r;
  const std::string path = dir + "/" + kSocketName;
  const int conn = connect_driver(dir, path, r);
  if (conn < 0) return r;
  RegisterRequest req;
  req.pid = ::getpid();
  req.tid = tid;
  req.wanted_tkno = wanted_tkno;
  req.direct = direct ? 1 : 0;
  req.link = link;
  const std::string job_id = job.empty() ? default_job_id() : job;
  if (job_id.size() >= sizeof req.job) {
    r.status = -2;  // PvmBadParam (pvm3.h; the driver library does not use PVM)
    r.error = fmt::format("job id '{}' is longer than {} bytes (COP_JOB)", job_id, sizeof req.job - 1);
    ::close(conn);
    return r;
  }
  std::memcpy(req.job, job_id.data(), job_id.size());
  if (::send(conn, &req, sizeof req, MSG_NOSIGNAL) != ssize_t(sizeof req)) {
    r.status = CopErrNoDriver;
    r.error = fmt::format("registration with {} failed: {}", path, std::strerror(errno));
    ::close(conn);
    return r;
  }
  RegisterReply rep;
  int fds[2] = {-1, -1};
  int nfds = 0;
  const ssize_t n = receive_reply(conn, rep, fds, nfds);
  auto fail = [&](int status, std::string why) {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
    ::close(conn);
    r.status = status;
    r.error = std::move(why);
    return std::move(r);
  };
  if (n != ssize_t(sizeof rep)) return fail(CopErrNoDriver, fmt::format("the driver at {} did not answer", path));
  if (rep.status < 0) return fail(rep.status, fmt::format("the driver at {} refused: {}", path, rep.detail));
  if (nfds < (direct ? 2 : 1)) return fail(CopErrNoDriver, "the driver sent no channel window");
  void* mem = ::mmap(nullptr, sizeof(Window), PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
  ::close(fds[0]);
  fds[0] = -1;
  if (mem == MAP_FAILED) return fail(CopErrNoDriver, fmt::format("mapping the channel window: {}", std::strerror(errno)));
  auto* w = static_cast<Window*>(mem);
  if (w->magic != kWindowMagic || w->version != kWindowVersion) {
    ::munmap(mem, sizeof(Window));
    return fail(CopErrNoDriver, "the channel window has another version");
  }
  ChannelInfo info{rep.chno, rep.tkno, rep.ppn, rep.channels, rep.tasks_per_channel, rep.tas_words, rep.gas_words};
  if (direct) {
    link::Key task_key, down_key;
    std::memcpy(task_key.data(), rep.task_key, task_key.size());
    std::memcpy(down_key.data(), rep.down_key, down_key.size());
    ::explicit_bzero(rep.task_key, sizeof rep.task_key);
    r.port = std::make_unique<DirectPort>(conn, fds[1], w, info, task_key, down_key, link);
    static_cast<DirectPort&>(*r.port).set_partition(uint8_t(rep.ppn));
  } else {
    r.port = std::make_unique<NormalPort>(conn, w, info);
  }
  return r;
}

}  // namespace cop::driver
