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
//   header  (kHeaderBytes = 80)
//           0 magic 'COPL' (u32), 4 version (u8), 5 type (u8), 6 channel (u16),
//           8 tkno (u16), 10 entry count (u16: entries on the wire, a compact
//           run one; at most kMaxEntries, kMaxElements elements in all), 12 seq (u32),
//           16 cycles (u64; copd -> node: copd's modelled clock when sent; a
//           COMMAND frame: the modelled time of the last global result the
//           node took, when it starts writing the frame: its commands are ready
//           t_CN-COP later, seed 000 ch. VI), 24 info[4] (u32 each),
//           40 nonce (u64: REGISTER/CHALLENGE/PROVE/REGISTERED the driver's
//           nonce Nc, ENROL the task's enrolment nonce; else 0),
//           48 ack (u32; REGISTERED: copd's epoch, below), 52 session (u32),
//           56 payload length (u32),
//           60 CRC-32 (u32) of the whole frame with this field as zero,
//           64 MAC (16 bytes, kMacBytes): keyed BLAKE2b (libsodium
//           crypto_generichash) of bytes 0..59 and the payload, under the key
//           of the sender's role (below); zero in frames nobody can key
//           (REGISTER, CHALLENGE)
//   entries each: at_cycle (u64), seq (u32), index (u16), kind (u8),
//           word count (u8), then the COP message's 1..4 words; or, with bit 7
//           of kind set, a compact run of elements (version 4): count (u16,
//           2..), flags (u8: 1 the index, 2 the address word, one more per
//           element; else the same), 0 (u8), cycle step (u32: element k's
//           at_cycle is at_cycle + k x step), the elements' common words 0
//           (instruction) and 1 (the first's address; only with 2+ words),
//           then each element's words 2.. (its data). A burst's element
//           commands (the same instruction word on consecutive GAS words, seed
//           000 ch. VI), their ACKs and the results or broadcast words they
//           give travel so: one header, then the data words. It is the link's
//           encoding only: encode() makes a run of every such sequence of
//           entries, decode() gives the entries back one element each (the
//           core executes and answers element by element, Frame::entries is
//           the same either way; decode_runs() gives a run as one record, for
//           a receiver that takes it whole). A run that is not one encode() makes (count
//           below 2, unknown flags, an address step without an address word,
//           the index, MSGTAG or cycles overflowing, more words than the
//           frame has, more than kMaxElements elements in the frame) is refused
//           as a malformed frame.
//           Operation identity (version 5): with bit 6 of kind set, the 8
//           bytes after the entry header are the message's operation identity
//           (wire::Message::op_id, u64; never 0), before its words or, for a
//           run, before the run's count (one identity for the whole run: every
//           element of a run has the same). A global operation's contributions
//           and the results, broadcast words and NACKs they give carry it (8
//           bytes per entry or run); an entry without one (ACKs, answers, TAS
//           accesses, the model's messages) has identity 0 and costs nothing.
//   text    the rest of the payload (REFUSED: the reason)
// The CRC tells a frame damaged on the way (FRAME_NACK: resend it) from one
// that arrived intact; the MAC tells who sent an intact one. Session and seq
// are in the MACed bytes: a frame of another session, a replayed older seq or
// an altered frame is refused (and counted by copd, server.h).
//
// Keys (cop/link/auth.h derives them; libsodium BLAKE2b, 32-byte keys): the
// cluster key K (a key file shared by copd, every copdrv and a level-1 copd's
// parent, as Slurm's munge key) never travels. A channel is claimed by
// challenge and answer: REGISTER (nonce Nc) -> CHALLENGE (Ns in info[0..3])
// -> PROVE (Nc, Ns; MACed with K_reg = H_K("register", channel, Nc, Ns)) ->
// REGISTERED (the new session S; nonce = Nc). Then
//   driver frames (HEARTBEAT, BYE, JOIN, ENROL, TASK_END, the driver's ACKs and
//     commands, a level-1 copd's frames up): H_K("driver", channel, S, Nc, Ns);
//   copd -> node (REPLY, SUP_ACK, HEARTBEAT_ACK, FRAME_NACK, REGISTERED):
//     H(H_K("down", channel), "session", S), which the channel's tasks can
//     derive too (they read the channel; copdrv gives them H_K("down", channel));
//   a task's COMMAND and ACK frames: H(T, "session", S), T = H_K("task",
//     channel, TKNO, E) for the enrolment nonce E that copdrv puts in ENROL
//     (copd derives T itself) and gives T to the task over its Unix socket.
// No secret is on the wire; a task cannot derive another task's key or the
// driver's; every key changes with the session. (A task holds its channel's
// down key, as it maps the channel window: the tasks of one node trust each
// other as far as reading the channel goes, never as far as acting as each
// other or as the driver.) CHALLENGE carries no MAC: a forged one can only make
// a driver prove again (a wrong challenge's proof is refused, nothing changes).
//
// REFUSED (issue 34): MACed under the channel's refusal key H(H_K("down",
// channel), "refused") (copd refuses frames of sessions it does not know, so
// no session key can MAC it), echoing the refused frame's nonce, seq and
// session (header fields) and its type (info[1]). A node takes one only for
// the session it is in (a replay of an earlier session's is ignored and
// counted, Window::refused_ignored), and then only as a hint: copdrv proves its
// registration again (copd keeps the session of a holder it still knows; a new
// session fails what waited on the old one). A forged or replayed REFUSED so
// fails nothing. At registration (copdrv's start) a REFUSED must echo the
// driver's nonce Nc.
//
// Freshness of what renews a lease: copd renews a channel's lease only on a
// HEARTBEAT whose seq is after the driver's last one (copdrv and a level-1
// copd number them 1, 2, ...; the counter lives as long as the driver, and a
// new registration starts copd's count again), a command frame after the
// sender's last one, or a driver request after the last one done. A replayed
// heartbeat, ACK or old frame is MACed as it was but renews nothing (stale
// heartbeats are counted, LinkStats::stale_heartbeats).
//
// Epochs (cop.h "Epochs"): REGISTERED's ack field is copd's epoch (random,
// nonzero, new at every start). A JOIN's info[1] is 0 for a first join, else
// (with info[3] = 1 + the PPN it had) the epoch of that partition; its sup_ack
// gives info[0] 1 + PPN (0: refused), info[1] the JoinRefusal, info[2] the
// partition's epoch. A re-join into a partition (or copd) of another epoch is
// refused epoch_lost, the task's ENROL still enrols it, and copd answers its
// every command NACK epoch_lost (wire.h).
//
// Driver requests' answers: a SUP_ACK of a request (ENROL, JOIN, TASK_END) says
// info[3] = kRequestAck and, in `ack`, the last request copd has done (a SUP_ACK
// without it, at a level 2, confirms a level-1's COMMAND frame). REGISTERED's `seq`
// is the last request copd has done in the session it gives (0: a new one), so a
// sender whose count started again (a level-1 copd restarted on its address, kept in
// its session) numbers its next request after it and is never answered with the
// answer of an earlier request of the same number.
#pragma once
#include <cop/wire.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace cop::link {

