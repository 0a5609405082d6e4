// copbench-cop-floor: the floor controller of the emulated COP (floor.h). Started by the
// cop backend's rank 0 as its child: `copbench-cop-floor --listen IP --ranks N
// [--poll-us US]` (US: COP_POLL_US, as copd gets it: poll the socket that long before
// sleeping in recvmmsg); it binds
// IP on a free port, prints the port on stdout and serves until rank 0 sends `stop`,
// rank 0 ends it by PID, or rank 0 dies (PR_SET_PDEATHSIG). Nothing of COP: one
// recvmmsg, the collective's one piece of arithmetic (a sum), one sendmmsg.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "cop/floor.h"

namespace {

using namespace copbench::cop::floor;

struct Out {
  sockaddr_in to{};
  std::vector<std::uint8_t> bytes;
};

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "copbench-cop-floor: %s\n", why.c_str());
  std::exit(1);
}

class Floor {
 public:
  Floor(int fd, int ranks, int poll_us)
      : fd_(fd), ranks_(ranks), poll_us_(poll_us), addr_(static_cast<std::size_t>(ranks)), known_(addr_.size()) {}

  void serve() {
    constexpr unsigned kBatch = 64;
    std::vector<std::vector<std::uint8_t>> bufs(kBatch, std::vector<std::uint8_t>(kMaxDatagram));
    std::vector<iovec> iov(kBatch);
    std::vector<sockaddr_in> from(kBatch);
    std::vector<mmsghdr> msgs(kBatch);
    for (;;) {
      for (unsigned i = 0; i < kBatch; ++i) {
        iov[i] = {bufs[i].data(), bufs[i].size()};
        msgs[i] = {};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &from[i];
        msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
      }
      int got = -1;
      if (poll_us_ > 0) {  // as copd --poll-us: no wakeup when a datagram comes within it
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(poll_us_);
        do got = ::recvmmsg(fd_, msgs.data(), kBatch, MSG_DONTWAIT, nullptr);
        while (got < 0 && errno == EAGAIN && std::chrono::steady_clock::now() < until);
      }
      if (got < 0) got = ::recvmmsg(fd_, msgs.data(), kBatch, MSG_WAITFORONE, nullptr);
      if (got < 0) {
        if (errno == EINTR) continue;
        die(std::string("recvmmsg: ") + std::strerror(errno));
      }
      for (int i = 0; i < got; ++i)
        if (!take(bufs[static_cast<std::size_t>(i)].data(), msgs[static_cast<std::size_t>(i)].msg_len,
                  from[static_cast<std::size_t>(i)]))
          return;
      flush();
    }
  }

 private:
  // One datagram; false on `stop`.
  bool take(const std::uint8_t* d, std::size_t n, const sockaddr_in& from) {
    Header h;
    if (n < sizeof h) return true;
    std::memcpy(&h, d, sizeof h);
    if (h.magic != kMagic || h.rank >= ranks_) return true;
    const std::size_t r = h.rank;
    if (h.type == Type::stop) return false;
    if (h.type == Type::hello) {
      addr_[r] = from;
      known_[r] = true;
      Header a = h;
      a.type = Type::hello_ack;
      queue(r, a, nullptr, sizeof a);
      return true;
    }
    if (h.type != Type::op || !known_[r]) return true;
    if (h.bytes > kMaxDatagram - kDataOffset || n < kDataOffset + h.bytes) return true;
    const std::uint8_t* data = d + kDataOffset;
    if (h.kind == Kind::broadcast) {  // no waiting: the root's data goes on at once
      Header a = h;
      a.type = Type::answer;
      for (int k = 0; k < ranks_; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        if (k == h.root) continue;
        Header to = a;
        to.rank = static_cast<std::uint16_t>(k);
        queue(kk, to, data, h.result_size);
      }
      Header ack = a;
      ack.bytes = 0;
      queue(r, ack, nullptr, h.answer_size);
      return true;
    }
    // Barrier or reduction: gather every rank's datagram of this operation.
    if (arrived_ == 0) {
      seq_ = h.seq;
      kind_ = h.kind;
      bytes_ = h.bytes;
      root_ = h.root;
      sum_.assign(bytes_, 0);
      answer_size_.assign(static_cast<std::size_t>(ranks_), 0);
      in_.assign(static_cast<std::size_t>(ranks_), false);
    }
    if (h.seq != seq_ || h.kind != kind_ || h.bytes != bytes_ || in_[r]) return true;  // not this operation's
    in_[r] = true;
    answer_size_[r] = h.answer_size;
    if (kind_ == Kind::reduce_i32) add<std::int32_t>(data);
    if (kind_ == Kind::reduce_f64) add<double>(data);
    if (++arrived_ < ranks_) return true;
    Header a = h;
    a.type = Type::answer;
    for (int k = 0; k < ranks_; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      Header to = a;
      to.rank = static_cast<std::uint16_t>(k);
      const bool result = kind_ == Kind::barrier || k == root_;
      to.bytes = result ? bytes_ : 0;
      queue(kk, to, result ? sum_.data() : nullptr, answer_size_[kk]);
    }
    arrived_ = 0;
    return true;
  }

