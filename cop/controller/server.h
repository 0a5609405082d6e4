// copd's network side: the controller core (controller.h) served over UDP
// to up to 64 channels (cop/link.h has the frame format and the transport).
//
// A channel belongs to the copdrv that registered it, by its UDP address and
// its proof of the cluster key (challenge and answer, cop/link.h "Keys"), for
// as long as its frames keep coming (a lease renewed by its authenticated
// frames and heartbeats). A proven registration of a held channel from the
// same IP address (a restarted copdrv) takes it over: the old holder's pending
// operations fail as when its lease runs out; from another address it is
// refused, as is a channel copd does not have, and without the proof nothing
// changes.
//
// Exactly once (cop/link.h): a command frame is executed once per (channel,
// task, seq); a resend is answered from the task's cache, an older frame is
// ignored. Every reply frame to a channel is sequenced and kept until the node
// acknowledges it, and resent (go-back-N) on the resend timer. A command frame
// is executed only for the task whose key MACed it (controller Sender); a
// frame with a wrong MAC or of another session is dropped unanswered and
// counted (LinkStats): an answer to it could be taken by the task it names. A
// task's frame while its TKNO is not enrolled in this session (copdrv
// re-enrols after a new registration) is dropped too: the task's transmit
// timer resends it. A malformed frame or command gets a
// NACK and a log line, never a crash. When a channel's lease runs out, every
// global operation still waiting for it fails with NACK link_down, so the
// other channels' tasks get an error instead of hanging.
//
// Channel interfaces in parallel (seed 000 ch. V: each channel has its own
// interface; the controller's poll counter visits them): with io_threads > 1
// copd's link side is that many I/O threads (server_io.cpp), each with its own
// socket on the listen port (SO_REUSEPORT) and the channels (c-1) mod N, which
// the kernel steers to it by the frame's channel field. They receive, check the
// CRC and the MAC and send in parallel; every frame still reaches the ONE
// controller core (this object's state, the Controller; its rounds run one at
// a time under a lock), in each channel's order, and the core answers through
// the channel's own I/O thread, so the exactly-once protocol and the poll
// counter's order are those of one thread.
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
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cop/link.h>

#include "controller/controller.h"
#include "controller/jobs.h"
#include "controller/parent_link.h"
#include "link/auth.h"
#include "link/daemon.h"
#include "link/fault.h"
#include "link/udp.h"