inline constexpr uint32_t kMagic = 0x4C504F43;  // "COPL"
inline constexpr uint8_t kVersion = 5;  // 5: the entries' operation identity
inline constexpr size_t kHeaderBytes = 80;
inline constexpr size_t kMacBytes = 16;
inline constexpr size_t kKeyBytes = 32;
using Key = std::array<uint8_t, kKeyBytes>;
using Mac = std::array<uint8_t, kMacBytes>;
// copd's registration challenge Ns (128 bits): info[0..3] of CHALLENGE and PROVE.
using Challenge = std::array<uint32_t, 4>;
inline constexpr size_t kEntryHeaderBytes = 16;
inline constexpr size_t kRunHeaderBytes = 8;  // a compact run's count, flags and cycle step
inline constexpr size_t kMaxFrameBytes = 65000;
// Entries (elements) a frame may carry: as many 4-word entries as fit in one
// datagram (80 + 1600 x 40 bytes) even where none packs into a compact run, so
// a burst of element commands (up to t_MAX-OP's 128 inside one LOCK/UNLOCK,
// seed 000 ch. VI), and the many bursts of one array call, travel in one frame
// and are answered in as few; in compact runs such a frame is about a quarter
// of that (8 bytes a 64-bit element).
// (1600 since version 5: every entry may carry its 8-byte identity.)
inline constexpr size_t kIdentityBytes = 8;
inline constexpr int kMaxEntries = 1600;
static_assert(kHeaderBytes + size_t(kMaxEntries) * (kEntryHeaderBytes + kIdentityBytes + 4 * wire::kMaxWords) <=
              kMaxFrameBytes);
