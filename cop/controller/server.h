// copd's network side: the controller core (controller.h) served over UDP
// to up to 64 channels (cop/link.h has the frame format and the transport).
//
// A channel belongs to the copdrv that registered it, by its UDP address and
// the driver secret it sent, for as long as its frames keep coming (a lease
// renewed by its authenticated frames and heartbeats). A registration of a
// held channel from the same IP address (a restarted copdrv) takes it over:
// the old holder's pending operations fail as when its lease runs out; from
// another address it is refused, as is a channel copd does not have.
//
// Exactly once (cop/link.h): a command frame is executed once per (channel,
// task, seq); a resend is answered from the task's cache, an older frame is
// ignored. Every reply frame to a channel is sequenced and kept until the node
// acknowledges it, and resent (go-back-N) on the resend timer. A command frame
// is executed only for the task its token belongs to (controller Sender); a
// wrong token gets NACK protection for every command and changes nothing. A malformed frame or command gets a
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
#include <map>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cop/link.h>

#include "controller/controller.h"
#include "controller/jobs.h"
#include "controller/parent_link.h"
#include "link/daemon.h"
#include "link/fault.h"
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
  // A level-1 copd under a level-2 copd (controller.has_parent): the link up
  // (parent_link.h). A level-2 copd (controller.level 2) serves level-1 copd
  // as its channels: channel c is the one with CNTNO c-1.
  std::optional<ParentLinkOptions> parent;
};

