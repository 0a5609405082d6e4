// The link between a compute node's channel interface and copd: how COP
// messages (wire.h) travel over the secondary network.
//
// Transport: UDP datagrams. The thesis's channel is a dedicated serial link
// whose interface hardware does its own link protocol (checksum, an ACK per
// command, resend on NACK or on the transmit timer, a retry limit, then ERR in
// the CSR). UDP gives exactly a frame per datagram and no protocol of its own,
// so that link protocol is ours and visible (and testable) instead of being
// hidden in TCP's retransmission, and a lost or late peer shows as a timeout
// as on the real link. Datagrams also let copd serve all 64 channels from one
// socket without a connection per channel or head-of-line blocking between
// them.
//
// Frame (little-endian, one per datagram):
//   header  magic 'COPL', version, type, channel, tkno, entry count, seq,
//           cycles (copd -> node: copd's modelled clock when sent; a COMMAND
//           frame: the modelled time of the last global result the node took,
//           when it starts writing the frame: its commands are ready t_CN-COP
//           later, seed 000 ch. VI), info[4], token (u64),
//           ack (u32), session (u32), payload length, CRC-32 of header (with
//           checksum 0) and payload
//   entries each: at_cycle (u64), seq (u32), index (u16), kind (u8),
//           word count (u8), then the COP message's 1..4 words
//   text    the rest of the payload (REFUSED: the reason)
//
// Exactly once, both ways (seed 000 ch. V's interface protocol, done as seed
// 001's go-back-N):
//   node -> copd  A COMMAND frame carries up to kMaxEntries commands of one
//           task (its TKNO in the header) under that task's next sequence
//           number: whole bursts (LOCK ... UNLOCK), never half of one. copd answers each command with an ANSWER entry tagged
//           (seq, index): the ACK or NACK, then the command's data (RSRAM,
//           RMW, PROBE) if any. It executes a frame once: the same seq again
//           is a resend (XMIT), answered from the task's one cached frame
//           (and, while its commands still wait for service, with an "in
//           progress" entry, kInProgressIndex, so the node's retry count
//           restarts); an older seq (late or duplicated on the way) is ignored.
//   copd -> node  Every REPLY frame to a channel (answers, and the BROADCAST
//           entries: barrier exits, reduction results, BCAST data) carries the
//           channel's next seq and copd's session of the registration, and is
//           kept until acknowledged: the `ack` of any authenticated frame from
//           the node is cumulative; on the resend timer (or an ACK frame
//           reporting a gap) copd sends every unacknowledged frame again. The
//           reader of the channel (the task holding the channel lock, or
//           copdrv's drain) takes only the expected seq (kept in the channel
//           window), drops duplicates and frames after a gap. A node that stops
//           acknowledging fills the bounded window: copd fails the channel.
//           REPLY frames with seq 0 are outside the stream (NACKs for a frame
//           copd did not accept).
// Who sent it: REGISTER carries a random driver secret in `token`; frames of
// the driver (HEARTBEAT, BYE, ENROL, JOIN, TASK_END, its ACKs) carry it. ENROL tells
// copd a task's TKNO and token (random, per enrolment; TASK_END forgets it);
// those requests are sequenced too and confirmed by SUP_ACK. A COMMAND frame
// is executed only with the token of the task it names; the controller gets
// that authenticated sender (controller.h Sender), never the frame's claim.
#pragma once
#include <cop/wire.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace cop::link {

inline constexpr uint32_t kMagic = 0x4C504F43;  // "COPL"
inline constexpr uint8_t kVersion = 2;
inline constexpr size_t kHeaderBytes = 64;
inline constexpr size_t kEntryHeaderBytes = 16;
inline constexpr size_t kMaxFrameBytes = 65000;
// Entries a frame may carry: as many 4-word entries as fit in one datagram
// (64 + 2000 x 32 bytes), so a burst of element commands (up to t_MAX-OP's 128
// inside one LOCK/UNLOCK, seed 000 ch. VI), and the many bursts of one array
// call, travel in one frame and are answered in as few.
inline constexpr int kMaxEntries = 2000;
static_assert(kHeaderBytes + size_t(kMaxEntries) * (kEntryHeaderBytes + 4 * wire::kMaxWords) <= kMaxFrameBytes);
inline constexpr uint16_t kDefaultPort = 7040;
// An ANSWER entry with this index (outside the stream, seq 0 frame) says: the
// resent frame `seq` is there, its commands still wait for service (a LOCK
// held elsewhere, an operation in progress); the node's retry count restarts.
inline constexpr uint16_t kInProgressIndex = 0xFFFF;