// Elements a frame may carry in all, compact runs counted element by element: a
// COMMAND frame of an array call's whole bursts (libcop packs them by their
// encoded size, encoded_bytes) up to what fits in kMaxFrameBytes, so a 16 KB
// array is one frame and one round trip; copd's reply frames keep to
// kMaxEntries entries. A sender never sends more than kMaxFrameBytes.
inline constexpr int kMaxElements = 8000;
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
  register_ = 3,      // node -> copd: copdrv claims its channel (nonce = Nc); copd answers CHALLENGE
  registered = 4,     // copd -> node: info = {channels, tasks per channel, tas words, gas words}
  refused = 5,        // copd -> node: info[0] = reason (Refusal), info[1] = the refused frame's type, its
                      // nonce, seq and session echoed, text = why; MACed with the refusal key (above)
  heartbeat = 6,      // node -> copd: the channel is alive (renews its lease when seq is after the last)
  heartbeat_ack = 7,  // copd -> node
  bye = 8,            // node -> copd: copdrv leaves, the channel is free
  frame_nack = 9,     // copd -> node: the frame (seq) failed its checksum; resend it
  enrol = 10,         // driver -> copd: task tkno enrolled under enrolment nonce `nonce`
  task_end = 11,      // driver -> copd: task tkno ended
  sup_ack = 12,       // copd -> node: the driver's request seq (enrol, task_end) is done
  ack = 13,           // node -> copd: reply frames up to `ack` arrived; info[0] = 1: a gap, resend now
  challenge = 14,     // copd -> node: nonce = Nc, info[0..3] = Ns (128 bits): prove the cluster key
  prove = 15,         // node -> copd: nonce = Nc, info[0..3] = Ns, MACed with K_reg
  // driver -> copd, sequenced like enrol, just before the task's ENROL: the task that
  // enrols as tkno next belongs to job `text` (at most kMaxJobId bytes) of user info[2]
  // (its first command acts in the job's partition); info[3] = 1 + the PPN it had
  // (joined again after its lease ran out or copd restarted), 0 none, and info[1] that
  // partition's epoch. Its sup_ack says in info[0] 1 + the job's partition (PPN), or 0
  // with info[1] a JoinRefusal (a first join: the driver then does not enrol it), and
  // in info[2] the partition's epoch.
  join = 16,
};

inline constexpr size_t kMaxJobId = 64;
inline constexpr uint32_t kRequestAck = 1;  // a SUP_ACK's info[3]: the answer of a driver request
enum class JoinRefusal : uint32_t {
  none = 0,
  other_user = 1,    // the job is another user's on this controller
  no_partition = 2,  // every partition belongs to another job
  bad_request = 3,   // the task is not enrolled, or the job id is empty or too long
  epoch_lost = 4,    // a re-join naming a partition (PPN, epoch) that is gone: copd enrols the
                     // task all the same and answers its every command NACK epoch_lost
  no_parent = 5,     // two levels: the level-1 copd could not reach its level 2 for the job's partition
};

enum class EntryKind : uint8_t { command = 0, answer = 1, broadcast = 2 };

enum class Refusal : uint32_t {
  none = 0,
  unknown_channel = 1,       // channel 0 or above copd's --channels
  already_registered = 2,    // another copdrv holds the channel
  not_registered = 3,        // frame from an address that registered no channel
  bad_secret = 4,            // a registration without a valid proof of the cluster key
};

struct Entry {
  uint64_t at_cycle = 0;
  uint32_t seq = 0;
  uint16_t index = 0;
  EntryKind kind = EntryKind::command;
  uint8_t nwords = 0;
  wire::Words words{};
  uint64_t op_id = 0;  // the message's operation identity (wire::Message::op_id), 0: none
  std::span<const uint32_t> span() const { return {words.data(), nwords}; }
};

