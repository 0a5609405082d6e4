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
//           cycles (copd's modelled clock when sent), info[4], payload length,
//           CRC-32 of header (with checksum 0) and payload
//   entries each: at_cycle (u64), seq (u32), index (u16), kind (u8),
//           word count (u8), then the COP message's 1..4 words
//   text    the rest of the payload (REFUSED: the reason)
//
// A COMMAND frame carries up to kMaxEntries commands of one task (its TKNO in
// the header) under one sequence number; copd answers each command with an
// ANSWER entry tagged (seq, index): the ACK or NACK, then the command's data
// (RSRAM, RMW, PROBE) if any. Results of global operations (barrier exits,
// reduction results, BCAST data) come as BROADCAST entries. A COMMAND frame
// received again with the same seq is a resend (XMIT): copd answers again from
// what it sent, without executing anything twice.
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
inline constexpr int kMaxEntries = 255;
inline constexpr size_t kMaxFrameBytes = 65000;
inline constexpr uint16_t kDefaultPort = 7040;

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
