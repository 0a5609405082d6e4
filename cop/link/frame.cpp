#include <cop/link.h>
#include <isa-l/crc.h>
#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>

#include <fmt/format.h>

namespace cop::link {

namespace {

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));  // little-endian hosts only (x86-64, arm64)
}

template <typename T>
T get(std::span<const uint8_t> in, size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof(T));
  return v;
}

constexpr size_t kAckAt = 48;
constexpr size_t kSessionAt = 52;
constexpr size_t kLengthAt = 56;
constexpr size_t kChecksumAt = 60;
constexpr size_t kMacAt = 64;
static_assert(kMacAt + kMacBytes == kHeaderBytes);

uint32_t crc(std::span<const uint8_t> bytes) {
  // The checksum field itself counts as zero.
  static const uint8_t zero[4] = {0, 0, 0, 0};
  uint32_t c = crc32(bytes.first(kChecksumAt));
  c = crc32(zero, c);
  return crc32(bytes.subspan(kMacAt), c);
}

// The MAC of an encoded frame: header bytes before the CRC, then the payload.
Mac mac_of(std::span<const uint8_t> bytes, const Key& key) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, key.data(), key.size(), kMacBytes);
  crypto_generichash_update(&st, bytes.data(), kChecksumAt);
  crypto_generichash_update(&st, bytes.data() + kHeaderBytes, bytes.size() - kHeaderBytes);
  Mac m;
  crypto_generichash_final(&st, m.data(), m.size());
  return m;
}

bool known_type(uint8_t t) { return t >= 1 && t <= 16; }

constexpr size_t kCountAt = 10;
constexpr uint8_t kCompactBit = 0x80;
constexpr uint8_t kIdentityBit = 0x40;  // the entry's operation identity follows its header (link.h)

// The compact runs (link.h) encode makes: from element a, the most elements after it
// that repeat its kind, seq, word count and instruction word, with the index and the
// address word each the same or one more per element (as the second element says),
// the cycle stamps in even steps; count 1 when none does.
struct Run {
  size_t count = 1;
  uint8_t flags = 0;
  uint32_t step = 0;
};
// Whether b, after a, starts a run with it: its flags and step into r.
bool run_pair(const Entry& a, const Entry& b, Run& r) {
  if (b.kind != a.kind || b.seq != a.seq || b.nwords != a.nwords || b.words[0] != a.words[0] || b.op_id != a.op_id ||
      b.at_cycle < a.at_cycle || b.at_cycle - a.at_cycle > UINT32_MAX)
    return false;
  if (b.index == a.index + 1u) r.flags |= kRunIndexStep;
  else if (b.index != a.index) return false;
  if (a.nwords >= 2) {
    if (b.words[1] == a.words[1] + 1 && wire::address_msgtag(a.words[1]) < wire::field::kMsgtag.mask())
      r.flags |= kRunAddressStep;
    else if (b.words[1] != a.words[1])
      return false;
  }
  r.step = uint32_t(b.at_cycle - a.at_cycle);
  return true;
}
// Whether x continues run r from a as its element n (n >= 1).
bool run_continues(const Entry& a, const Entry& x, const Run& r, size_t n) {
  if (x.kind != a.kind || x.seq != a.seq || x.nwords != a.nwords || x.words[0] != a.words[0] || x.op_id != a.op_id ||
      x.at_cycle != a.at_cycle + uint64_t(n) * r.step)
    return false;
  if (x.index != ((r.flags & kRunIndexStep) ? uint16_t(a.index + n) : a.index) ||
      ((r.flags & kRunIndexStep) && a.index + n > 0xFFFF))
    return false;
  const uint32_t tag = a.nwords >= 2 ? wire::address_msgtag(a.words[1]) : 0;
  if (a.nwords >= 2 && (r.flags & kRunAddressStep ? (x.words[1] != a.words[1] + n || tag + n > wire::field::kMsgtag.mask())
                                                  : x.words[1] != a.words[1]))
    return false;
  return true;
}
// The run that starts at es[i].
Run run_from(const std::vector<Entry>& es, size_t i) {
  Run r;
  if (i + 1 >= es.size() || !run_pair(es[i], es[i + 1], r)) return Run{};
  const size_t most = std::min(es.size() - i, size_t(UINT16_MAX));
  size_t n = 1;
  while (n < most && run_continues(es[i], es[i + n], r, n)) ++n;
  r.count = n;
  return r;
}