// Serial-number order of sequence numbers (RFC 1982): whether `a` comes after
// `b`, across the wrap at 2^32 (seq and session counters run on for ever).
constexpr bool seq_after(uint32_t a, uint32_t b) { return int32_t(a - b) > 0; }

enum class FrameType : uint8_t {
  command = 1,        // node -> copd: COP commands of one task
  reply = 2,          // copd -> node: answers and broadcasts for one channel
  register_ = 3,      // node -> copd: copdrv claims its channel
  registered = 4,     // copd -> node: info = {channels, tasks per channel, tas words, gas words}
  refused = 5,        // copd -> node: info[0] = reason (Refusal), text = why
  heartbeat = 6,      // node -> copd: the channel is alive (renews its lease)
  heartbeat_ack = 7,  // copd -> node
  bye = 8,            // node -> copd: copdrv leaves, the channel is free
  frame_nack = 9,     // copd -> node: the frame (seq) failed its checksum; resend it
  enrol = 10,         // driver -> copd: task tkno enrolled, info[0..1] = its token (low, high word)
  task_end = 11,      // driver -> copd: task tkno ended
  sup_ack = 12,       // copd -> node: the driver's request seq (enrol, task_end) is done
  ack = 13,           // node -> copd: reply frames up to `ack` arrived; info[0] = 1: a gap, resend now
  // driver -> copd, sequenced like enrol, just before the task's ENROL: the task that
  // enrols as tkno next belongs to job `text` (at most kMaxJobId bytes) of user info[2]
  // (its first command acts in the job's partition); info[3] = 1 + the PPN it had
  // (enrolled again after a copd restart), 0 none. Its sup_ack says in info[0] 1 + the
  // job's partition (PPN), or 0 with info[1] a JoinRefusal (the driver then does not enrol it).
  join = 14,
};

inline constexpr size_t kMaxJobId = 64;
enum class JoinRefusal : uint32_t {
  none = 0,
  other_user = 1,    // the job is another user's on this controller
  no_partition = 2,  // every partition belongs to another job
  bad_request = 3,   // the task is not enrolled, or the job id is empty or too long
};

enum class EntryKind : uint8_t { command = 0, answer = 1, broadcast = 2 };

enum class Refusal : uint32_t {
  none = 0,
  unknown_channel = 1,       // channel 0 or above copd's --channels
  already_registered = 2,    // another copdrv holds the channel
  not_registered = 3,        // frame from an address that registered no channel
  bad_secret = 4,            // a driver frame without the channel's driver secret
};

struct Entry {
  uint64_t at_cycle = 0;
  uint32_t seq = 0;
  uint16_t index = 0;
  EntryKind kind = EntryKind::command;
  uint8_t nwords = 0;
  wire::Words words{};
  std::span<const uint32_t> span() const { return {words.data(), nwords}; }
};

struct Frame {
  FrameType type = FrameType::command;
  uint16_t channel = 0;
  uint16_t tkno = 0;
  uint32_t seq = 0;
  uint64_t cycles = 0;
  std::array<uint32_t, 4> info{};
  uint64_t token = 0;    // command: the task's token; driver frames: the driver secret
  uint32_t ack = 0;      // node -> copd: the last in-order reply frame received
  uint32_t session = 0;  // copd's number for the channel's current registration
  std::vector<Entry> entries;
  std::string text;

  // A 64-bit value in info[0..1] (low word first): an enrolled task's token.
  uint64_t info64() const { return uint64_t{info[0]} | (uint64_t{info[1]} << 32); }
  void set_info64(uint64_t v) {
    info[0] = static_cast<uint32_t>(v);
    info[1] = static_cast<uint32_t>(v >> 32);
  }
};

struct LinkError {
  wire::Error code;  // checksum (framing, CRC, version) or word_count (entry sizes)
  std::string detail;
};

std::string_view frame_type_name(FrameType t);
std::string_view refusal_name(Refusal r);

// Appends the frame's bytes to out (cleared first); returns the size.
size_t encode(const Frame& frame, std::vector<uint8_t>& out);
std::variant<Frame, LinkError> decode(std::span<const uint8_t> bytes);

// An entry for a message going `dir`.
Entry make_entry(const wire::Message& msg, wire::Direction dir, EntryKind kind, uint32_t seq = 0,
                 uint16_t index = 0, uint64_t at_cycle = 0);

}  // namespace cop::link