// The entry's message decoded (wire::decode of its words) with its operation identity.
std::variant<wire::Message, wire::DecodeError> decode_entry(const Entry& e, wire::Direction dir,
                                                            const wire::Limits& limits = wire::Limits{});

struct Frame {
  FrameType type = FrameType::command;
  uint16_t channel = 0;
  uint16_t tkno = 0;
  uint32_t seq = 0;
  uint64_t cycles = 0;
  std::array<uint32_t, 4> info{};
  uint64_t nonce = 0;    // registration: Nc; ENROL: the task's enrolment nonce (header)
  uint32_t ack = 0;      // node -> copd: the last in-order reply frame received
  uint32_t session = 0;  // copd's number for the channel's current registration
  Mac mac{};             // as decoded; encode without a key writes it back as is
  std::vector<Entry> entries;
  std::string text;
};

struct LinkError {
  wire::Error code;  // checksum (framing, CRC, version) or word_count (entry sizes)
  std::string detail;
};

std::string_view frame_type_name(FrameType t);
std::string_view refusal_name(Refusal r);

// Appends the frame's bytes to out (cleared first); returns the size. With a
// key the MAC is computed under it; without, frame.mac is written as is.
size_t encode(const Frame& frame, std::vector<uint8_t>& out, const Key* key = nullptr);
// Elements to send as they were made (copd's answers and the results and broadcast
// words of a burst, seed 000 ch. VI, issue 36), not one Entry each: element k is
// `first` with at_cycle + k x step, index + k (index_step), address word + k
// (address_step; nwords >= 2) and, with `data`, words 2 and 3 the low and high halves of
// (*data)[data_at + k] (one copy of a burst's words for every channel it goes to).
// count 1: one entry.
struct ElementRun {
  Entry first;  // element 0 (with data, its words 2.. are (*data)[data_at]'s)
  uint32_t count = 1;
  uint64_t step = 0;
  bool index_step = false;
  bool address_step = false;
  std::shared_ptr<const std::vector<uint64_t>> data;
  size_t data_at = 0;
  ElementRun() = default;
  explicit ElementRun(const Entry& e) : first(e) {}
  Entry element(size_t k) const;
  // Elements [from, from + n) as a run of their own.
  ElementRun slice(size_t from, size_t n) const;
};
// The frame with every element of `elements`, in order, as its entries (frame.entries
// is not read): the bytes encode() gives for the frame with those elements as Entry
// values (the same compact runs found across and within the ElementRuns), without an
// Entry per element where an ElementRun's elements continue the run being written.
size_t encode(const Frame& frame, std::span<const ElementRun> elements, std::vector<uint8_t>& out,
              const Key* key = nullptr);
// The bytes `commands` add to a COMMAND frame after its header (their entries, in
// compact runs where they make them): what packing whole bursts into frames counts.
size_t encoded_bytes(std::span<const wire::Message> commands);
// A COMMAND frame of `commands` (frame.entries is not read): the bytes encode() gives for
// the frame with the entries append_entries(commands, to_controller, command, frame.seq, 0)
// makes, in one walk over the messages without an Entry per command (a task's frame of
// an array call's bursts, issue 36).
size_t encode_commands(const Frame& frame, std::span<const wire::Message> commands, std::vector<uint8_t>& out,
                       const Key* key = nullptr);