class Server {
 public:
  using Log = std::function<void(link::LogLevel, const std::string&)>;
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
    bool supervisor;  // sent with the driver secret
    uint32_t seq;
    uint16_t index;
    wire::Opcode op;
    uint32_t tag;
    uint8_t ppn;
    bool frame_waits;  // the frame holds a BENTRY or a reduction: its task then waits
  };
  // One enrolled task (or the channel's driver): its token, and the last
  // command frame executed for it with what copd answered (for resends).
  struct Task {
    bool enrolled = false;
    uint64_t token = 0;
    bool executed = false;
    uint32_t seq = 0;
    uint32_t outstanding = 0;  // commands of that frame the controller has not answered yet
    std::vector<link::Entry> answers;
  };
  // A reply frame sent on the channel's sequenced stream, kept until acknowledged.
  struct Sent {
    uint32_t seq;
    std::vector<uint8_t> bytes;
  };
  struct Channel {
    bool registered = false;
    sockaddr_in addr{};
    uint64_t secret = 0;   // the driver secret given at registration
    uint32_t session = 0;  // this registration's number (reply frames carry it)
    Clock::time_point last_heard{};
    std::deque<Origin> fifo;
    Origin last_answered{};
    // Commands passed up to the level 2 (X): their answers come down from it,
    // each task's in order.
    std::deque<Origin> forwarded;
    Origin last_forward_answered{};
    std::vector<Task> tasks;  // tasks_per_channel
    Task driver;              // commands sent with the driver secret
    uint32_t sup_seq = 0;     // the driver's last request done (enrol, task_end)
    uint32_t confirmed = 0;   // level 2: the level-1's last frame a reply frame's ack confirmed
    std::vector<link::Entry> out;  // entries to send at the end of this round
    // Piggybacked acknowledgments: the answers to a frame whose task now waits
    // for a result this channel will receive are held (at most kHoldAck) and
    // go out in the result's datagram, so a barrier costs one datagram in and
    // one out per channel. Anything else for the channel sends them at once.
    Clock::time_point hold_until{};
    bool urgent = false;
    // The sequenced stream to the node (go-back-N): every reply frame gets the
    // next seq and stays in `unacked` until the node acknowledges it.
    uint32_t tx_seq = 0;
    uint32_t acked = 0;
    std::deque<Sent> unacked;
    size_t unacked_bytes = 0;
    Clock::time_point resend_at{};
    int rto_ms = 0;
    Clock::time_point fast_resend_at{};
    uint64_t forged = 0;  // frames refused for a wrong token (logged rate-limited)
    std::array<uint32_t, 2> sup_answer{};  // what the sup_ack of request sup_seq says (a JOIN's partition)
    std::map<uint16_t, uint8_t> joined;     // TKNO -> the PPN its JOIN gave, applied at its ENROL
  };
  static constexpr std::chrono::milliseconds kHoldAck{2};
  // The resend timer of the stream (doubling up to kRtoMaxMs while nothing is
  // acknowledged), and the most it keeps unacknowledged before it fails the channel.
  static constexpr int kRtoMs = 15, kRtoMaxMs = 240;
  static constexpr size_t kMaxUnackedFrames = 4096, kMaxUnackedBytes = size_t(8) << 20;
  bool will_receive_result(int channel, const Origin& o) const;
  Task* task_of(Channel& ch, const Origin& o);

  // One datagram from the socket: a registration, or a frame of a channel's holder.
  void handle_datagram(std::span<const uint8_t> bytes, const sockaddr_in& from);
  // A frame the link could not decode: a log line, and a frame NACK to a registered node.
  void answer_malformed(std::span<const uint8_t> bytes, const sockaddr_in& from, const link::LinkError& err);
  // A frame from the holder of channel c, by type, once its sender may send it.
  void handle_channel_frame(int c, const link::Frame& f, const sockaddr_in& from);
  // Why the sender (the driver's secret, an enrolled task's token, or neither)
  // may not send this frame; empty when it may.
  static std::string unauthorised(const Channel& ch, const link::Frame& f, bool driver, bool task);
  void answer_heartbeat(int c, const link::Frame& f, const sockaddr_in& from);
  void handle_register(const link::Frame& f, const sockaddr_in& from);
  void handle_command(int channel, const link::Frame& f, bool supervisor);
  void handle_driver_request(int channel, const link::Frame& f);
  // A JOIN: the task's job's partition (jobs.h); the sup_ack's info[0..1].
  std::array<uint32_t, 2> join_job(int channel, const link::Frame& f);
  // Task tkno of channel c left its job: a job left without tasks frees its partition.
  void leave_job(int channel, uint16_t tkno);
  void take_ack(int channel, const link::Frame& f);
  // A frame whose sender may not send it: logged, and a command frame's
  // commands each NACKed protection (outside the sequenced stream).
  void refuse_forged(int channel, const link::Frame& f, const std::string& why);
  // leave: the task leaves its job too (not when a JOIN for the number's next task came first).
  void end_task(int channel, uint16_t tkno, bool leave = true);
  // What the controller core sent: answers to the asking task (by the
  // channel's FIFO of origins), results and broadcasts to every channel of
  // the mask; queued in each channel's `out` for send_replies.
  void route_deliveries(std::vector<Delivery>& deliveries);
  void route_failures();
  // An answer for the task of origin `o` on channel c: into its frame's cache and the channel's out.
  void queue_answer(int c, const Origin& o, const wire::Message& msg, uint64_t at_cycle, bool urgent);
  // Two levels (server_levels.cpp). A level 2: a level-1's command frame, and
  // what goes down to the level-1 controllers (their hops in the entries).
  void handle_child_frame(int channel, const link::Frame& f);
  void route_to_children(std::vector<Delivery>& deliveries);
  // A level 1: what goes up (a command passed up leaves its channel's FIFO for
  // `forwarded`), what comes down, and the link's timers (its failure NACKs
  // link_down whatever waits for the level 2).
  void route_up(const Delivery& d);
  void take_from_parent(const link::Frame& f);
  void route_from_parent(const Delivery& down);
  void parent_tick();
  // End of a round: the level 2's SUP_ACKs of level-1 frames that no reply
  // frame's ack confirmed (after the round's replies: off a result's path).
  void send_confirmations();
  // Each channel's queued entries as sequenced reply frames (unless held for
  // a result, kHoldAck), and the go-back-N resend of what is unacknowledged.
  void send_replies();
  int next_timeout_ms() const;
  void check_leases();
  void drop_channel(int channel, const std::string& why);
  void send_frame(const link::Frame& f, const sockaddr_in& to);
  void refuse(const sockaddr_in& to, link::Refusal why, uint16_t channel, const std::string& text);
  // Rate-limited warnings (at most kLogBurst lines a second, then one count).
  void log_limited(const std::string& line);
  Channel& chan(int c) { return channels_[size_t(c - 1)]; }

  ServerConfig config_;
  Log log_;
  link::UdpSocket socket_;
  Controller controller_;
  Jobs jobs_;
  std::unique_ptr<ParentLink> parent_;
  // Level 2: channels whose last frame is to be confirmed (force: a resend, confirmed again).
  std::vector<std::pair<int, bool>> confirm_;
  std::vector<Channel> channels_;
  std::unordered_map<uint64_t, int> by_address_;
  std::vector<Delivery> deliveries_;
  std::vector<uint8_t> buf_, out_buf_;
  static constexpr int kBatch = 64;  // datagrams taken with one recv_datagrams
  std::vector<std::vector<uint8_t>> rx_;
  std::vector<link::InDatagram> rx_in_;
  Clock::time_point last_lease_check_{};
  uint32_t next_session_ = 1;
  static constexpr int kLogBurst = 20;
  Clock::time_point log_second_{};
  int log_lines_ = 0;
  uint64_t log_suppressed_ = 0;
};

}  // namespace cop::controller
