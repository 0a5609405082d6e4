// copd's network side: the controller core (controller.h) served over UDP
// to up to 64 channels (cop/link.h has the frame format and the transport).
//
// A channel belongs to the copdrv that registered it, by its UDP address, for
// as long as frames keep coming from it (a lease renewed by every frame and by
// the driver's heartbeats). A second registration of a held channel and a
// channel copd does not have are refused. A malformed frame or command gets a
// NACK and a log line, never a crash. When a channel's lease runs out, every
// global operation still waiting for it fails with NACK link_down, so the
// other channels' tasks get an error instead of hanging.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <cop/link.h>

#include "controller/controller.h"
#include "link/udp.h"

namespace cop::controller {

struct ServerConfig {
  sockaddr_in listen{};
  Config controller;
  int lease_ms = 1000;
  // After a datagram, keep polling the socket this long before sleeping in poll(): the
  // thesis's controller polls its channels' DATA_RDY round robin. 0: sleep at once.
  int poll_us = 0;
  bool verbose = false;
};

class Server {
 public:
  using Log = std::function<void(const std::string&)>;
  Server(const ServerConfig& config, Log log);
  // The bound address (the port is the real one when the config asked for 0).
  sockaddr_in address() const { return socket_.local(); }
  // Serves until `stop` becomes true (checked at least every 50 ms).
  void run(const std::atomic<bool>& stop);
  int registered_channels() const;
  const Controller& controller() const { return controller_; }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_rx_{};  // the last datagram, for config_.poll_us
  // Which task's command a queued controller command is: answers are matched
  // back to it because the core services a channel's commands in order.
  struct Origin {
    uint16_t tkno;
    uint32_t seq;
    uint16_t index;
    wire::Opcode op;
    uint32_t tag;
    uint8_t ppn;
    bool frame_waits;  // the frame holds a BENTRY or a reduction: its task then waits
  };
  // What copd answered to a task's last command frame, for resends.
  struct TaskCache {
    uint32_t seq = 0;
    bool valid = false;
    std::vector<link::Entry> answers;
  };
  struct Channel {
    bool registered = false;
    sockaddr_in addr{};
    Clock::time_point last_heard{};
    std::deque<Origin> fifo;
    Origin last_answered{};
    std::unordered_map<uint16_t, TaskCache> cache;
    std::vector<link::Entry> out;  // entries to send at the end of this round
    // Piggybacked acknowledgments: the answers to a frame whose task now waits
    // for a result this channel will receive are held (at most kHoldAck) and
    // go out in the result's datagram, so a barrier costs one datagram in and
    // one out per channel. Anything else for the channel sends them at once.
    Clock::time_point hold_until{};
    bool urgent = false;
  };
  static constexpr std::chrono::milliseconds kHoldAck{2};
  bool will_receive_result(int channel, const Origin& o) const;

  void handle(std::span<const uint8_t> bytes, const sockaddr_in& from);
  void handle_register(const link::Frame& f, const sockaddr_in& from);
  void handle_command(int channel, const link::Frame& f);
  void route(std::vector<Delivery>& deliveries);
  void flush();
  int next_timeout_ms() const;
  void check_leases();
  void drop_channel(int channel, const std::string& why);
  void send_frame(const link::Frame& f, const sockaddr_in& to);
  void refuse(const sockaddr_in& to, link::Refusal why, uint16_t channel, const std::string& text);
  Channel& chan(int c) { return channels_[size_t(c - 1)]; }

  ServerConfig config_;
  Log log_;
  link::UdpSocket socket_;
  Controller controller_;
  std::vector<Channel> channels_;
  std::unordered_map<uint64_t, int> by_address_;
  std::vector<Delivery> deliveries_;
  std::vector<uint8_t> buf_, out_buf_;
  std::vector<std::vector<uint8_t>> batch_;  // frames of one round, sent with one sendmmsg
  static constexpr int kBatch = 64;          // datagrams taken with one recvmmsg
  std::vector<std::vector<uint8_t>> rx_;
  std::vector<sockaddr_in> rx_from_;
  std::vector<iovec> rx_iov_;
  std::vector<mmsghdr> rx_msgs_;
  Clock::time_point last_lease_check_{};
};

}  // namespace cop::controller