// An encoded frame's ack and session fields set anew and its MAC (with a key) and CRC
// computed again: what encode() gives for the frame with those fields (a resend that
// acknowledges more of the reply stream, without encoding its entries again).
void reseal(std::vector<uint8_t>& bytes, uint32_t ack, uint32_t session, const Key* key = nullptr);
// Checks framing, version, lengths (at most kMaxEntries entries, kMaxElements elements) and the CRC;
// not the MAC (verify, once the receiver knows which key the sender must have).
std::variant<Frame, LinkError> decode(std::span<const uint8_t> bytes);
// The same into `into` (every field written; its entries' storage kept from the frame
// before): a receiver that decodes frame after frame into one Frame allocates no
// element storage per frame (a 16 KB burst is 2048 entries: fresh storage for each
// frame was page faults on every frame). nullopt: decoded; else why not (`into` then
// holds part of the frame).
std::optional<LinkError> decode(std::span<const uint8_t> bytes, Frame& into);
// A frame's entries as the wire carries them (the compact runs above): each a
// single entry or a run of elements kept as one record, its elements' data
// words left where they lie in the decoded bytes. What a receiver that takes a
// burst whole uses (the node's channel, cop/driver: a 16 KB broadcast is one
// run, not 2048 entries); decode() gives the same elements one Entry each.
inline constexpr uint8_t kRunIndexStep = 1, kRunAddressStep = 2;  // a run's flags: index, address word +1 each
struct EntryRun {
  Entry first;          // element 0, as decode() gives it
  uint16_t count = 1;   // elements (1: a single entry)
  uint8_t flags = 0;    // kRunIndexStep, kRunAddressStep
  uint32_t step = 0;    // element k's at_cycle is first.at_cycle + k x step
  const uint8_t* data = nullptr;  // words 2.. of elements 0, 1, ...: count x data_words() little-endian
                                  // 32-bit words in the decoded bytes (valid as long as they are)
  size_t data_words() const { return first.nwords > 2 ? size_t(first.nwords) - 2 : 0; }
  // Element k's word w (w < first.nwords) and the whole element k, as decode() gives them.
  uint32_t word(size_t k, size_t w) const;
  Entry element(size_t k) const;
};
struct FrameRuns {
  Frame frame;  // every field of the frame but its entries (left empty)
  std::vector<EntryRun> runs;
  size_t elements = 0;  // of all runs
};
// decode() with the entries as runs: the same checks in the same order, so the same
// verdict and reason for every input (a malformed run is refused as decode refuses
// it), and the runs' elements are decode()'s entries. `into`'s storage is kept.
std::optional<LinkError> decode_runs(std::span<const uint8_t> bytes, FrameRuns& into);
// Element k of run `r` as a message to a node, from `first`, the message of element 0
// (decode_entry(r.first, to_node) succeeded): element k decodes to a node under the
// default limits exactly when element 0 does (those checks read the instruction word,
// the word count and the address word's CHNO, common to a run; a run's MSGTAG never
// overflows, data words are not checked), into `first` with MSGTAG + k where the run
// steps its address, its own data words and identity. So a run is decoded once.
wire::Message element_message(const EntryRun& r, const wire::Message& first, size_t k);
// The entries on the wire of an encoded frame (a compact run one; the header's entry
// count): what a receiver's decoder holds to kMaxEntries.
size_t wire_entries(std::span<const uint8_t> bytes);
// Whether the encoded frame's MAC is the one `key` gives (constant time).
bool verify(std::span<const uint8_t> bytes, const Key& key);
// The CRC-32 of the frame header's checksum field (zlib's crc32: the reflected IEEE
// polynomial 0xEDB88320, "123456789" -> 0xCBF43926) of `bytes`, continued from `prior`
// (the CRC of the bytes before them; 0 to start) as zlib's crc32(prior, ...) is. Computed
// by Intel ISA-L (crc32_gzip_refl, PCLMUL folding): zlib's byte tables were a tenth of
// copd's time on 16 KB bursts (issue 36).
uint32_t crc32(std::span<const uint8_t> bytes, uint32_t prior = 0);

// An entry for a message going `dir`.
Entry make_entry(const wire::Message& msg, wire::Direction dir, EntryKind kind, uint32_t seq = 0,
                 uint16_t index = 0, uint64_t at_cycle = 0);
// The entries of `msgs` appended to `out`, msgs[i] as make_entry(msgs[i], dir, kind, seq,
// first_index + i) makes it: a burst's element commands (one instruction on consecutive
// words) encoded once per instruction, then only their address and data words.
void append_entries(std::span<const wire::Message> msgs, wire::Direction dir, EntryKind kind, uint32_t seq,
                    uint16_t first_index, std::vector<Entry>& out);

}  // namespace cop::link