namespace cop::controller {

struct ServerConfig {
  sockaddr_in listen{};
  Config controller;
  int lease_ms = 1000;
  // The deadlock timer (controller.h): a LOCK held this long is taken back from
  // its holder (NACK lock_timeout to the rest of its locked sequence). 0: never.
  int lock_limit_ms = 500;
  // After a datagram, keep polling the socket this long before sleeping in poll(): the
  // thesis's controller polls its channels' DATA_RDY round robin. 0: sleep at once.
  int poll_us = 0;
  // I/O threads of the link side (1: the core thread receives and sends itself,
  // as before) and busy polling (copd --poll: a controller node with cores of its
  // own spins on its sockets instead of sleeping in poll()).
  int io_threads = 1;
  bool poll = false;
  bool verbose = false;
  // A level-1 copd under a level-2 copd (controller.has_parent): the link up
  // (parent_link.h). A level-2 copd (controller.level 2) serves level-1 copd
  // as its channels: channel c is the one with CNTNO c-1.
  std::optional<ParentLinkOptions> parent;
  // The cluster key (copd --key): every frame's MAC derives from it (cop/link.h "Keys").
  link::Key key{};
  // Runs (issue 36; copd --no-runs turns it off): a burst's element commands (a
  // broadcast's or reduction's, the same instruction word on consecutive GAS words) go
  // to the core as one run (Controller::receive_run, Config::runs), with one Origin,
  // and their ACKs and data words come back as runs: one cached answer record per run.
  bool runs = true;
};

// Frames copd refused at the link (never executed, never answered).
struct LinkStats {
  uint64_t bad_mac = 0;        // no key of the channel's holder, its tasks or this session verifies the MAC
  uint64_t other_session = 0;  // MACed for a session that is not the channel's current one
  uint64_t not_enrolled = 0;   // a task's frame before its (re-)enrolment in this session
  uint64_t stale = 0;          // a command frame older than the task's last one, or a PROVE for no open
                               // challenge (late, duplicated or replayed)
  uint64_t bad_proofs = 0;     // PROVE frames with a wrong MAC (no cluster key)
  uint64_t stale_heartbeats = 0;  // HEARTBEATs of the channel's driver not after its last (replayed): no lease
};

// copd --io-threads' default: one per channel, at most one per core beside the
// core thread's and at most 8; 1 on a machine of one or two cores.
int default_io_threads(int channels);

class Server {
 public:
  using Log = std::function<void(link::LogLevel, const std::string&)>;
  Server(const ServerConfig& config, Log log);
  ~Server();
  // The bound address (the port is the real one when the config asked for 0).
  sockaddr_in address() const { return socket_.local(); }
  // Serves until `stop` becomes true (checked at least every 50 ms).
  void run(const std::atomic<bool>& stop);
  int io_threads() const { return config_.io_threads; }
  int registered_channels() const;
  const Controller& controller() const { return controller_; }
  const LinkStats& link_stats() const { return stats_; }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_rx_{};  // the last datagram, for config_.poll_us
  // Which task's command a queued controller command is: answers are matched
  // back to it because the core services a channel's commands in order.
  struct Origin {
    uint16_t tkno;
    bool supervisor;  // sent under the driver's key
    uint32_t seq;
    uint16_t index;
    wire::Opcode op;
    uint32_t tag;
    uint8_t ppn;
    bool frame_waits;  // the frame holds a BENTRY or a reduction: its task then waits
    // A run's elements (ServerConfig::runs): commands index .. index+count-1 of the
    // frame on tags tag .. tag+count-1; each answered takes the first off.
    uint16_t count = 1;
  };
  // A task's cached answer (for resends): `count` answers, element k with index
  // entry.index + k and at_cycle entry.at_cycle + k * step (a run's ACKs are one record).
  struct Answer {
    link::Entry entry;
    uint16_t count = 1;
    uint64_t step = 0;
  };
  // One enrolled task (or the channel's driver): its key for this session,
  // and the last command frame executed for it with what copd answered (for resends).
  struct Task {
    bool enrolled = false;
    bool lost = false;         // its partition is gone (cop.h "Epochs"): every command NACK epoch_lost
    link::Key key{};           // H(T, "session", S) (cop/link.h "Keys")
    bool executed = false;
    uint32_t seq = 0;
    uint32_t outstanding = 0;  // commands of that frame the controller has not answered yet
    std::vector<Answer> answers;
  };
  // A reply frame sent on the channel's sequenced stream, kept until acknowledged.
  struct Sent {
    uint32_t seq;
    std::vector<uint8_t> bytes;
  };
  struct Channel {
    bool registered = false;
    sockaddr_in addr{};
    uint32_t session = 0;  // this registration's number (reply frames carry it)
    link::Key driver_key{};  // this session's keys (cop/link.h "Keys")
    link::Key down_key{};
    Clock::time_point last_heard{};
    std::deque<Origin> fifo;
    Origin last_answered{};
    // Commands passed up to the level 2 (X): their answers come down from it,
    // each task's in order.
    std::deque<Origin> forwarded;
    Origin last_forward_answered{};
    std::vector<Task> tasks;  // tasks_per_channel
    Task driver;              // commands sent under the driver's key
    uint32_t sup_seq = 0;     // the driver's last request done (enrol, task_end)
    uint32_t confirmed = 0;   // level 2: the level-1's last frame a reply frame's ack confirmed
    // What to send at the end of this round, as made: an answer, a run of a burst's
    // ACKs, its results or broadcast words (one copy of the words for every channel).
    std::vector<link::ElementRun> out;
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
    uint64_t forged = 0;  // frames refused at the link (logged rate-limited)
    std::array<uint32_t, 3> sup_answer{};  // what the sup_ack of request sup_seq says (a JOIN's partition, epoch)
    std::map<uint16_t, uint8_t> joined;     // TKNO -> the PPN its JOIN gave, applied at its ENROL
    std::set<uint16_t> lost_joins;          // TKNOs whose re-join found their partition gone (epoch_lost)
    uint32_t heartbeat_seq = 0;             // the driver's last heartbeat taken: older ones are replays
  };
  // A challenge sent to a REGISTER, answered (once) by a PROVE within kChallengeMs.
  struct Pending {
    uint16_t channel;
    uint64_t from;
    uint64_t nc;
    link::Challenge ns;
    Clock::time_point expires;
  };
  static constexpr int kChallengeMs = 2000;
  static constexpr size_t kMaxPending = 256;
  static constexpr std::chrono::milliseconds kHoldAck{2};
  // The resend timer of the stream (doubling up to kRtoMaxMs while nothing is
  // acknowledged), and the most it keeps unacknowledged before it fails the channel.
  static constexpr int kRtoMs = 15, kRtoMaxMs = 240;
  static constexpr size_t kMaxUnackedFrames = 4096, kMaxUnackedBytes = size_t(8) << 20;
  // The I/O threads (server_io.cpp); null with io_threads 1.
  class Io;
  // What an I/O thread found checking a frame's MAC, and with which keys: the
  // core takes it only where the key is still the channel's (else it checks again).
  struct PreVerified {
    bool task_tried = false, task_ok = false, driver_tried = false, driver_ok = false;
    link::Key task_key{}, driver_key{};
  };
  // One datagram an I/O thread received, decoded and checked.
  struct Inbound {
    std::vector<uint8_t> bytes;
    sockaddr_in from{};
    std::variant<link::Frame, link::LinkError> decoded;
    PreVerified pre;
    link::FrameRuns runs;     // whole_runs: the frame as its runs (decode_datagram)
    bool whole_runs = false;  // and `decoded` not written
  };
  // A datagram decoded for the core (one thread or an I/O thread): true, a command frame
  // with a burst kept as its runs in `runs` (link::decode_runs; a 16 KB burst one record,
  // not 2048 entries) where `keep_runs`; false, the frame or why not in `decoded` (its
  // entries one per element, as link::decode gives them), `runs` then scratch.
  static bool decode_datagram(std::span<const uint8_t> bytes, bool keep_runs, link::FrameRuns& runs,
                              std::variant<link::Frame, link::LinkError>& decoded);
  // Whether command frames with bursts may be taken as runs: the run path (--runs 1), one
  // level and no parent (the two levels' frames and hops read entries).
  bool keep_runs() const { return config_.runs && config_.controller.level == 1 && !config_.controller.has_parent; }
  void start_io();
  void run_threaded(const std::atomic<bool>& stop);
  // The round after the datagrams: the core's timers and run, replies out.
  void finish_round();
  // The channel's keys as the I/O threads check MACs with (after they change).
  void publish_keys(int channel);
  // Sends on the socket (inline) or queues for the I/O thread of `channel`.
  void transmit(int channel, std::span<const uint8_t> bytes, const sockaddr_in& to);
  bool will_receive_result(int channel, const Origin& o) const;
  // Whether any of the `n` elements of run `o` (tags o.tag on) will_receive_result.
  bool will_receive_any(int channel, const Origin& o, uint16_t n) const;
  Task* task_of(Channel& ch, const Origin& o);

