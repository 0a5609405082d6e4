#include "link/udp.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include <cop/link.h>

#include "link/fault.h"
#include "link/fault_internal.h"

namespace cop::link {

namespace {

using Clock = std::chrono::steady_clock;

// Datagrams the fault layer holds back (reordered or delayed), per direction.
struct Held {
  int fd;
  std::vector<uint8_t> bytes;
  bool has_to;
  sockaddr_in addr;  // destination (send) or source (receive)
  Clock::time_point due;
  bool after_next;  // reorder: goes right after the next datagram
};

std::mutex g_held_mu;
std::vector<Held> g_tx_held, g_rx_held;

ssize_t raw_send(int fd, std::span<const uint8_t> bytes, const sockaddr_in* to) {
  if (to)
    return ::sendto(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(to), sizeof *to);
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
}

void send_held(const Held& h) { raw_send(h.fd, h.bytes, h.has_to ? &h.addr : nullptr); }

// Sends the held datagrams that are due (or, after_next_of >= 0, the reordered ones of that fd).
void flush_tx_locked(int after_next_of) {
  const auto now = Clock::now();
  for (size_t i = 0; i < g_tx_held.size();) {
    Held& h = g_tx_held[i];
    if (h.due <= now || (h.after_next && h.fd == after_next_of)) {
      send_held(h);
      g_tx_held.erase(g_tx_held.begin() + long(i));
    } else {
      ++i;
    }
  }
}

bool faulty_send(int fd, std::span<const uint8_t> bytes, const sockaddr_in* to) {
  const detail::FaultDecision d = detail::fault_decide();
  std::lock_guard lock(g_held_mu);
  flush_tx_locked(-1);
  if (d.drop) return true;
  if (d.reorder || d.delay) {
    Held h{fd, std::vector<uint8_t>(bytes.begin(), bytes.end()), to != nullptr, to ? *to : sockaddr_in{},
           Clock::now() + std::chrono::milliseconds(d.hold_ms), d.reorder};
    g_tx_held.push_back(std::move(h));
    return true;
  }
  bool ok;
  if (d.corrupt) {
    std::vector<uint8_t> copy(bytes.begin(), bytes.end());
    detail::fault_corrupt(copy, d);
    ok = raw_send(fd, copy, to) == ssize_t(copy.size());
  } else {
    ok = raw_send(fd, bytes, to) == ssize_t(bytes.size());
    if (ok && d.dup) raw_send(fd, bytes, to);
  }
  flush_tx_locked(fd);  // a datagram held for reordering goes after this one
  return ok;
}

// One held received datagram of fd that may be delivered now, into d.
bool take_rx_held_locked(int fd, InDatagram& d, bool after_real) {
  const auto now = Clock::now();
  for (size_t i = 0; i < g_rx_held.size(); ++i) {
    Held& h = g_rx_held[i];
    if (h.fd != fd || !(h.due <= now || (h.after_next && after_real))) continue;
    const size_t n = std::min(h.bytes.size(), d.buf.size());
    std::copy_n(h.bytes.begin(), n, d.buf.begin());
    d.size = n;
    d.from = h.addr;
    g_rx_held.erase(g_rx_held.begin() + long(i));
    return true;
  }
  return false;
}

int faulty_recv(int fd, std::span<InDatagram> in, int flags) {
  size_t k = 0;
  bool real = false;  // a real datagram was delivered: reordered ones may follow it
  for (;;) {
    {
      std::lock_guard lock(g_held_mu);
      flush_tx_locked(-1);
      while (k < in.size() && take_rx_held_locked(fd, in[k], real)) ++k;
    }
    if (k == in.size()) return int(k);
    InDatagram& d = in[k];
    if (k == 0 && !real && !(flags & MSG_DONTWAIT)) {
      // Waiting while the layer holds datagrams back: wake when the first is
      // due (a delayed send must not wait for this receive's whole timeout).
      long wait_ms = -1;
      {
        std::lock_guard lock(g_held_mu);
        const auto now = Clock::now();
        for (const Held& h : g_tx_held) {
          const long ms = long(std::chrono::duration_cast<std::chrono::milliseconds>(h.due - now).count()) + 1;
          wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
        }
        for (const Held& h : g_rx_held)
          if (h.fd == fd) {
            const long ms = long(std::chrono::duration_cast<std::chrono::milliseconds>(h.due - now).count()) + 1;
            wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
          }
      }
      if (wait_ms >= 0) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, int(std::max(0L, wait_ms))) <= 0) {
          flags = MSG_DONTWAIT;
          real = false;
          // Nothing arrived: deliver or send whatever came due meanwhile.
          std::lock_guard lock(g_held_mu);
          flush_tx_locked(-1);
          while (k < in.size() && take_rx_held_locked(fd, in[k], false)) ++k;
          if (k > 0) return int(k);
          errno = EAGAIN;
          return -1;
        }
        flags = MSG_DONTWAIT;
      }
    }
    socklen_t len = sizeof d.from;
    const ssize_t n = ::recvfrom(fd, d.buf.data(), d.buf.size(), (k > 0 || real) ? MSG_DONTWAIT : flags,
                                 reinterpret_cast<sockaddr*>(&d.from), &len);
    if (n < 0) {
      if (k > 0) return int(k);
      return -1;
    }
    d.size = size_t(n);
    flags = MSG_DONTWAIT;  // waited once: the rest only if there already
    const detail::FaultDecision f = detail::fault_decide();
    if (f.drop) continue;
    if (f.reorder || f.delay) {
      std::lock_guard lock(g_held_mu);
      g_rx_held.push_back(Held{fd, std::vector<uint8_t>(d.buf.begin(), d.buf.begin() + n), true, d.from,
                               Clock::now() + std::chrono::milliseconds(f.hold_ms), f.reorder});
      continue;
    }
    if (f.corrupt) detail::fault_corrupt(d.buf.subspan(0, d.size), f);
    if (f.dup) {
      std::lock_guard lock(g_held_mu);
      g_rx_held.push_back(Held{fd, std::vector<uint8_t>(d.buf.begin(), d.buf.begin() + n), true, d.from,
                               Clock::now(), false});
    }
    ++k;
    real = true;
  }
}

}  // namespace