// The bytes entry `e` takes on the wire as the first of run `r` (count 1: a single entry).
size_t wire_entry_bytes(const Entry& e, const Run& r) {
  const size_t head = kEntryHeaderBytes + (e.op_id ? kIdentityBytes : 0);
  if (r.count < 2) return head + 4u * e.nwords;
  const size_t each = e.nwords > 2 ? size_t(e.nwords) - 2 : 0;
  return head + kRunHeaderBytes + 4 * std::min<size_t>(e.nwords, 2) + 4 * each * r.count;
}

}  // namespace

uint32_t crc32(std::span<const uint8_t> bytes, uint32_t prior) {
  return crc32_gzip_refl(prior, bytes.data(), bytes.size());
}

std::string_view frame_type_name(FrameType t) {
  switch (t) {
    case FrameType::command: return "command";
    case FrameType::reply: return "reply";
    case FrameType::register_: return "register";
    case FrameType::registered: return "registered";
    case FrameType::refused: return "refused";
    case FrameType::heartbeat: return "heartbeat";
    case FrameType::heartbeat_ack: return "heartbeat_ack";
    case FrameType::bye: return "bye";
    case FrameType::frame_nack: return "frame_nack";
    case FrameType::enrol: return "enrol";
    case FrameType::task_end: return "task_end";
    case FrameType::sup_ack: return "sup_ack";
    case FrameType::ack: return "ack";
    case FrameType::challenge: return "challenge";
    case FrameType::prove: return "prove";
    case FrameType::join: return "join";
  }
  return "?";
}

std::string_view refusal_name(Refusal r) {
  switch (r) {
    case Refusal::none: return "none";
    case Refusal::unknown_channel: return "unknown channel";
    case Refusal::already_registered: return "channel already registered";
    case Refusal::not_registered: return "not registered";
    case Refusal::bad_secret: return "no valid proof of the cluster key";
  }
  return "?";
}

namespace {

// The frame's header into `out` (cleared first): its entry count, payload length,
// checksum and (with a key) MAC are filled by finish_frame.
void put_header(const Frame& frame, std::vector<uint8_t>& out, size_t reserve) {
  out.clear();
  out.reserve(kHeaderBytes + reserve + frame.text.size());
  put<uint32_t>(out, kMagic);
  put<uint8_t>(out, kVersion);
  put<uint8_t>(out, static_cast<uint8_t>(frame.type));
  put<uint16_t>(out, frame.channel);
  put<uint16_t>(out, frame.tkno);
  put<uint16_t>(out, 0);  // entries on the wire, filled below
  put<uint32_t>(out, frame.seq);
  put<uint64_t>(out, frame.cycles);
  for (uint32_t v : frame.info) put<uint32_t>(out, v);
  put<uint64_t>(out, frame.nonce);
  put<uint32_t>(out, frame.ack);
  put<uint32_t>(out, frame.session);
  put<uint32_t>(out, 0);  // payload length, filled below
  put<uint32_t>(out, 0);  // checksum, filled below
  out.insert(out.end(), frame.mac.begin(), frame.mac.end());  // MAC, computed below with a key
}

// The frame's MAC (with a key) and CRC, over what `out` holds now.
void seal(std::vector<uint8_t>& out, const Key* key) {
  if (key) {
    const Mac m = mac_of(out, *key);
    std::memcpy(out.data() + kMacAt, m.data(), m.size());
  }
  const uint32_t sum = crc(out);
  std::memcpy(out.data() + kChecksumAt, &sum, 4);
}

// The frame's end: `written` entries on the wire, its text, length, MAC and CRC.
size_t finish_frame(const Frame& frame, std::vector<uint8_t>& out, uint16_t written, const Key* key) {
  std::memcpy(out.data() + kCountAt, &written, 2);
  out.insert(out.end(), frame.text.begin(), frame.text.end());
  const uint32_t payload = static_cast<uint32_t>(out.size() - kHeaderBytes);
  std::memcpy(out.data() + kLengthAt, &payload, 4);
  seal(out, key);
  return out.size();
}

// Wire entry `e` as the first of run `r`: its header, identity and words (count 1: a
// single entry, whole), or its run header and fixed words (the elements' data words follow).
void put_entry(std::vector<uint8_t>& out, const Entry& e, const Run& r) {
  put<uint64_t>(out, e.at_cycle);
  put<uint32_t>(out, e.seq);
  put<uint16_t>(out, e.index);
  put<uint8_t>(out, static_cast<uint8_t>(static_cast<uint8_t>(e.kind) | (r.count > 1 ? kCompactBit : 0) |
                                         (e.op_id ? kIdentityBit : 0)));
  put<uint8_t>(out, e.nwords);
  if (e.op_id) put<uint64_t>(out, e.op_id);
  if (r.count < 2) {
    for (int w = 0; w < e.nwords; ++w) put<uint32_t>(out, e.words[size_t(w)]);
    return;
  }
  put<uint16_t>(out, static_cast<uint16_t>(r.count));
  put<uint8_t>(out, r.flags);
  put<uint8_t>(out, 0);
  put<uint32_t>(out, r.step);
  for (int w = 0; w < std::min<int>(e.nwords, 2); ++w) put<uint32_t>(out, e.words[size_t(w)]);
}

}  // namespace

