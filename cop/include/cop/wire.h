// The COP message format: the one place that fixes every bit.
//
// Seed 000 (Sankaran 1995), ch. IV and V: a message between a compute node and
// its coordination processor is one to four 32-bit words: an instruction word,
// an address word, data1 and data2. The thesis's Figure 9 (the field layout) is
// missing from the text, so the exact positions below are ours; every field the
// thesis names is kept.
//
// Instruction word
//   bit  31      U/S    1 = supervisor (operating-system) command, 0 = user
//   bit  30      X      forward to the level-2 controller (multi-level COP)
//   bits 29..23  OPCODE Table I opcode, plus ch. V's PROBE and NACK (below)
//   bit  22      M      mask bit: with RSRAM64, read a mask RAM entry instead of
//                       the Data RAM; with RMW64, add in the floating-point unit
//   bit  21      Z      the address word's CHNO names the channel whose space is
//                       accessed; when clear the controller uses its poll counter
//   bits 20..19  WC     word count - 1 (1..4 words)
//   bits 18..17  SPACE  Data RAM space: 0 TAS (channel/task space), 1 GAS,
//                       2 SAS, 3 reserved
//   bit  16      MSEL   which mask RAM with M: 0 terminal-count, 1 broadcast
//   bits 15..12  PPN    physical partition number (virtual machine)
//   bits 11..10  RSRVD  reserved, must be zero
//   bits  9..0   TKNO   task number of the sending task (its Pid register);
//                       SETTC/SETBM carry COUNT-1 here instead (Figure 14's
//                       count: 1..1024 consecutive mask entries)
//
// Address word
//   bits 31..26  CNTNO  controller number (0 for a single-level COP)
//   bits 25..19  CHNO   channel number 1..64 (0: none / the poll counter)
//   bits 18..0   MSGTAG offset in GAS or SAS; in TAS it splits into
//                bits 18..10 TTKNO (the task whose space is addressed) and
//                bits  9..0  OFFSET (word within that task address space)
//
// data1 holds the low 32 bits of a 64-bit value or mask, data2 the high 32 bits;
// 32-bit operations carry data1 only.
//
// Word counts are fixed per opcode and direction (word_count): a request to
// the controller carries what the operation needs (RSRAM: instruction and
// address), the controller's answer carries the result (RSRAM: plus data).
// A message whose WC field or length disagrees is malformed.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace cop::wire {

inline constexpr int kChannels = 64;          // channels per controller
inline constexpr int kMaxWords = 4;
inline constexpr int kMaxCount = 1024;        // SETTC/SETBM entries per message
inline constexpr uint32_t kMaxTkno = 0x3FF;   // 10 bits
inline constexpr uint32_t kMaxTtkno = 0x1FF;  // 9 bits
inline constexpr uint32_t kMaxTasOffset = 0x3FF;
inline constexpr uint32_t kMaxMsgtag = 0x7FFFF;
inline constexpr uint32_t kMaxPpn = 0xF;
inline constexpr uint32_t kMaxCntno = 0x3F;

// Table I opcodes (7 bits), plus the two ch. V additions marked below.
enum class Opcode : uint8_t {
  BENTRY = 0b0000001,
  LOCK = 0b0000010,
  UNLOCK = 0b0000011,
  XMIT = 0b0000100,
  PROBE = 0b0000101,  // ch. V: probe the channel number (CHNO) of this channel
  ACK = 0b0001000,
  NACK = 0b0001001,  // ch. V: negative acknowledgment with an error code
  BCAST32 = 0b0011100,
  BCAST64 = 0b0111100,
  SETBM = 0b0111110,
  SETTC = 0b0111111,
  SUMI32 = 0b1010000,
  MAXI32 = 0b1010001,
  MINI32 = 0b1010010,
  OR32 = 0b1011000,
  AND32 = 0b1011001,
  EXOR32 = 0b1011010,
  RSRAM32 = 0b1011100,
  WSRAM32 = 0b1011101,
  RMW32 = 0b1011110,
  SUMI64 = 0b1110000,
  MAXI64 = 0b1110001,
  MINI64 = 0b1110010,
  SUMF = 0b1110100,
  MAXF = 0b1110101,
  MINF = 0b1110110,
  OR64 = 0b1111000,
  AND64 = 0b1111001,
  EXOR64 = 0b1111010,
  RSRAM64 = 0b1111100,
  WSRAM64 = 0b1111101,
  RMW64 = 0b1111110,
};

