// One task's use of its host's channel: the link protocol and the Pid-register
// rule, over the channel window (window.h) and the channel's UDP socket.
//
// Direct mode runs this inside the task (the window and the socket are mapped
// into it: no copies, one datagram per frame, no system call per word);
// normal mode runs the same code inside copdrv on the task's behalf, and the
// task's data crosses the driver's socket twice each way (driver/protocol.h).
//
// Link protocol (seed 000 ch. V, the CSR; seed 001's go-back-N): a frame of
// commands goes out under the task's next sequence number, MACed with the
// task's key for the channel's session (cop/link.h "Keys"); what copd sends
// is taken only under the session's down key;
// every command must come back ACKed or NACKed. No answer before the transmit
// timer runs out (doubling at each resend), or a frame NACK (checksum), and
// the frame is sent again (copd answers a resend from what it sent, without
// executing twice); after the retry limit the task gets ERR with ERR_CODE
// retry_limit. copd's reply frames are sequenced per channel: whoever reads
// the channel takes them in order only (the expected seq is in the window),
// drops duplicates and frames after a gap, and acknowledges cumulatively
// (on every command frame; a gap at once; copdrv's loop otherwise). Waiting for a result, the task gets link_down within a bounded
// time when copd stops answering the driver's heartbeats or the driver dies.
#pragma once
#include <cop/link.h>
#include <cop/wire.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "driver/window.h"

namespace cop::driver {

// How long a task blocks in one receive before it looks at the CSR, the
// driver and its timers again; copdrv sets it as the socket's SO_RCVTIMEO.
inline constexpr int kSliceMs = 20;

struct LinkOptions {
  int ack_timeout_ms = 20;   // the transmit timer (doubled at each resend, up to 32 times this)
  int retry_limit = 8;       // resends before ERR retry_limit
  int dead_ms = 1500;        // copd silent this long while we wait: link_down
  int wait_timeout_ms = 0;   // a result, or the answers of a frame (copd keeps them "in progress"
                             // while their commands wait for service), not there this long after
                             // the wait or the frame began: timeout (0: no limit)
  // Before sleeping in recv, a waiting task polls the channel socket this long, as the
  // thesis's compute node polls the interface's Data Ready strobe for a global result
  // (ch. IV): no wakeup latency when the answer comes within it. 0: sleep at once.
  int poll_us = 0;
};

struct Answer {
  wire::Error error = wire::Error::none;  // the NACK's code, or none for ACK
  bool has_data = false;
  wire::Message data;  // RSRAM/RMW/PROBE answer
  uint64_t at_cycle = 0;
};

// Results of global operations a task waits for.
enum class ResultKind : uint8_t { barrier, reduction, bcast };
struct Wanted {
  ResultKind kind = ResultKind::barrier;
  uint32_t tag = 0;     // first GAS tag
  uint32_t count = 1;   // consecutive tags
  uint8_t src_chno = 0; // bcast: the sender's channel, 0 for any
  // The call's operation identity (wire.h; 0: none, any result of the kind is taken).
  // A result or NACK of another identity is not the call's: of another site (another
  // sequence of calls on the word) it is left alone; of this site, an older generation's
  // is dropped, a later one's left for its call, and one of the same generation but
  // another shape (this round of this call with another count, datatype or function) ends
  // the wait with mismatch, and the whole of that operation is consumed (forget_operation).
  uint64_t op_id = 0;
};

// What a wait for `mine` does with a message of identity `theirs` (Wanted::op_id).
enum class IdentityFate { take, later, drop, mismatch };
IdentityFate identity_fate(uint64_t mine, uint64_t theirs, bool nack);

// Drops every message of operation `op_id` of partition `ppn` (the caller's job) the node
// holds out of context, and those that come later (the window's ring of forgotten operations).
void forget_operation(Window& w, uint8_t ppn, uint64_t op_id);

// Drops what the node holds for the GAS words [first, first+count) of partition `ppn`
// (the caller's job: two jobs on one node share the channel and its buffer) out of context:
// global results and NACKs, and broadcast data too when `broadcast_data`. libcop
// calls it for words whose earlier operation failed for it, once the controller
// has voided what was left there (all such messages are then in), and before a
// barrier or a reduction's root sends its contribution (a result needs that
// contribution, so one already here is an earlier operation's).
// With `keep` (a call's operation identity, not 0), what belongs to that call's round or a
// later one of its site (identity_fate take or later: a sender already ahead) is kept: settle() runs
// inside the next call, after whose start such words may be here already.
void forget_results(Window& w, uint8_t ppn, uint32_t first, uint32_t count, bool broadcast_data, uint64_t keep = 0);

// Messages to a node decoded once per shape: whether an entry's message decodes, and
// all of it but its MSGTAG, data words and identity, depend on its instruction word,
// word count and address word's CNTNO and CHNO alone (link.h element_message). The
// last few shapes are kept: copd's reply to a reduction's root interleaves each
// element's result and its ACK, two shapes.
class ToNodeMessages {
 public:
  // The entry's message (valid until the next call), or nullptr when it does not decode.
  const wire::Message* of(const link::Entry& e);