size_t encode(const Frame& frame, std::vector<uint8_t>& out, const Key* key) {
  put_header(frame, out, frame.entries.size() * (kEntryHeaderBytes + 16));
  uint16_t written = 0;  // entries on the wire (a compact run counts once)
  const std::vector<Entry>& es = frame.entries;
  for (size_t i = 0; i < es.size(); ++written) {
    const Entry& e = es[i];
    const Run r = run_from(es, i);
    put_entry(out, e, r);
    if (r.count < 2) {
      ++i;
      continue;
    }
    // The elements' data words: one resize for the run, then copied in place (a
    // resize per word was most of encode's time on a 16 KB burst).
    if (const size_t each = e.nwords > 2 ? size_t(e.nwords) - 2 : 0; each > 0) {
      const size_t at = out.size();
      out.resize(at + 4 * each * r.count);
      uint8_t* to = out.data() + at;
      // Copies of a size known here (a copy of 4 * each bytes, each a variable, was a rep
      // movs per element: most of encode's time on a 16 KB burst, issue 36).
      if (each == 2)
        for (size_t k = i; k < i + r.count; ++k, to += 8) std::memcpy(to, es[k].words.data() + 2, 8);
      else
        for (size_t k = i; k < i + r.count; ++k, to += 4) std::memcpy(to, es[k].words.data() + 2, 4);
    }
    i += r.count;
  }
  return finish_frame(frame, out, written, key);
}

Entry ElementRun::element(size_t k) const {
  Entry x = first;
  x.at_cycle = first.at_cycle + uint64_t(k) * step;
  if (index_step) x.index = static_cast<uint16_t>(first.index + k);
  if (address_step && x.nwords >= 2) x.words[1] = first.words[1] + uint32_t(k);
  if (data) {
    const uint64_t v = (*data)[data_at + k];
    if (x.nwords >= 3) x.words[2] = uint32_t(v);
    if (x.nwords >= 4) x.words[3] = uint32_t(v >> 32);
  }
  return x;
}

ElementRun ElementRun::slice(size_t from, size_t n) const {
  ElementRun r = *this;
  r.first = element(from);
  r.count = uint32_t(n);
  r.data_at = data_at + from;
  return r;
}

namespace {

// A place in a sequence of ElementRuns: run s, its element k.
struct Place {
  size_t s = 0, k = 0;
};
void forward(std::span<const ElementRun> rs, Place& p, size_t n) {
  p.k += n;
  while (p.s < rs.size() && p.k >= rs[p.s].count) p.k -= rs[p.s++].count;
}

// Whether the elements of `x` after its first continue a run `r` one another as they
// continue it (its step, index and address steps): then, given the one before, they
// all do, up to the run's limits.
bool steps_as(const ElementRun& x, const Run& r) {
  return x.step == r.step && x.index_step == ((r.flags & kRunIndexStep) != 0) &&
         (x.first.nwords < 2 || x.address_step == ((r.flags & kRunAddressStep) != 0));
}

// The run (run_from's, over the elements) that starts with element a at p, `left`
// elements from there on: whole ElementRuns of its steps taken at once.
Run run_at(std::span<const ElementRun> rs, Place p, const Entry& a, size_t left) {
  Run r;
  if (left < 2) return r;
  Place x = p;
  forward(rs, x, 1);
  if (!run_pair(a, rs[x.s].element(x.k), r)) return Run{};
  size_t most = std::min(left, size_t(UINT16_MAX));  // and where the index or the MSGTAG would overflow
  if (r.flags & kRunIndexStep) most = std::min(most, size_t(0x10000) - a.index);
  if (r.flags & kRunAddressStep) most = std::min<size_t>(most, wire::field::kMsgtag.mask() - wire::address_msgtag(a.words[1]) + 1);
  size_t n = 1;
  while (n < most) {
    const ElementRun& in = rs[x.s];
    if (x.k > 0 && steps_as(in, r)) {  // the element before is in the run, and of this ElementRun
      const size_t m = std::min(in.count - x.k, most - n);
      n += m;
      forward(rs, x, m);
      continue;
    }
    if (!run_continues(a, in.element(x.k), r, n)) break;
    ++n;
    forward(rs, x, 1);
  }
  r.count = n;
  return r;
}

// The data words (2..) of `n` elements from p, appended.
void put_data_words(std::vector<uint8_t>& out, std::span<const ElementRun> rs, Place p, size_t n, size_t each) {
  size_t at = out.size();
  out.resize(at + 4 * each * n);
  uint8_t* to = out.data() + at;
  while (n > 0) {
    const ElementRun& in = rs[p.s];
    const size_t m = std::min<size_t>(in.count - p.k, n);
    if (in.data && each == 2) {  // words 2 and 3 are the little-endian 64-bit word
      std::memcpy(to, in.data->data() + in.data_at + p.k, 8 * m);
      to += 8 * m;
    } else if (in.data) {  // word 2 only: the low halves
      for (size_t k = p.k; k < p.k + m; ++k, to += 4) {
        const uint32_t lo = uint32_t((*in.data)[in.data_at + k]);
        std::memcpy(to, &lo, 4);
      }
    } else {  // without data, every element has the first's words
      for (size_t k = 0; k < m; ++k, to += 4 * each) std::memcpy(to, in.first.words.data() + 2, 4 * each);
    }
    n -= m;
    forward(rs, p, m);
  }
}

}  // namespace