// One field of a message word: bits hi..lo (the layout above). Everything that
// reads or builds words goes through these, so the layout is fixed here alone.
struct Field {
  int hi;
  int lo;
  constexpr uint32_t mask() const { return hi - lo == 31 ? ~0u : ((1u << (hi - lo + 1)) - 1); }
  // The field's value in `word`.
  constexpr uint32_t get(uint32_t word) const { return (word >> lo) & mask(); }
  // `value` placed in the field (bits beyond its width dropped).
  constexpr uint32_t put(uint32_t value) const { return (value & mask()) << lo; }
};

namespace field {
// Instruction word.
inline constexpr Field kSupervisor{31, 31};  // U/S
inline constexpr Field kX{30, 30};
inline constexpr Field kOpcode{29, 23};
inline constexpr Field kM{22, 22};
inline constexpr Field kZ{21, 21};
inline constexpr Field kWordCount{20, 19};  // WC: words - 1
inline constexpr Field kSpace{18, 17};
inline constexpr Field kMsel{16, 16};
inline constexpr Field kPpn{15, 12};
inline constexpr Field kReserved{11, 10};
inline constexpr Field kTkno{9, 0};
// Address word.
inline constexpr Field kCntno{31, 26};
inline constexpr Field kChno{25, 19};
inline constexpr Field kMsgtag{18, 0};
// The TAS view of MSGTAG (a field of the MSGTAG value, not of the address word).
inline constexpr Field kTtkno{18, 10};
inline constexpr Field kTasOffset{9, 0};
}  // namespace field

// Fields read straight from the words of a message that is not (or could not
// be) decoded: the NACK for a malformed command names what it can of it, and
// the link files an entry by its task before decoding it.
constexpr uint32_t instruction_opcode(uint32_t instruction) { return field::kOpcode.get(instruction); }
constexpr uint16_t instruction_tkno(uint32_t instruction) {
  return static_cast<uint16_t>(field::kTkno.get(instruction));
}
constexpr uint8_t instruction_ppn(uint32_t instruction) { return static_cast<uint8_t>(field::kPpn.get(instruction)); }
constexpr uint8_t address_chno(uint32_t address) { return static_cast<uint8_t>(field::kChno.get(address)); }
constexpr uint32_t address_msgtag(uint32_t address) { return field::kMsgtag.get(address); }

enum class Space : uint8_t { TAS = 0, GAS = 1, SAS = 2 };

// Which way a message travels on the channel.
enum class Direction : uint8_t { to_controller, to_node };

// Error codes: the NACK's code and the CSR's ERR_CODE on the compute node.
// Decoding errors (1-5) come from the wire; the rest from the controller or
// the link.
enum class Error : uint8_t {
  none = 0,
  unknown_opcode = 1,
  word_count = 2,
  reserved_bits = 3,
  channel_range = 4,
  address_range = 5,
  protection = 6,       // write to a task address space the sender does not own
  partition = 7,        // message or mask reaches outside the sender's partition
  mask_in_use = 8,      // SETTC/SETBM on an entry whose accessed bit is set
  privilege = 9,        // supervisor-only command from user mode
  no_mask = 10,         // contribution/broadcast with no initialised mask entry
  not_participant = 11, // channel not (or no longer) pending in the TC mask
  not_locked = 12,      // UNLOCK from a channel that does not hold the lock
  bad_mask = 13,        // empty mask, or a mask naming channels that do not exist
  timeout = 14,         // link: no ACK before the transmit timer ran out
  checksum = 15,        // link: checksum or framing error
  retry_limit = 16,     // link: resend limit reached
  link_down = 17,       // link: the peer is gone
  overflow = 18,        // node: the out-of-context buffer was full, a message was lost
  task_ended = 19,      // a task taking part in the global operation ended before it
                        // completed (Controller::end_task); the operation is void
  lock_timeout = 45,    // the channel held its LOCK longer than the deadlock timer allows:
                        // the controller took it back (Config::lock_limit_us); the rest
                        // of the locked sequence, up to its UNLOCK, is refused
  mismatch = 37,        // contributions to one global operation with different opcodes (its
                        // tasks disagree on function or datatype): no result, the operation is
                        // void (libcop's CopErrMismatch, -137)
  voided = 46,          // a channel of the global operation voided it (a SETTC with an
                        // empty mask, sent before it reuses words whose last operation
                        // failed for it): the operation is void, the entries free
  epoch_lost = 60,      // the task's job partition (or the whole controller: copd restarted) was
                        // freed and taken again since the task joined: what it had there is
                        // gone. Every command of the task is refused with it until the task
                        // joins again knowingly (cop_exit, cop_mytid: libcop's CopErrEpochLost)
};

