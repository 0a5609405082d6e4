// The UDP side of the link (see cop/link.h for why UDP): one socket per
// channel on the node, one for all channels on copd.
#pragma once
#include <netinet/in.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace cop::link {

// Every datagram of the link goes through this pair (and so through the
// fault layer, fault.h, when COP_FAULTS or --faults switched it on).
struct OutDatagram {
  std::span<const uint8_t> bytes;
  const sockaddr_in* to = nullptr;  // null: the connected peer
};
// Sends them (one sendmmsg without faults); returns how many went (a datagram
// the fault layer dropped or holds counts as sent), -1 with errno when the first failed.
int send_datagrams(int fd, std::span<const OutDatagram> out);
inline bool send_datagram(int fd, std::span<const uint8_t> bytes, const sockaddr_in* to = nullptr) {
  const OutDatagram d{bytes, to};
  return send_datagrams(fd, std::span<const OutDatagram>(&d, 1)) == 1;
}
struct InDatagram {
  std::span<uint8_t> buf;
  size_t size = 0;
  sockaddr_in from{};
};
// Receives up to in.size() datagrams: flags MSG_DONTWAIT, or 0 to wait as the
// socket's SO_RCVTIMEO says for the first. Returns how many came, or -1 with
// errno (EAGAIN/EWOULDBLOCK: none; ECONNREFUSED: the peer's port is closed).
int recv_datagrams(int fd, std::span<InDatagram> in, int flags);
// Sends what the fault layer holds back once its time has come; true while it
// still holds something (callers then wake within a millisecond to flush it).
bool fault_flush();

// A group of `n` SO_REUSEPORT sockets on one address, fd the group's first:
// each datagram goes to the socket (channel - 1) mod n of the group (in bind
// order) by the channel field of its header (cop/link.h, byte 6; channels <= 255),
// so a channel's frames all reach one socket, in order. False with errno.
bool steer_by_channel(int fd, unsigned n);
// The group member steer_by_channel sends channel `channel`'s datagrams to.
inline unsigned channel_socket(unsigned channel, unsigned n) { return ((channel & 0xffu) - 1u) % n; }

// "IP:PORT" or "IP" (port = default_port) -> address; throws std::invalid_argument.
sockaddr_in parse_endpoint(const std::string& text, uint16_t default_port);
std::string to_string(const sockaddr_in& addr);
uint64_t endpoint_key(const sockaddr_in& addr);

// Polls fd with non-blocking receives for up to poll_us microseconds (a busy wait, as a
// node polls its interface's Data Ready strobe); returns the datagram's length, or -1
// with errno EAGAIN when none came (or the receive's own errno). `from` as recvfrom.
long poll_recv(int fd, std::vector<uint8_t>& buf, int poll_us, sockaddr_in* from = nullptr);
// One datagram into buf (recv_datagrams with one slot): its length, or -1 with errno.
long recv_datagram(int fd, std::vector<uint8_t>& buf, int flags, sockaddr_in* from = nullptr);

class UdpSocket {
 public:
  UdpSocket() = default;
  // Binds to `local` (port 0: any free one); throws std::system_error.
  // A group of sockets on the same address (SO_REUSEPORT), each read by its
  // own thread (copd --io-threads): the group's first still refuses a port that
  // any socket holds, as a socket without it; the others join it.
  enum class Group { none, first, join };
  explicit UdpSocket(const sockaddr_in& local, Group group = Group::none);
  ~UdpSocket();
  UdpSocket(UdpSocket&& o) noexcept : fd_(o.fd_), poll_us_(o.poll_us_) { o.fd_ = -1; }
  UdpSocket& operator=(UdpSocket&& o) noexcept;
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  // Adopts a descriptor (for instance one passed by the driver).
  static UdpSocket adopt(int fd);
  int fd() const { return fd_; }
  int release() { int f = fd_; fd_ = -1; return f; }
  sockaddr_in local() const;
  // Fixes the peer: send() goes there, and only its datagrams are received.
  void connect(const sockaddr_in& peer);

  // Returns false when the datagram could not be sent (errno set).
  bool send(std::span<const uint8_t> bytes) const;
  bool send_to(std::span<const uint8_t> bytes, const sockaddr_in& to) const;
  // Waits up to timeout_ms (-1: forever) for a datagram into buf (kept at the
  // largest frame's size, never shrunk: use its first n bytes); returns n,
  // 0 on timeout, -1 on error (errno set; ECONNREFUSED: the peer's port is closed).
  // With set_poll_us(us) it first polls for that long (poll_recv) before sleeping.
  long receive(std::vector<uint8_t>& buf, int timeout_ms, sockaddr_in* from = nullptr) const;
  void set_poll_us(int us) { poll_us_ = us; }

 private:
  int fd_ = -1;
  int poll_us_ = 0;
};

}  // namespace cop::link