size_t encode(const Frame& frame, std::span<const ElementRun> rs, std::vector<uint8_t>& out, const Key* key) {
  size_t left = 0;
  for (const ElementRun& r : rs) left += r.count;
  put_header(frame, out, std::min<size_t>(left, 64) * (kEntryHeaderBytes + 16) + 8 * left);
  uint16_t written = 0;
  Place p;
  forward(rs, p, 0);
  while (left > 0) {
    const Entry a = rs[p.s].element(p.k);
    const Run r = run_at(rs, p, a, left);
    put_entry(out, a, r);
    if (const size_t each = a.nwords > 2 ? size_t(a.nwords) - 2 : 0; r.count > 1 && each > 0)
      put_data_words(out, rs, p, r.count, each);
    forward(rs, p, r.count);
    left -= r.count;
    ++written;
  }
  return finish_frame(frame, out, written, key);
}

namespace {

using wire::Error;

// A compact run (link.h) whose entry header `e` (entry `i`) was read, at `at`
// (`elements`: the frame's elements before it): the run, or the reason it is refused.
std::variant<EntryRun, LinkError> parse_run(std::span<const uint8_t> in, size_t& at, const Entry& e, uint16_t i,
                                            size_t elements) {
  // Refused whole when it is not one the encoder makes.
  if (in.size() - at < kRunHeaderBytes)
    return LinkError{Error::word_count, fmt::format("compact entry {} is cut off", i)};
  EntryRun r;
  r.first = e;
  const uint16_t count = get<uint16_t>(in, at);
  r.flags = get<uint8_t>(in, at + 2);
  const uint8_t zero = get<uint8_t>(in, at + 3);
  r.step = get<uint32_t>(in, at + 4);
  at += kRunHeaderBytes;
  if (count < 2)
    return LinkError{Error::word_count, fmt::format("compact entry {} has count {} (at least 2)", i, count)};
  if (size_t(count) > size_t(kMaxElements) - elements)
    return LinkError{Error::word_count,
                     fmt::format("compact entry {} of {} elements: the frame has more than {}", i, count, kMaxElements)};
  if ((r.flags & ~(kRunIndexStep | kRunAddressStep)) != 0 || zero != 0)
    return LinkError{Error::word_count, fmt::format("compact entry {} has unknown flags {:#x}/{:#x}", i, r.flags, zero)};
  if ((r.flags & kRunAddressStep) && e.nwords < 2)
    return LinkError{Error::word_count, fmt::format("compact entry {} steps an address it does not carry", i)};
  const size_t fixed = std::min<size_t>(e.nwords, 2), each = e.nwords > 2 ? e.nwords - 2u : 0u;
  if ((in.size() - at) / 4 < fixed + size_t(count) * each)
    return LinkError{Error::word_count, fmt::format("compact entry {} of {} elements runs beyond the frame", i, count)};
  for (size_t w = 0; w < fixed; ++w) r.first.words[w] = get<uint32_t>(in, at + 4 * w);
  at += 4 * fixed;
  if ((r.flags & kRunIndexStep) && uint32_t(e.index) + count - 1 > 0xFFFFu)
    return LinkError{Error::word_count, fmt::format("compact entry {}: index {} + {} overflows", i, e.index, count)};
  if ((r.flags & kRunAddressStep) && wire::address_msgtag(r.first.words[1]) + (count - 1u) > wire::field::kMsgtag.mask())
    return LinkError{Error::word_count, fmt::format("compact entry {}: MSGTAG {} + {} overflows", i,
                                                    wire::address_msgtag(r.first.words[1]), count)};
  if (r.step != 0 && (UINT64_MAX - e.at_cycle) / r.step < uint64_t(count - 1))
    return LinkError{Error::word_count, fmt::format("compact entry {}: cycles overflow", i)};
  r.count = count;
  r.data = in.data() + at;
  for (size_t w = 0; w < each; ++w) r.first.words[2 + w] = get<uint32_t>(in, at + 4 * w);
  at += 4 * each * count;
  return r;
}

// The header of `in` into `f` (not its entries); `n`: the entries on the wire.
std::optional<LinkError> parse_header(std::span<const uint8_t> in, Frame& f, uint16_t& n) {
  if (in.size() < kHeaderBytes)
    return LinkError{Error::checksum, fmt::format("frame of {} bytes is shorter than a header", in.size())};
  if (get<uint32_t>(in, 0) != kMagic) return LinkError{Error::checksum, "bad magic (not a COP link frame)"};
  if (get<uint8_t>(in, 4) != kVersion)
    return LinkError{Error::checksum, fmt::format("link version {} (expected {})", get<uint8_t>(in, 4), kVersion)};
  const uint32_t payload = get<uint32_t>(in, kLengthAt);
  if (payload != in.size() - kHeaderBytes)
    return LinkError{Error::checksum,
                     fmt::format("payload length {} but {} bytes follow the header", payload, in.size() - kHeaderBytes)};
  if (get<uint32_t>(in, kChecksumAt) != crc(in)) return LinkError{Error::checksum, "CRC-32 mismatch"};
  const uint8_t type = get<uint8_t>(in, 5);
  if (!known_type(type)) return LinkError{Error::checksum, fmt::format("unknown frame type {}", type)};
  f.type = static_cast<FrameType>(type);
  f.channel = get<uint16_t>(in, 6);
  f.tkno = get<uint16_t>(in, 8);
  n = get<uint16_t>(in, 10);
  f.seq = get<uint32_t>(in, 12);
  f.cycles = get<uint64_t>(in, 16);
  for (size_t i = 0; i < 4; ++i) f.info[i] = get<uint32_t>(in, 24 + 4 * i);
  f.nonce = get<uint64_t>(in, 40);
  f.ack = get<uint32_t>(in, 48);
  f.session = get<uint32_t>(in, 52);
  std::memcpy(f.mac.data(), in.data() + kMacAt, kMacBytes);
  if (n > kMaxEntries)
    return LinkError{Error::word_count, fmt::format("frame of {} entries (at most {})", n, kMaxEntries)};
  return std::nullopt;
}

// Entry `i`'s header and identity at `at` into `e`; whether it is a compact run.
std::variant<bool, LinkError> parse_entry_header(std::span<const uint8_t> in, size_t& at, uint16_t i, uint16_t n,
                                                 Entry& e) {
  if (in.size() - at < kEntryHeaderBytes)
    return LinkError{Error::word_count, fmt::format("entry {} of {} is cut off", i, n)};
  e.at_cycle = get<uint64_t>(in, at);
  e.seq = get<uint32_t>(in, at + 8);
  e.index = get<uint16_t>(in, at + 12);
  const uint8_t kind = get<uint8_t>(in, at + 14);
  e.nwords = get<uint8_t>(in, at + 15);
  at += kEntryHeaderBytes;
  if ((kind & ~(kCompactBit | kIdentityBit)) > 2)
    return LinkError{Error::checksum, fmt::format("entry {} has unknown kind {}", i, kind)};
  e.kind = static_cast<EntryKind>(kind & ~(kCompactBit | kIdentityBit));
  if (kind & kIdentityBit) {
    if (in.size() - at < kIdentityBytes)
      return LinkError{Error::word_count, fmt::format("entry {}'s identity is cut off", i)};
    e.op_id = get<uint64_t>(in, at);
    at += kIdentityBytes;
    if (e.op_id == 0) return LinkError{Error::word_count, fmt::format("entry {} has identity 0 with its flag", i)};
  }
  if (e.nwords < 1 || e.nwords > wire::kMaxWords)
    return LinkError{Error::word_count, fmt::format("entry {} has {} words (1..4)", i, e.nwords)};
  return (kind & kCompactBit) != 0;
}

// Every check of decode (link.h), in its order, once for decode and decode_runs:
// the header into `f`, then each of the `n` wire entries handed to `take` as a run
// (a single entry: count 1), then the text; nullopt when all is well.
template <typename Take>
std::optional<LinkError> parse(std::span<const uint8_t> in, Frame& f, Take take) {
  uint16_t n = 0;
  if (auto bad = parse_header(in, f, n)) return bad;
  size_t at = kHeaderBytes, elements = 0;
  for (uint16_t i = 0; i < n; ++i) {
    Entry e;
    auto compact = parse_entry_header(in, at, i, n, e);
    if (auto* bad = std::get_if<LinkError>(&compact)) return std::move(*bad);
    if (!std::get<bool>(compact)) {
      if (in.size() - at < 4u * e.nwords) return LinkError{Error::word_count, fmt::format("entry {} is cut off", i)};
      EntryRun r;
      if (e.nwords > 2) r.data = in.data() + at + 8;
      for (int w = 0; w < e.nwords; ++w) e.words[size_t(w)] = get<uint32_t>(in, at + 4 * size_t(w));
      at += 4u * e.nwords;
      if (elements >= size_t(kMaxElements))
        return LinkError{Error::word_count, fmt::format("frame of more than {} elements", kMaxElements)};
      r.first = e;
      take(r);
      ++elements;
      continue;
    }
    auto run = parse_run(in, at, e, i, elements);
    if (auto* bad = std::get_if<LinkError>(&run)) return std::move(*bad);
    elements += std::get<EntryRun>(run).count;
    take(std::get<EntryRun>(run));
  }
  f.text.assign(reinterpret_cast<const char*>(in.data() + at), in.size() - at);
  return std::nullopt;
}

}  // namespace