namespace {

// A thread's sendmmsg or recvmmsg headers, kept from call to call: copd's loop
// sends and receives every round, and two allocations and a rebuild of its 64
// receive slots' headers per round were 3-4 % of its CPU for a barrier (perf, 4 nodes).
struct MmsgScratch {
  std::vector<mmsghdr> msgs;
  std::vector<iovec> iov;
  void fit(size_t n) {
    if (msgs.size() >= n) return;
    msgs.assign(n, mmsghdr{});  // reallocated: every msg_iov is set again (holds() fails)
    iov.assign(n, iovec{});
  }
  bool holds(size_t i, const uint8_t* data, size_t size, const sockaddr_in* name) const {
    const msghdr& h = msgs[i].msg_hdr;
    return h.msg_iov == &iov[i] && iov[i].iov_base == data && iov[i].iov_len == size && h.msg_name == name &&
           h.msg_namelen == (name ? sizeof(sockaddr_in) : 0);
  }
  void set(size_t i, uint8_t* data, size_t size, sockaddr_in* name) {
    iov[i] = iovec{data, size};
    msghdr& h = msgs[i].msg_hdr;
    h = msghdr{};
    h.msg_name = name;
    h.msg_namelen = name ? sizeof(sockaddr_in) : 0;
    h.msg_iov = &iov[i];
    h.msg_iovlen = 1;
  }
};
thread_local MmsgScratch t_send, t_recv;

}  // namespace