 private:
  struct Shape {
    bool used = false, ok = false;
    uint32_t word0 = 0, fixed = 0;  // the instruction word; the address word but its MSGTAG
    uint8_t nwords = 0;
    wire::Message m;
  };
  std::array<Shape, 4> shapes_{};
  size_t next_ = 0;
};

class ChannelClient {
 public:
  // `task_key` authenticates the frames: the task's T (copdrv enrolled it with
  // copd), its key for session S being H(T, "session", S); `down_key` is the
  // channel's (cop/link.h "Keys"). copdrv's own reader sets its driver key instead.
  ChannelClient(Window* window, int udp_fd, uint16_t tkno, const link::Key& task_key, const link::Key& down_key,
                LinkOptions options = {});
  // copdrv's reader: its frames are MACed with this key in `session` (none in another).
  void set_driver_key(const link::Key& key, uint32_t session) {
    driver_key_ = true;
    up_key_ = key;
    up_session_ = session;
  }

  // Sends up to link::kMaxElements commands (at most link::kMaxFrameBytes encoded,
  // else word_count) as one frame and waits for all
  // their answers. The return is a link error (none if every command got an
  // answer); each command's own outcome is in answers[i].
  wire::Error exchange(std::span<const wire::Message> commands, std::vector<Answer>& answers);
  // Sends commands as one frame without waiting for their answers (they are
  // collected by the next exchange or await: use when a result follows anyway).
  wire::Error send_only(std::span<const wire::Message> commands);
  // Waits for the results named by `w` (out[i] is tag w.tag + i), taking
  // out-of-context ones first. Also completes any answers still outstanding.
  // A NACK broadcast for one of the tags (a channel of the operation failed),
  // or a NACK other than mask_in_use for a command in flight, ends the wait
  // with its error.
  wire::Error await(const Wanted& w, std::span<wire::Message> out, uint64_t* at_cycle = nullptr);
  // Waits for the answers of the last send_only.
  wire::Error finish(std::vector<Answer>& answers);

  uint16_t tkno() const { return tkno_; }
  Window* window() const { return w_; }
  const LinkOptions& options() const { return opt_; }
  void set_options(const LinkOptions& o) { opt_ = o; }
  // The task's partition (its job's PPN, RegisterReply::ppn): results and
  // broadcasts of other partitions on the channel (other jobs' operations on
  // the same tags) are not its (seed 000 ch. V).
  void set_partition(uint8_t ppn) { ppn_ = ppn; }
  // A task's link error as the CSR shows it, if any.
  wire::Error csr_error() const;
  // The task's connection to copdrv (its Unix socket): copdrv gone closes it,
  // even while copdrv is a zombie that kill(pid, 0) still finds; checked before
  // every frame and while waiting. -1 (copdrv's own readers): the driver's pid.
  void set_driver_connection(int fd) { driver_conn_ = fd; }
  // The driver's side: when nobody reads the channel, take what is there
  // (waiting up to timeout_ms for the first datagram) and file it. Returns
  // false when a task holds the channel lock (it reads instead).
  bool drain(int timeout_ms);