uint32_t EntryRun::word(size_t k, size_t w) const {
  if (w < 2) return w == 1 && (flags & kRunAddressStep) ? first.words[1] + uint32_t(k) : first.words[w];
  uint32_t v;
  std::memcpy(&v, data + 4 * (k * data_words() + (w - 2)), 4);
  return v;
}

Entry EntryRun::element(size_t k) const {
  Entry x = first;
  x.at_cycle = first.at_cycle + uint64_t(k) * step;
  if (flags & kRunIndexStep) x.index = static_cast<uint16_t>(first.index + k);
  if (flags & kRunAddressStep) x.words[1] = first.words[1] + uint32_t(k);
  if (const size_t each = data_words(); each > 0) std::memcpy(x.words.data() + 2, data + 4 * k * each, 4 * each);
  return x;
}

wire::Message element_message(const EntryRun& r, const wire::Message& first, size_t k) {
  wire::Message m = first;
  if (r.flags & kRunAddressStep) m.addr.msgtag = first.addr.msgtag + uint32_t(k);
  const size_t each = r.data_words();
  if (each >= 1) std::memcpy(&m.data1, r.data + 4 * k * each, 4);
  if (each >= 2) std::memcpy(&m.data2, r.data + 4 * k * each + 4, 4);
  m.op_id = r.first.op_id;
  return m;
}