// A NACK's data1 (ch. V: the negative acknowledgment carries an error code):
// bits 7..0 the error code, bits 14..8 the opcode of the command it refuses
// (0 when not even that was readable). Built by copd, read by the node.
namespace field {
inline constexpr Field kNackError{7, 0};
inline constexpr Field kNackOpcode{14, 8};
}  // namespace field
constexpr uint32_t nack_data(Error code, uint32_t opcode_bits) {
  return field::kNackError.put(static_cast<uint32_t>(code)) | field::kNackOpcode.put(opcode_bits);
}
constexpr uint32_t nack_data(Error code, Opcode op) { return nack_data(code, static_cast<uint32_t>(op)); }
constexpr Error nack_error(uint32_t data1) { return static_cast<Error>(field::kNackError.get(data1)); }
constexpr uint32_t nack_opcode(uint32_t data1) { return field::kNackOpcode.get(data1); }

std::string_view opcode_name(Opcode op);
std::optional<Opcode> opcode_from_name(std::string_view name);
std::string_view error_name(Error e);
// Whether a 7-bit value is one of our opcodes.
bool is_opcode(uint32_t value);
// Words a message with this opcode has going this way (1..4), or 0 when the
// opcode never travels that way (WSRAM, SETTC... are never sent to a node).
int word_count(Opcode op, Direction dir);

// Classes of opcodes; the timing model charges t_OP by class.
bool is_reduction(Opcode op);      // SUM/MIN/MAX/OR/AND/EXOR, 32 and 64 bit
bool is_floating(Opcode op);       // SUMF/MAXF/MINF (the FP unit)
bool is_64bit(Opcode op);
// RSRAM/WSRAM/RMW, 32 and 64 bit: one Data RAM word, addressed by SPACE and MSGTAG.
bool is_data_ram_access(Opcode op);
// Commands whose answer carries data back to the asking task (after its ACK):
// PROBE, RSRAM32/64, RMW32/64.
bool has_answer_data(Opcode op);

struct Instruction {
  bool supervisor = false;  // U/S
  bool x = false;
  Opcode opcode = Opcode::ACK;
  bool m = false;
  bool z = false;
  Space space = Space::TAS;
  bool msel_bcast = false;  // MSEL: false = TC mask RAM, true = broadcast mask RAM
  uint8_t ppn = 0;
  uint16_t tkno = 0;  // or COUNT-1 for SETTC/SETBM

  bool operator==(const Instruction&) const = default;
};

struct Address {
  uint8_t cntno = 0;
  uint8_t chno = 0;
  uint32_t msgtag = 0;

  // TAS view of MSGTAG.
  uint32_t ttkno() const { return field::kTtkno.get(msgtag); }
  uint32_t tas_offset() const { return field::kTasOffset.get(msgtag); }
  // Not masked: a task number too large leaves MSGTAG out of range, which
  // validate refuses, instead of wrapping to another task's space.
  static uint32_t tas_tag(uint32_t ttkno, uint32_t offset) { return (ttkno << field::kTtkno.lo) | offset; }

  bool operator==(const Address&) const = default;
};

// Operation identity (issue 34): which call of which program a global operation's
// message belongs to. It is not in the thesis's 32-bit words (encode/decode leave it
// alone): it travels as link data (cop/link.h, the entry's identity) and in the
// driver's requests. libcop computes it alike at every participant without a round
// trip: the high 32 bits are the generation (a per-(group, tag) counter every member
// advances on every call it makes), the low 32 bits a check: 16 bits of the call's
// site (a hash of the job, partition, group, GAS word and kind of call: which
// sequence of calls it is one of) and 16 bits of its shape (a hash of the datatype,
// count and reduction function: what the members must agree on). 0: none (the timing
// model, sim-cop, the thesis's own tests; two messages of identity 0 agree).
constexpr uint32_t identity_generation(uint64_t id) { return static_cast<uint32_t>(id >> 32); }
constexpr uint32_t identity_check(uint64_t id) { return static_cast<uint32_t>(id); }
constexpr uint16_t identity_site(uint64_t id) { return static_cast<uint16_t>(id >> 16); }
// Whether `a` is an earlier round of the same site as `b` (generations in serial order).
constexpr bool identity_older(uint64_t a, uint64_t b) {
  return a != 0 && b != 0 && identity_site(a) == identity_site(b) &&
         static_cast<int32_t>(identity_generation(b) - identity_generation(a)) > 0;
}
// Whether `a` and `b` name one operation: the same round of the same site (its shape may
// differ: its participants then report the mismatch), or either names none (0).
constexpr bool identity_same_round(uint64_t a, uint64_t b) {
  return a == 0 || b == 0 ||
         (identity_site(a) == identity_site(b) && identity_generation(a) == identity_generation(b));
}
constexpr uint64_t make_identity(uint32_t generation, uint32_t check) {
  return (static_cast<uint64_t>(generation) << 32) | check;
}