int send_datagrams(int fd, std::span<const OutDatagram> out) {
  if (out.empty()) return 0;
  if (active_faults()) {
    for (size_t i = 0; i < out.size(); ++i)
      if (!faulty_send(fd, out[i].bytes, out[i].to)) return i == 0 ? -1 : int(i);
    return int(out.size());
  }
  if (out.size() == 1) return raw_send(fd, out[0].bytes, out[0].to) == ssize_t(out[0].bytes.size()) ? 1 : -1;
  MmsgScratch& s = t_send;
  s.fit(out.size());
  mmsghdr* msgs = s.msgs.data();
  for (size_t i = 0; i < out.size(); ++i)
    s.set(i, const_cast<uint8_t*>(out[i].bytes.data()), out[i].bytes.size(), const_cast<sockaddr_in*>(out[i].to));
  size_t sent = 0;
  while (sent < out.size()) {
    const int r = ::sendmmsg(fd, msgs + sent, unsigned(out.size() - sent), MSG_NOSIGNAL);
    if (r <= 0) {
      if (sent == 0) return -1;
      sent++;  // skip the datagram that failed; the link resends
      continue;
    }
    sent += size_t(r);
  }
  return int(sent);
}

int recv_datagrams(int fd, std::span<InDatagram> in, int flags) {
  if (in.empty()) return 0;
  if (active_faults()) return faulty_recv(fd, in, flags);
  if (in.size() == 1) {
    socklen_t len = sizeof in[0].from;
    const ssize_t n = ::recvfrom(fd, in[0].buf.data(), in[0].buf.size(), flags,
                                 reinterpret_cast<sockaddr*>(&in[0].from), &len);
    if (n < 0) return -1;
    in[0].size = size_t(n);
    return 1;
  }
  MmsgScratch& s = t_recv;
  s.fit(in.size());
  // The kernel writes back only msg_len, msg_namelen (the same 16 bytes for IPv4),
  // msg_flags and msg_controllen: a slot's header stays valid while its buffer does.
  for (size_t i = 0; i < in.size(); ++i)
    if (!s.holds(i, in[i].buf.data(), in[i].buf.size(), &in[i].from)) s.set(i, in[i].buf.data(), in[i].buf.size(), &in[i].from);
  const int got = ::recvmmsg(fd, s.msgs.data(), unsigned(in.size()), flags, nullptr);
  for (int i = 0; i < got; ++i) {
    mmsghdr& m = s.msgs[size_t(i)];
    in[size_t(i)].size = m.msg_len;
    m.msg_hdr.msg_namelen = sizeof(sockaddr_in);
  }
  return got;
}

bool fault_flush() {
  if (!active_faults()) return false;
  std::lock_guard lock(g_held_mu);
  flush_tx_locked(-1);
  return !g_tx_held.empty() || !g_rx_held.empty();
}

bool steer_by_channel(int fd, unsigned n) {
  if (n == 0) {
    errno = EINVAL;
    return false;
  }
  // A classic BPF program of the reuseport group (it sees the UDP payload):
  // A = frame byte 6 (the channel's low byte, little-endian); A = (A - 1) mod n.
  // A datagram too short to have it returns 0: the group's first socket.
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 6),
      BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 1),
      BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, n),
      BPF_STMT(BPF_RET | BPF_A, 0),
  };
  sock_fprog prog{static_cast<unsigned short>(std::size(code)), code};
  return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) == 0;
}

sockaddr_in parse_endpoint(const std::string& text, uint16_t default_port) {
  std::string host = text;
  uint16_t port = default_port;
  if (auto colon = text.rfind(':'); colon != std::string::npos) {
    host = text.substr(0, colon);
    const std::string p = text.substr(colon + 1);
    char* end = nullptr;
    const long v = std::strtol(p.c_str(), &end, 10);
    if (p.empty() || *end || v < 0 || v > 65535)
      throw std::invalid_argument(fmt::format("bad port '{}' in '{}'", p, text));
    port = static_cast<uint16_t>(v);
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    throw std::invalid_argument(fmt::format("'{}' is not an IPv4 address", host));
  return a;
}

std::string to_string(const sockaddr_in& a) {
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return fmt::format("{}:{}", buf, ntohs(a.sin_port));
}

uint64_t endpoint_key(const sockaddr_in& a) {
  return (uint64_t{ntohl(a.sin_addr.s_addr)} << 16) | ntohs(a.sin_port);
}

UdpSocket::UdpSocket(const sockaddr_in& local, Group group) {
  const bool reuse_port = group != Group::none;
  if (group == Group::first && local.sin_port != 0) {
    // SO_REUSEPORT would let this socket join a group another process bound
    // (a second copd on the port): a plain bind first refuses a port in use.
    UdpSocket probe(local);
  }
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
  const int one = 1;
  if (reuse_port && setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw std::system_error(e, std::generic_category(), "SO_REUSEPORT");
  }
  // Room for a burst of broadcasts arriving before anyone reads them.
  int size = 4 << 20;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&local), sizeof local) < 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw std::system_error(e, std::generic_category(), "bind " + to_string(local));
  }
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