 private:
  // One datagram from the channel socket (waiting up to timeout_ms), handled;
  // its size, 0 when none came, -1 when nothing listens where copd was.
  long receive(int timeout_ms);
  void handle_datagram(std::span<const uint8_t> bytes);
  // One element that arrived, as matching it needs it: its entry's fields and its
  // message to the node, decoded (nullptr: it does not decode). A compact run's
  // elements are matched with one decode for the run (link::element_message).
  struct Received {
    link::EntryKind kind = link::EntryKind::answer;
    uint16_t tkno = 0;  // its instruction word's TKNO field
    uint16_t index = 0;
    uint32_t seq = 0;
    uint64_t at_cycle = 0;
    const wire::Message* msg = nullptr;
  };
  // An answer to our frame in flight (by the Pid register) / a result we wait
  // for: taken, true; anything else is left to the caller.
  bool take_answer(const Received& e);
  bool take_result(const Received& e);
  // The elements of a run of a reply frame in the stream: each taken as an answer
  // or a result, else kept for filing (to_file_).
  void take_run(const link::EntryRun& r);
  // A run of ACKs to the frame in flight (copd's answer run to a burst, issue 36) taken
  // as one range of indices, and a run of results (a broadcast's or reduction's words,
  // MSGTAG one more each) written to the awaited results in one pass: what take_answer
  // and take_result decide per element is decided once for the run where it is the
  // run's (kind, TKNO, seq, opcode, partition, identity), per element only which index
  // or tag is still missing. False: the run is not of that form, nothing was taken
  // (take_run takes it element by element).
  bool take_answer_run(const link::EntryRun& r, const wire::Message& first);
  bool take_result_run(const link::EntryRun& r, const wire::Message& first);
  // The run's elements [from, to), in the awaited tags, of identity fate take or later:
  // each written to its awaited result, or filed where it is not this wait's.
  void take_result_range(const link::EntryRun& r, const wire::Message& first, size_t from, size_t to,
                         IdentityFate fate);
  // The window's modelled-time maxima raised to an answer's / a result's cycle (once per
  // run: their readers, cop_modelled_cycles and the next frame's start, read them only
  // after the call that took the run returns).
  void note_answer_cycle(uint64_t at_cycle);
  void note_result_cycle(uint64_t at_cycle);
  // Keeps entries that are some other task's (or come before their receiver
  // asks) in the out-of-context buffer, in their order; ERR overflow when it is full.
  void file_out_of_context(std::span<const link::Entry> es);
  // Takes our entries out of the out-of-context buffer.
  void take_from_buffer();
  // Until every answer of the frame in flight and every awaited result is in:
  // reads the channel when it can take the channel lock (else sleeps until
  // the reader files something), resends on the transmit timer, and gives up
  // with the CSR's error, retry_limit, link_down (driver or copd gone) or
  // timeout (LinkOptions::wait_timeout_ms).
  wire::Error wait_for_outstanding();
  // Sends the frame in flight (again), acknowledging the reply stream with it.
  wire::Error transmit();
  // An acknowledgment of the reply stream; gap: ask copd to resend at once.
  void send_ack(bool gap);
  void take_reply(const link::FrameRuns& runs);
  // A REFUSED frame: copd's for this session asks copdrv to prove again; else ignored and counted.
  void take_refusal(const link::Frame& f, std::span<const uint8_t> bytes);
  // No answer missing, and no result missing unless the wait has failed.
  bool nothing_outstanding() const;
  bool driver_alive() const;

  Window* w_;
  int fd_;
  uint16_t tkno_;
  // The keys (cop/link.h "Keys") and their per-session keys, kept for the last session asked.
  const link::Key& up_key(uint32_t session);
  const link::Key& down_key(uint32_t session);
  link::Key task_key_, down_base_;
  bool driver_key_ = false;
  link::Key up_key_{}, down_key_{};
  uint32_t up_session_ = 0, down_session_ = 0;
  bool have_up_ = false, have_down_ = false;
  link::Key refusal_key_{};
  bool have_refusal_key_ = false;
  // The session the frame in flight (or the awaited results) belong to.
  uint32_t wait_session_ = 0;
  LinkOptions opt_;
  uint32_t seq_ = 0;
  // The frame in flight: its header (its entries are not kept) and, in frame_bytes_, the
  // frame as send_only encoded it from the commands (a resend seals it again, link::reseal).
  link::Frame frame_;
  // The datagram received last, decoded as runs (handle_datagram): their storage kept.
  link::FrameRuns rx_runs_;
  ToNodeMessages rx_messages_;
  // The elements of the last datagram that are not this task's now: filed once it is taken.
  std::vector<link::Entry> to_file_;
  // The opcodes of the frame in flight's commands (an answer's index names one).
  std::vector<wire::Opcode> sent_ops_;
  std::vector<uint8_t> frame_bytes_;
  std::vector<Answer>* answers_ = nullptr;
  // The frame's answers, written only as they come (not cleared per frame: a 16 KB burst
  // has some 2100 of 64 bytes, issue 36); finish() gives the ones that never came their
  // default (Answer{}) before handing them over.
  std::vector<Answer> pending_answers_;
  // Per command: which of its answers are in (kAckIn: its ACK or NACK; kDataIn: its data).
  static constexpr uint8_t kAckIn = 1, kDataIn = 2;
  std::vector<uint8_t> answer_state_;
  size_t answers_missing_ = 0;
  uint64_t sent_at_ns_ = 0;
  uint64_t first_sent_ns_ = 0;  // the frame in flight's first transmission (its wait's start)
  int resends_ = 0;  // toward the retry limit (restarts when copd says the frame waits for service)
  int backoff_ = 0;  // the transmit timer's doublings
  // The result being waited for.
  const Wanted* wanted_ = nullptr;
  std::span<wire::Message> results_;
  std::vector<uint8_t> have_result_;  // per awaited tag: 1 once its result is in
  size_t results_missing_ = 0;
  uint64_t result_cycle_ = 0;
  wire::Error result_error_ = wire::Error::none;
  uint64_t mismatched_op_ = 0;  // an operation of another call met in the wait: consumed when it ends
  uint64_t wait_start_ns_ = 0;
  uint64_t driver_checked_ns_ = 0;
  int driver_conn_ = -1;
  std::vector<uint8_t> rx_;
  uint8_t ppn_ = 0;
};

}  // namespace cop::driver