// A decoded message. Only the words its opcode has are meaningful.
struct Message {
  Instruction ins;
  Address addr;
  uint32_t data1 = 0;
  uint32_t data2 = 0;
  uint64_t op_id = 0;  // the operation identity (above): link data, not a word

  uint64_t data64() const { return (static_cast<uint64_t>(data2) << 32) | data1; }
  void set_data64(uint64_t v) {
    data1 = static_cast<uint32_t>(v);
    data2 = static_cast<uint32_t>(v >> 32);
  }
  // SETTC/SETBM entry count (1..1024).
  int count() const { return ins.tkno + 1; }
  void set_count(int n) { ins.tkno = static_cast<uint16_t>(n - 1); }

  bool operator==(const Message&) const = default;
};

// Limits a decoder checks addresses against (a controller passes its own).
struct Limits {
  int channels = kChannels;
  uint32_t tasks_per_channel = kMaxTtkno + 1;
  uint32_t tas_words = kMaxTasOffset + 1;
  uint32_t gas_words = kMaxMsgtag + 1;
  uint32_t sas_words = kMaxMsgtag + 1;
};

struct DecodeError {
  Error code;
  std::string detail;
};

using Words = std::array<uint32_t, kMaxWords>;

// Encodes a message into its words; returns how many are used (0 when the
// opcode never travels in that direction).
int encode(const Message& msg, Direction dir, Words& out);
// Decodes words into a message, rejecting malformed input with a specific error.
std::variant<Message, DecodeError> decode(std::span<const uint32_t> words, Direction dir,
                                          const Limits& limits = Limits{});
// Checks an already-built message against the address rules decode applies.
std::optional<DecodeError> validate(const Message& msg, Direction dir,
                                    const Limits& limits = Limits{});

// One-line human-readable form, for logs and test failures.
std::string to_string(const Message& msg);

// The integer ALU's and FP unit's function for a reduction opcode, on the
// 64-bit Data RAM words both sides keep (32-bit operations use the low half).
uint64_t combine(Opcode op, uint64_t a, uint64_t b);
// combine's function for one reduction opcode known when compiled (combine is made of
// these): a loop over a burst's elements specialised per function (copd, issue 36).
template <Opcode OP>
constexpr uint64_t combine_as(uint64_t a, uint64_t b) {
  const auto a32 = static_cast<uint32_t>(a), b32 = static_cast<uint32_t>(b);
  const auto sa32 = static_cast<int32_t>(a32), sb32 = static_cast<int32_t>(b32);
  const auto sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  if constexpr (OP == Opcode::SUMI32) return uint32_t(a32 + b32);
  else if constexpr (OP == Opcode::MAXI32) return uint32_t(std::max(sa32, sb32));
  else if constexpr (OP == Opcode::MINI32) return uint32_t(std::min(sa32, sb32));
  else if constexpr (OP == Opcode::OR32) return a32 | b32;
  else if constexpr (OP == Opcode::AND32) return a32 & b32;
  else if constexpr (OP == Opcode::EXOR32) return a32 ^ b32;
  else if constexpr (OP == Opcode::SUMI64) return a + b;
  else if constexpr (OP == Opcode::MAXI64) return uint64_t(std::max(sa, sb));
  else if constexpr (OP == Opcode::MINI64) return uint64_t(std::min(sa, sb));
  else if constexpr (OP == Opcode::OR64) return a | b;
  else if constexpr (OP == Opcode::AND64) return a & b;
  else if constexpr (OP == Opcode::EXOR64) return a ^ b;
  else if constexpr (OP == Opcode::SUMF) return std::bit_cast<uint64_t>(std::bit_cast<double>(a) + std::bit_cast<double>(b));
  else if constexpr (OP == Opcode::MAXF)
    return std::bit_cast<uint64_t>(std::max(std::bit_cast<double>(a), std::bit_cast<double>(b)));
  else if constexpr (OP == Opcode::MINF)
    return std::bit_cast<uint64_t>(std::min(std::bit_cast<double>(a), std::bit_cast<double>(b)));
  else static_assert(OP == Opcode::SUMF, "not a reduction opcode");
}
// The value a message carries, as stored in a 64-bit Data RAM word, and back.
uint64_t payload(const Message& m);
void set_payload(Message& m, uint64_t v);

// Builders for the common shapes.
Message make(Opcode op, uint16_t tkno = 0, Space space = Space::GAS, uint32_t msgtag = 0);

}  // namespace cop::wire