  // One datagram from the socket: a registration, or a frame of a channel's holder.
  void handle_datagram(std::span<const uint8_t> bytes, const sockaddr_in& from);
  void handle_decoded(std::span<const uint8_t> bytes, const sockaddr_in& from,
                      const std::variant<link::Frame, link::LinkError>& decoded, const PreVerified* pre,
                      const link::FrameRuns* runs = nullptr);
  // A frame the link could not decode: a log line, and a frame NACK to a registered node.
  void answer_malformed(std::span<const uint8_t> bytes, const sockaddr_in& from, const link::LinkError& err);
  // A frame from the holder of channel c, by type, once its sender may send it.
  void handle_channel_frame(int c, const link::Frame& f, std::span<const uint8_t> bytes, const sockaddr_in& from,
                            const PreVerified* pre = nullptr, const link::FrameRuns* runs = nullptr);
  // Why the sender (the driver's key, an enrolled task's key, or neither)
  // may not send this frame; empty when it may.
  static std::string unauthorised(const Channel& ch, const link::Frame& f, bool driver, bool task);
  // A command frame after the sender's last one (not a resend, late copy or replay).
  static bool fresh_command(const Channel& ch, const link::Frame& f, bool driver);
  void handle_prove(const link::Frame& f, std::span<const uint8_t> bytes, const sockaddr_in& from);
  void answer_heartbeat(int c, const link::Frame& f, const sockaddr_in& from);
  void handle_register(const link::Frame& f, const sockaddr_in& from);
  // `runs`: the frame's entries as runs (decode_datagram), f then its header only.
  void handle_command(int channel, const link::Frame& f, bool supervisor, const link::FrameRuns* runs = nullptr);
  // The frame with its entries one per element: f, or the runs expanded into runs_frame_.
  const link::Frame& with_entries(const link::Frame& f, const link::FrameRuns* runs);
  // handle_command's state over the frame's elements: the sender, the limits, whether the
  // frame waits for a result, and the last element decoded whole into a command (queued
  // last, last_command_; its instruction word and word count): the element
  // commands of a burst share them.
  struct Taking {
    Sender sender;
    wire::Limits limits;
    bool waits = false;
    bool whole = false;
    uint8_t nwords = 0;
    uint32_t word0 = 0;
  };
  // Element i of the frame (entry e), decoded and checked, queued or NACKed.
  void take_entry(int channel, Channel& ch, Task& task, const link::Frame& f, const link::Entry& e, size_t i,
                  Taking& t);
  // A lost task's frame (Task::lost): every command NACK epoch_lost.
  void answer_lost(int channel, const link::Frame& f, Task& task);
  // handle_command's parts: a frame the task sent before (true: answered as such), a
  // command that does not decode (its NACK).
  bool answer_repeat(int channel, Channel& ch, Task& task, const link::Frame& f);
  void nack_malformed(int channel, Channel& ch, Task& task, const link::Frame& f, const link::Entry& e, size_t i,
                      const wire::DecodeError& err);
  void handle_driver_request(int channel, const link::Frame& f);
  // A JOIN: the task's job's partition (jobs.h); the sup_ack's info[0..2] (1 + PPN,
  // JoinRefusal, the partition's epoch). nullopt: a level-1 asked its level 2 for the
  // job; the JOIN is done (and answered) when the answer comes (take_job_answers).
  std::optional<std::array<uint32_t, 3>> join_job(int channel, const link::Frame& f);
  // The join in this controller's own table (one level, or a level 2's level-1 jobs).
  std::array<uint32_t, 3> join_here(int channel, const link::Frame& f);
  // Two levels (server_levels.cpp, jobs.h "Two levels"). A level-1: a JOIN of a job it
  // does not hold waits for the level 2's answer; what the level 2 answered; its jobs
  // joined again at a new registration, and lost when the level 2 no longer has them;
  // a job given back (TASK_END of its slot). A level 2: a level-1's slot given back.
  std::optional<std::array<uint32_t, 3>> join_through_parent(int channel, const link::Frame& f);
  void take_job_answers();
  void joined_above(const JobAnswer& a);
  void rejoin_jobs();
  void lose_job(const std::string& job, const std::string& why);
  void give_back_slot(const Jobs::Freed& freed);
  void leave_slot(int channel, uint16_t slot);
  // A re-join into a partition that is gone: refused epoch_lost, logged.
  std::array<uint32_t, 3> lost_join(int channel, const link::Frame& f, const std::string& why);
  // Task tkno of channel c left its job: a job left without tasks frees its partition.
  void leave_job(int channel, uint16_t tkno);
  void take_ack(int channel, const link::Frame& f);
  // A frame whose sender may not send it: logged and counted, not answered.
  void refuse_forged(int channel, const link::Frame& f, const std::string& why);
  // leave: the task leaves its job too (not when a JOIN for the number's next task came first).
  void end_task(int channel, uint16_t tkno, bool leave = true);
  // What the controller core sent: answers to the asking task (by the
  // channel's FIFO of origins), results and broadcasts to every channel of
  // the mask; queued in each channel's `out` for send_replies.
  void route_deliveries(std::vector<Delivery>& deliveries);
  // One delivery of the element path (not a run).
  void route_delivery(const Delivery& d);
  // A run of ACKs and the run of data words they sent (`data`, or null): the ACKs
  // to the asking task as one cached record; false (nothing done) when its origin is
  // not one queued run (route them element by element then).
  bool route_run(const Delivery& acks, Delivery* data);
  // The oldest queued command of `who`'s task in partition `ppn` on the channel (the one
  // the core serviced): its origin, `n` elements taken off it.
  Origin take_origin(Channel& ch, const Sender& who, uint8_t ppn, uint16_t n);
  // Data run `d`'s elements (to nodes, broadcast kind), its words moved out of it.
  static link::ElementRun data_run(Delivery& d);
  // A command of the frame queued for the core, with its origin (`follows`: the frame's
  // command before it was queued last, so it may be the next element of a run).
  void take_command(Channel& ch, Task& task, const Origin& o, const wire::Message& m, bool follows);
  // The entries from i on that continue the run queued last (a burst's elements: the same
  // instruction word, the MSGTAG + 1 each), taken whole (decoded from the command before,
  // checked once: what validate checks of them differs in the MSGTAG's bounds only); how
  // many, 0 when entry i is not one or one of them fails the checks (then element by element).
  size_t take_run_stretch(Channel& ch, Task& task, const link::Frame& f, size_t i, const wire::Limits& limits);
  // The same for a run kept whole (decode_datagram): its elements from `from` on (element
  // from - 1 queued last), read from its words (no Entry each); how many, 0 when they do
  // not continue the run or one fails the checks (then element by element).
  size_t take_run_whole(Channel& ch, Task& task, const link::EntryRun& r, size_t from, const wire::Limits& limits);
  // handle_command's end: the frame's commands to the core, its runs as runs.
  void queue_commands(int channel, uint64_t ready_at, Sender sender);
  void route_failures();
  // A result, broadcast word or NACK for every registered channel of the delivery's mask.
  void queue_broadcast(const Delivery& d);
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
  void take_from_parent(const link::Frame& f, std::span<const uint8_t> bytes);
  void route_from_parent(const Delivery& down);
  void parent_tick();
  // End of a round: the level 2's SUP_ACKs of level-1 frames that no reply
  // frame's ack confirmed (after the round's replies: off a result's path).
  void send_confirmations();
  // Each channel's queued entries as sequenced reply frames (unless held for
  // a result, kHoldAck), and the go-back-N resend of what is unacknowledged.
  void send_replies();
  // Channel c's `out` as sequenced reply frames (one when the node's decoder takes it),
  // queued in batch_ and kept in its unacknowledged stream.
  void send_out(int channel, Channel& ch, Clock::time_point now);
  // A reply frame's byte storage: one acknowledged before (spare_frames_), or new.
  std::vector<uint8_t> spare_frame();
  // The next reply frame of `out` from its run `s`, element `k` on, encoded into `bytes`;
  // s and k moved past it.
  void encode_next(const Channel& ch, const link::Frame& f, size_t& s, size_t& k, std::vector<uint8_t>& bytes);
  // The part of `out` from its run `s`, element `k` on, of at most `room` elements, into
  // `into`; s and k moved past it.
  static void next_frame(const std::vector<link::ElementRun>& out, size_t& s, size_t& k,
                         std::vector<link::ElementRun>& into, size_t room);
  int next_timeout_ms() const;
  void check_leases();
  // may_return: its lease ran out, and its driver, registering again, re-joins
  // its tasks' jobs (away_); otherwise they leave their jobs now.
  void drop_channel(int channel, const std::string& why, bool may_return = false);
  // key: the MAC's (a channel's down key, or its refusal key); none for CHALLENGE.
  void send_frame(const link::Frame& f, const sockaddr_in& to, const link::Key* key = nullptr);
  // A REFUSED answering frame `refused` (its channel, and its nonce, seq, type and
  // session echoed), MACed under the channel's refusal key (cop/link.h "REFUSED").
  void refuse(const sockaddr_in& to, link::Refusal why, const link::Frame& refused, const std::string& text);
  // Rate-limited warnings (at most kLogBurst lines a second, then one count).
  void log_limited(const std::string& line);
  Channel& chan(int c) { return channels_[size_t(c - 1)]; }

