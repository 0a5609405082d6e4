// The link between a level-1 copd and the level-2 copd above it (seed 000
// ch. IV, Figure 5: the level-1 COP is one of the level 2's channels). It is
// the link every node uses (cop/link.h): the level-1 registers as channel
// CNTNO+1, proving the cluster key (cop/link.h "Keys": it is the channel's
// driver, its frames MACed with the driver's key), renews its lease with its frames and
// heartbeats, sends what goes up as COMMAND frames under its next sequence
// number (one frame in flight, resent on the doubling transmit timer until the
// level 2 confirms it, in the `ack` of its next REPLY frame or else a SUP_ACK;
// down after the retry limit), and takes the level 2's sequenced REPLY stream
// in order, acknowledging it cumulatively (on the next frame up, or alone
// after a few milliseconds).
//
// The frames, their encoding, the UDP helpers and the fault layer are the
// nodes' own (cop/link.h, link/udp.h); the node's ChannelClient (cop/driver)
// is not used as is because it blocks its caller until a frame is answered and
// takes answers by one task's Pid register, while copd's loop must go on
// serving its channels and the answers coming down are for many tasks.
//
// Between levels an entry carries the controller core's Hop (controller.h)
// beside the words: the entry's seq holds the hop kind and the origin task
// (supervisor bit, TKNO, CHNO), its index the origin's CNTNO. A node never sees
// these entries.
#pragma once
#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <array>
#include <vector>

#include <cop/link.h>

#include "controller/controller.h"
#include "link/daemon.h"

namespace cop::controller {

// The entry that carries `d` between levels (its hop packed into seq and index).
link::Entry level_entry(const Delivery& d);
// What an entry between levels carries (`up`: level 1 -> level 2); nullopt when
// its words do not decode within `limits`.
std::optional<Delivery> level_delivery(const link::Entry& e, bool up, const wire::Limits& limits);

struct ParentLinkOptions {
  sockaddr_in parent{};
  uint8_t cntno = 0;         // this level-1's number: it is the level 2's channel cntno+1
  int ack_timeout_ms = 20;   // the transmit timer (doubled at each resend, up to 32 times this)
  int retry_limit = 8;       // resends before the level 2 is declared down
  int dead_ms = 1500;        // the level 2 silent this long: down
  int heartbeat_ms = 100;    // a heartbeat after this long without a frame sent
  link::Key key{};           // the cluster key (copd --key), shared with the level 2
  // Called at each new registration with the level 2 (copd --ready-file: a level-1
  // copd is ready once its level 2 has it as a channel).
  std::function<void()> on_registered;
};

// A request this level-1 makes of its level 2 as the driver of its channel there
// (jobs.h "Two levels"): JOIN a job under a slot (its TKNO there), or TASK_END the
// slot (the job's last task here ended). Sent in order, one at a time, resent until
// the level 2's SUP_ACK of a request (cop/link.h "Driver requests' answers").
struct JobRequest {
  link::FrameType type = link::FrameType::join;
  uint16_t slot = 0;
  std::string job;
  uint32_t uid = 0;
  uint32_t had_ppn = 0;    // a re-join: 1 + the PPN the job had
  uint32_t had_epoch = 0;  // and that partition's epoch
};
struct JobAnswer {
  JobRequest request;
  std::array<uint32_t, 3> info{};  // a JOIN's: 1 + PPN (0: refused), JoinRefusal, epoch
  bool link_down = false;          // never answered: the level 2 went down
};

class ParentLink {
 public:
  using Log = std::function<void(link::LogLevel, const std::string&)>;
  using Tag = std::pair<uint8_t, uint32_t>;  // (PPN, GAS tag)

  // Sends on `fd` (copd's own socket: the level 2 answers to copd's address).
  ParentLink(const ParentLinkOptions& options, int fd, Log log);

  bool from_parent(const sockaddr_in& a) const;
  bool registered() const { return session_ != 0; }
  // Queues a delivery going up (Delivery::to_parent).
  void send_up(const Delivery& d);
  // A frame from the level 2: what came down, in stream order, is appended to `down`.
  // `bytes`: the frame as received (its MAC is checked here).
  void handle(const link::Frame& f, std::span<const uint8_t> bytes, const wire::Limits& limits,
              std::vector<Delivery>& down);
  // Registration, heartbeats, the transmit timer and the next frame. Returns
  // true when the level 2 has just been declared down: what was queued or in
  // flight is dropped, and `lost` gets the operations still waiting for it.
  bool tick(std::vector<Tag>& lost);
  // Jobs (jobs.h "Two levels"): a request queued; the answers that came since the last call.
  void request(JobRequest r);
  std::vector<JobAnswer> take_answers();
  // True once after each registration with a session new to us (the level 2 kept
  // none of ours: this level-1's jobs are to be joined again there).
  bool take_new_session();
  int next_timeout_ms() const;
 private:
  using Clock = std::chrono::steady_clock;
  void send(const link::Frame& f);
  link::Frame header(link::FrameType type) const;
  void transmit();
  void send_ack(bool gap);
  void take_reply(const link::Frame& f, const wire::Limits& limits, std::vector<Delivery>& down);
  bool fail(const std::string& why, std::vector<Tag>& lost);
  void send_request();
  void take_request_ack(const link::Frame& f);

  ParentLinkOptions opt_;
  int fd_;
  Log log_;
  // The registration (cop/link.h "Keys"): our nonce Nc (for this link's life),
  // copd's last challenge Ns, and the session's keys once REGISTERED.
  uint64_t nc_ = 0;
  link::Challenge ns_{};
  link::Key down_base_{}, driver_key_{}, down_key_{};
  uint32_t session_ = 0;
  uint32_t stream_session_ = 0;  // the registration whose reply stream rx_next_ follows
  Clock::time_point registering_at_{}, last_heard_{}, last_sent_{}, last_heartbeat_{};
  std::deque<link::Entry> queue_;
  // The command frame in flight.
  bool in_flight_ = false;
  link::Frame frame_;
  std::vector<uint8_t> bytes_;
  Clock::time_point sent_at_{};
  int resends_ = 0, backoff_ = 0;
  uint32_t tx_seq_ = 0;
  uint32_t heartbeat_seq_ = 0;  // the last heartbeat's seq (the level 2 takes only newer ones)
  uint64_t refused_ignored_ = 0;  // REFUSED frames with a wrong MAC or of another session
  // The level 2's reply stream.
  uint32_t rx_next_ = 1;
  bool ack_due_ = false;
  Clock::time_point ack_due_since_{};
  // Well inside the level 2's resend timer (server.h kRtoMs, 15 ms).
  static constexpr std::chrono::milliseconds kAckDelay{3};
  bool refused_ = false;
  // Operations this level-1 took up and whose result or release has not come down.
  std::set<Tag> waiting_;
  // Job requests: the oldest in flight (numbered when first sent), answers not yet taken.
  std::deque<JobRequest> requests_;
  uint32_t request_seq_ = 0;   // the last request number used (REGISTERED's seq sets it)
  uint32_t request_sent_ = 0;  // the front's number, 0 while unsent
  Clock::time_point request_at_{};
  std::vector<JobAnswer> answers_;
  bool new_session_ = false;
  static constexpr std::chrono::milliseconds kRequestResend{30};  // as copdrv's
};

}  // namespace cop::controller