std::variant<Frame, LinkError> decode(std::span<const uint8_t> in) {
  Frame f;
  if (auto bad = decode(in, f)) return *bad;
  return f;
}

std::optional<LinkError> decode(std::span<const uint8_t> in, Frame& f) {
  f.entries.clear();
  // An element per wire entry at least (the header's count, not yet checked: capped).
  if (in.size() >= kHeaderBytes)
    f.entries.reserve(std::min<size_t>(get<uint16_t>(in, kCountAt), size_t(kMaxEntries)));
  return parse(in, f, [&f](const EntryRun& r) {
    if (r.count == 1) {  // a single entry: decoded whole
      f.entries.push_back(r.first);
      return;
    }
    // The elements made in place, the vector grown once for the run (a 16 KB burst is
    // one entry of 2048 elements).
    const size_t first = f.entries.size();
    if (f.entries.capacity() < first + r.count) f.entries.reserve(std::max<size_t>(first + r.count, 2 * f.entries.capacity()));
    for (size_t k = 0; k < r.count; ++k) f.entries.push_back(r.element(k));
  });
}

std::optional<LinkError> decode_runs(std::span<const uint8_t> in, FrameRuns& into) {
  into.frame.entries.clear();
  into.runs.clear();
  into.elements = 0;
  return parse(in, into.frame, [&into](const EntryRun& r) {
    into.runs.push_back(r);
    into.elements += r.count;
  });
}