  ServerConfig config_;
  Log log_;
  link::UdpSocket socket_;
  Controller controller_;
  Jobs jobs_;
  // Tasks of a channel whose lease ran out, still members of their jobs until
  // this time: their driver re-joins them with the PPN they had (a copd stopped
  // past the lease drops every channel of a job at once; leaving would free and
  // clear its partition, task address spaces included, under the tasks).
  std::map<std::pair<int, uint16_t>, Clock::time_point> away_;
  std::unique_ptr<ParentLink> parent_;
  // A level-1's jobs asked of its level 2: the slot asked under, and the JOINs (one per
  // channel) waiting for the answer; a refusal is kept until they have had it.
  struct Asking {
    uint16_t slot = 0;
    bool answered = false;
    link::JoinRefusal refusal = link::JoinRefusal::none;
    std::map<int, link::Frame> waiting;
  };
  std::map<std::string, Asking> asking_;
  // Level 2: channels whose last frame is to be confirmed (force: a resend, confirmed again).
  std::vector<std::pair<int, bool>> confirm_;
  std::vector<Channel> channels_;
  std::unordered_map<uint64_t, int> by_address_;
  std::vector<Delivery> deliveries_;
  // handle_command's, kept (no allocation per frame): the first command of each queued
  // record, the record's elements (1: one command), every element's data words (data64),
  // and the command queued last (a run's: its last element).
  std::vector<wire::Message> frame_commands_;
  std::vector<uint16_t> frame_runs_;
  std::vector<uint64_t> frame_data_;
  wire::Message last_command_;
  std::vector<link::ElementRun> frame_out_;    // send_replies': one frame's part of a channel's out
  // send_replies', kept (no allocation per round): the round's datagrams, the channel whose
  // I/O thread sends each, the channels whose resend window overflowed; and the storage of
  // reply frames acknowledged (take_ack), at most kSpareFrames, for the next ones.
  std::vector<link::OutDatagram> batch_;
  std::vector<int> batch_channel_;
  std::vector<int> overflowed_;
  std::vector<std::vector<uint8_t>> spare_frames_;
  static constexpr size_t kSpareFrames = 64;
  std::vector<uint8_t> buf_, out_buf_;
  // handle_datagram's frame, decoded into again and again (its entries' storage kept).
  std::variant<link::Frame, link::LinkError> rx_decoded_;
  link::FrameRuns rx_runs_;  // and as runs (decode_datagram)
  link::Frame runs_frame_;   // with_entries' expansion
  static constexpr int kBatch = 64;  // datagrams taken with one recv_datagrams
  std::vector<std::vector<uint8_t>> rx_;
  std::vector<link::InDatagram> rx_in_;
  struct IoDelete {
    void operator()(Io* io) const;
  };
  std::unique_ptr<Io, IoDelete> io_;
  Clock::time_point last_lease_check_{};
  const Clock::time_point started_ = Clock::now();  // the core's clock (tick) counts from here
  // The core's deadlock timer on copd's clock; logs a lock taken back.
  void tick_controller();
  uint32_t next_session_ = 1;
  // copd's epoch (cop.h "Epochs"): random, nonzero, new at every start; in REGISTERED.
  const uint32_t epoch_ = [] {
    uint32_t e = 0;
    while (e == 0) e = uint32_t(link::random_nonce());
    return e;
  }();
  std::deque<Pending> pending_;
  LinkStats stats_;
  static constexpr int kLogBurst = 20;
  Clock::time_point log_second_{};
  int log_lines_ = 0;
  uint64_t log_suppressed_ = 0;
};

}  // namespace cop::controller