  template <class T>
  void add(const std::uint8_t* data) {
    const std::size_t n = bytes_ / sizeof(T);
    for (std::size_t i = 0; i < n; ++i) {
      T a, b;
      std::memcpy(&a, sum_.data() + i * sizeof(T), sizeof(T));
      std::memcpy(&b, data + i * sizeof(T), sizeof(T));
      // int32: two's complement wrap, as the controller's SUMI32 (unsigned add, no UB)
      if constexpr (std::is_same_v<T, std::int32_t>)
        a = static_cast<T>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
      else
        a += b;
      std::memcpy(sum_.data() + i * sizeof(T), &a, sizeof(T));
    }
  }

  // A datagram of `size` bytes to rank r: the header, the data at kDataOffset, zeros.
  void queue(std::size_t r, const Header& h, const std::uint8_t* data, std::size_t size) {
    if (!known_[r]) return;
    Out o;
    o.to = addr_[r];
    const std::size_t body = data ? kDataOffset + h.bytes : sizeof h;
    o.bytes.assign(std::max(size, body), 0);
    std::memcpy(o.bytes.data(), &h, sizeof h);
    if (data && h.bytes) std::memcpy(o.bytes.data() + kDataOffset, data, h.bytes);
    out_.push_back(std::move(o));
  }

  void flush() {
    std::size_t sent = 0;
    while (sent < out_.size()) {
      std::vector<iovec> iov(out_.size() - sent);
      std::vector<mmsghdr> msgs(iov.size());
      for (std::size_t i = 0; i < iov.size(); ++i) {
        Out& o = out_[sent + i];
        iov[i] = {o.bytes.data(), o.bytes.size()};
        msgs[i] = {};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &o.to;
        msgs[i].msg_hdr.msg_namelen = sizeof o.to;
      }
      const int n = ::sendmmsg(fd_, msgs.data(), static_cast<unsigned>(msgs.size()), 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        die(std::string("sendmmsg: ") + std::strerror(errno));
      }
      sent += static_cast<std::size_t>(n);
    }
    out_.clear();
  }

  int fd_;
  int ranks_;
  int poll_us_;
  std::vector<sockaddr_in> addr_;
  std::vector<bool> known_;
  std::vector<Out> out_;
  // The barrier or reduction being gathered.
  int arrived_ = 0;
  std::uint32_t seq_ = 0, bytes_ = 0;
  Kind kind_ = Kind::none;
  int root_ = 0;
  std::vector<std::uint8_t> sum_;
  std::vector<std::uint32_t> answer_size_;
  std::vector<bool> in_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string listen;
  int ranks = 0, poll_us = 0;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) die("'" + a + "' needs a value");
    if (a == "--listen") listen = argv[i + 1];
    else if (a == "--ranks") ranks = std::atoi(argv[i + 1]);
    else if (a == "--poll-us") poll_us = std::max(0, std::atoi(argv[i + 1]));
    else die("unknown argument '" + a + "' (usage: copbench-cop-floor --listen IP --ranks N [--poll-us US])");
  }
  if (listen.empty() || ranks < 1 || ranks > kMaxRanks)
    die("usage: copbench-cop-floor --listen IP --ranks N (N 1.." + std::to_string(kMaxRanks) + ")");
  // Ends with the rank that started it, whatever way that rank ends.
  const pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) return 0;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die(std::string("socket: ") + std::strerror(errno));
  const int buf = 8 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (::inet_pton(AF_INET, listen.c_str(), &a.sin_addr) != 1) die("--listen: not an IPv4 address: " + listen);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    die("bind " + listen + ": " + std::strerror(errno));
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  std::printf("%u\n", static_cast<unsigned>(ntohs(a.sin_port)));
  std::fflush(stdout);
  Floor(fd, ranks, poll_us).serve();
  return 0;
}