namespace {

// Command `i` of a frame as append_entries makes it (seq `seq`, its index, cycle 0).
Entry command_entry(std::span<const wire::Message> commands, size_t i, uint32_t seq) {
  return make_entry(commands[i], wire::Direction::to_controller, EntryKind::command, seq, uint16_t(i));
}

// Whether command b has command a's instruction and address but MSGTAG (append_entries' test:
// then its entry has a's kind, seq, word count, instruction word and address word but MSGTAG).
bool same_shape(const wire::Message& a, const wire::Message& b) {
  return std::memcmp(&a.ins, &b.ins, sizeof(wire::Instruction)) == 0 && a.addr.cntno == b.addr.cntno &&
         a.addr.chno == b.addr.chno;
}

// run_continues for command `m`, element n of run `r` from entry `a`, when m is of a's shape:
// only its identity, index, cycle (0, as a's) and MSGTAG can differ, so only they are compared
// (an entry made and compared whole per element was most of the count's time, issue 36).
bool same_shape_continues(const Entry& a, const wire::Message& m, const Run& r, size_t n) {
  if (m.op_id != a.op_id || r.step != 0 || !(r.flags & kRunIndexStep) || a.index + n > 0xFFFF) return false;
  if (a.nwords < 2) return true;
  const uint32_t w1 = (a.words[1] & ~wire::field::kMsgtag.put(~0u)) | wire::field::kMsgtag.put(m.addr.msgtag);
  if (!(r.flags & kRunAddressStep)) return w1 == a.words[1];
  return w1 == a.words[1] + n && wire::address_msgtag(a.words[1]) + n <= wire::field::kMsgtag.mask();
}

}  // namespace

namespace {

// The run (run_from's over append_entries' entries of `commands`, seq `seq`) that starts
// with command i, whose entry is `a`: entries are made only where the shape changes.
Run command_run(std::span<const wire::Message> commands, size_t i, const Entry& a, uint32_t seq) {
  Run r;
  if (i + 1 >= commands.size() || !run_pair(a, command_entry(commands, i + 1, seq), r)) return Run{};
  size_t most = std::min(commands.size() - i, size_t(UINT16_MAX));
  size_t n = 2;
  if (r.step != 0 || !(r.flags & kRunIndexStep)) {  // not a command frame's entries: the general test
    for (; n < most; ++n) {
      const wire::Message& m = commands[i + n];
      const bool same = same_shape(commands[i], m);
      if (same ? !same_shape_continues(a, m, r, n) : !run_continues(a, command_entry(commands, i + n, seq), r, n))
        break;
    }
    r.count = n;
    return r;
  }
  // same_shape_continues with its bounds taken out of the loop: the index and the MSGTAG
  // stay in range below `most`, so an element of the first's shape continues the run when
  // its identity is the first's and its MSGTAG the first's (+ n where the run steps it).
  const bool tagged = a.nwords >= 2, steps = tagged && (r.flags & kRunAddressStep);
  const uint32_t tag = tagged ? wire::address_msgtag(a.words[1]) : 0, top = wire::field::kMsgtag.mask();
  most = std::min(most, size_t(0x10000) - a.index);
  if (steps) most = std::min<size_t>(most, size_t(top) - tag + 1);
  const wire::Message& first = commands[i];
  for (; n < most; ++n) {
    const wire::Message& m = commands[i + n];
    if (!same_shape(first, m)) {
      if (!run_continues(a, command_entry(commands, i + n, seq), r, n)) break;
      continue;
    }
    if (m.op_id != a.op_id || (tagged && (m.addr.msgtag & top) != (steps ? tag + uint32_t(n) : tag))) break;
  }
  r.count = n;
  return r;
}

// The data words (2..; `each` of them) of commands [i, i + n), appended: a command's words
// 2 and 3 are its data1 and data2 (wire::encode), whatever its shape.
void put_command_data(std::vector<uint8_t>& out, std::span<const wire::Message> commands, size_t i, size_t n,
                      size_t each) {
  const size_t at = out.size();
  out.resize(at + 4 * each * n);
  uint8_t* to = out.data() + at;
  if (each == 2) {
    for (size_t k = i; k < i + n; ++k, to += 8) {
      const uint64_t v = commands[k].data64();  // data1 then data2, little-endian
      std::memcpy(to, &v, 8);
    }
    return;
  }
  for (size_t k = i; k < i + n; ++k, to += 4) std::memcpy(to, &commands[k].data1, 4);
}

}  // namespace

size_t encoded_bytes(std::span<const wire::Message> commands) {
  // Counted as encode() groups and writes them (run_from's runs, wire_entry_bytes) without
  // making the frame's entries: libcop counts every burst of an array call so, before
  // send_only makes them (issue 36). Entries are made only where the shape changes.
  size_t bytes = 0;
  for (size_t i = 0; i < commands.size();) {
    const Entry a = command_entry(commands, i, 1);
    const Run r = command_run(commands, i, a, 1);
    bytes += wire_entry_bytes(a, r);
    i += r.count;
  }
  return bytes;
}

