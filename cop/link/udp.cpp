#include "link/udp.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include <cop/link.h>

namespace cop::link {

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

UdpSocket::UdpSocket(const sockaddr_in& local) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
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

bool UdpSocket::send(std::span<const uint8_t> bytes) const {
  return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

bool UdpSocket::send_to(std::span<const uint8_t> bytes, const sockaddr_in& to) const {
  return ::sendto(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&to),
                  sizeof to) == static_cast<ssize_t>(bytes.size());
}

long poll_recv(int fd, std::vector<uint8_t>& buf, int poll_us, sockaddr_in* from) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(poll_us);
  sockaddr_in src{};
  for (;;) {
    socklen_t len = sizeof src;
    const ssize_t n = ::recvfrom(fd, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&src), &len);
    if (n >= 0) {
      if (from) *from = src;
      return n;
    }
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
  socklen_t len = sizeof src;
  // Try first without waiting: under load the datagram is often there already.
  ssize_t n = ::recvfrom(fd_, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&src), &len);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && timeout_ms != 0 && poll_us_ > 0) {
    n = poll_recv(fd_, buf, poll_us_, &src);
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    if (timeout_ms == 0) return 0;
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, timeout_ms);
    if (r == 0) return 0;
    if (r < 0) return errno == EINTR ? 0 : -1;
    len = sizeof src;
    n = ::recvfrom(fd_, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&src), &len);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
  }
  if (n < 0) return -1;
  if (from) *from = src;
  return n;
}

}  // namespace cop::link