UdpSocket& UdpSocket::operator=(UdpSocket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    poll_us_ = o.poll_us_;
    o.fd_ = -1;
  }
  return *this;
}

UdpSocket UdpSocket::adopt(int fd) {
  UdpSocket s;
  s.fd_ = fd;
  return s;
}

sockaddr_in UdpSocket::local() const {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
  return a;
}

void UdpSocket::connect(const sockaddr_in& peer) {
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&peer), sizeof peer) < 0)
    throw std::system_error(errno, std::generic_category(), "connect " + to_string(peer));
}

bool UdpSocket::send(std::span<const uint8_t> bytes) const { return send_datagram(fd_, bytes); }

bool UdpSocket::send_to(std::span<const uint8_t> bytes, const sockaddr_in& to) const {
  return send_datagram(fd_, bytes, &to);
}

namespace {

ssize_t recv_one(int fd, std::vector<uint8_t>& buf, int flags, sockaddr_in* from) {
  InDatagram d{std::span<uint8_t>(buf.data(), buf.size())};
  if (recv_datagrams(fd, std::span<InDatagram>(&d, 1), flags) != 1) return -1;
  if (from) *from = d.from;
  return ssize_t(d.size);
}

}  // namespace

long recv_datagram(int fd, std::vector<uint8_t>& buf, int flags, sockaddr_in* from) {
  return recv_one(fd, buf, flags, from);
}

long poll_recv(int fd, std::vector<uint8_t>& buf, int poll_us, sockaddr_in* from) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(poll_us);
  for (;;) {
    const ssize_t n = recv_one(fd, buf, MSG_DONTWAIT, from);
    if (n >= 0) return n;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    if (std::chrono::steady_clock::now() >= until) {
      errno = EAGAIN;
      return -1;
    }
    sched_yield();  // a runnable peer on this core (the one that answers) goes first
  }
}

long UdpSocket::receive(std::vector<uint8_t>& buf, int timeout_ms, sockaddr_in* from) const {
  if (buf.size() < kMaxFrameBytes + 64) buf.resize(kMaxFrameBytes + 64);  // once: never shrunk
  sockaddr_in src{};
  // Try first without waiting: under load the datagram is often there already.
  ssize_t n = recv_one(fd_, buf, MSG_DONTWAIT, &src);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && timeout_ms != 0 && poll_us_ > 0) {
    n = poll_recv(fd_, buf, poll_us_, &src);
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    if (timeout_ms == 0) return 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      // The fault layer may hold a datagram back: look again within a millisecond.
      const long left = timeout_ms < 0 ? -1
                                       : long(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  until - std::chrono::steady_clock::now())
                                                  .count());
      const int wait = fault_flush() ? int(std::clamp<long>(left < 0 ? 1 : left, 0, 1)) : int(left);
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, wait);
      if (r < 0) return errno == EINTR ? 0 : -1;
      n = recv_one(fd_, buf, MSG_DONTWAIT, &src);
      if (n >= 0) break;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      if (timeout_ms >= 0 && std::chrono::steady_clock::now() >= until) return 0;
    }
  }
  if (n < 0) return -1;
  if (from) *from = src;
  return n;
}

}  // namespace cop::link