size_t wire_entries(std::span<const uint8_t> bytes) {
  return bytes.size() < kHeaderBytes ? 0 : get<uint16_t>(bytes, kCountAt);
}

size_t encode_commands(const Frame& frame, std::span<const wire::Message> commands, std::vector<uint8_t>& out,
                       const Key* key) {
  // One walk over the commands: each run found as encoded_bytes finds it and written as
  // encode() writes it, its data words straight from the messages (append_entries' entries
  // made and encode's walk over them, then its copy, were three passes, issue 36).
  put_header(frame, out, std::min<size_t>(commands.size(), 64) * (kEntryHeaderBytes + 16) + 8 * commands.size());
  uint16_t written = 0;
  for (size_t i = 0; i < commands.size(); ++written) {
    const Entry a = command_entry(commands, i, frame.seq);
    const Run r = command_run(commands, i, a, frame.seq);
    put_entry(out, a, r);
    if (const size_t each = a.nwords > 2 ? size_t(a.nwords) - 2 : 0; r.count > 1 && each > 0)
      put_command_data(out, commands, i, r.count, each);
    i += r.count;
  }
  return finish_frame(frame, out, written, key);
}

void reseal(std::vector<uint8_t>& bytes, uint32_t ack, uint32_t session, const Key* key) {
  std::memcpy(bytes.data() + kAckAt, &ack, 4);
  std::memcpy(bytes.data() + kSessionAt, &session, 4);
  seal(bytes, key);
}

bool verify(std::span<const uint8_t> bytes, const Key& key) {
  if (bytes.size() < kHeaderBytes) return false;
  const Mac m = mac_of(bytes, key);
  return crypto_verify_16(m.data(), bytes.data() + kMacAt) == 0;
}

Entry make_entry(const wire::Message& msg, wire::Direction dir, EntryKind kind, uint32_t seq, uint16_t index,
                 uint64_t at_cycle) {
  Entry e;
  e.at_cycle = at_cycle;
  e.seq = seq;
  e.index = index;
  e.kind = kind;
  e.nwords = static_cast<uint8_t>(wire::encode(msg, dir, e.words));
  e.op_id = msg.op_id;
  return e;
}

static_assert(sizeof(wire::Instruction) == 10 && std::has_unique_object_representations_v<wire::Instruction>,
              "append_entries compares instructions by their bytes");

void append_entries(std::span<const wire::Message> msgs, wire::Direction dir, EntryKind kind, uint32_t seq,
                    uint16_t first_index, std::vector<Entry>& out) {
  const size_t base = out.size();
  out.resize(base + msgs.size());
  const wire::Message* last = nullptr;  // the message whose instruction was encoded last
  uint32_t word0 = 0, fixed = 0;        // its instruction word, its address word but MSGTAG
  uint8_t nwords = 0;
  for (size_t i = 0; i < msgs.size(); ++i) {
    const wire::Message& m = msgs[i];
    Entry& e = out[base + i];
    // (Instruction has no padding: its bytes are its fields, compared in two loads.)
    if (!last || std::memcmp(&m.ins, &last->ins, sizeof(wire::Instruction)) != 0 ||
        m.addr.cntno != last->addr.cntno || m.addr.chno != last->addr.chno) {
      e = make_entry(m, dir, kind, seq, uint16_t(first_index + i));
      last = &m, word0 = e.words[0], nwords = e.nwords;
      fixed = e.words[1] & ~wire::field::kMsgtag.put(~0u);
      continue;
    }
    // The instruction and the address but its MSGTAG as the last encoded: the same word
    // count and instruction word (wire::encode reads the instruction for them). Written
    // field by field from registers (a copy of the entry before, just written, stalled).
    e.seq = seq;
    e.index = uint16_t(first_index + i);
    e.kind = kind;
    e.nwords = nwords;
    e.op_id = m.op_id;
    e.words[0] = word0;
    if (nwords >= 2) e.words[1] = fixed | wire::field::kMsgtag.put(m.addr.msgtag);
    if (nwords >= 3) e.words[2] = m.data1;
    if (nwords >= 4) e.words[3] = m.data2;
  }
}

std::variant<wire::Message, wire::DecodeError> decode_entry(const Entry& e, wire::Direction dir,
                                                            const wire::Limits& limits) {
  auto decoded = wire::decode(e.span(), dir, limits);
  if (auto* m = std::get_if<wire::Message>(&decoded)) m->op_id = e.op_id;
  return decoded;
}

}  // namespace cop::link
