#include <cop/link.h>
#include <sodium.h>
#include <zlib.h>

#include <cstring>

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

constexpr size_t kLengthAt = 56;
constexpr size_t kChecksumAt = 60;
constexpr size_t kMacAt = 64;
static_assert(kMacAt + kMacBytes == kHeaderBytes);

uint32_t crc(std::span<const uint8_t> bytes) {
  uLong c = crc32(0L, Z_NULL, 0);
  // The checksum field itself counts as zero.
  c = crc32(c, bytes.data(), static_cast<uInt>(kChecksumAt));
  static const uint8_t zero[4] = {0, 0, 0, 0};
  c = crc32(c, zero, 4);
  c = crc32(c, bytes.data() + kMacAt, static_cast<uInt>(bytes.size() - kMacAt));
  return static_cast<uint32_t>(c);
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

}  // namespace

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

size_t encode(const Frame& frame, std::vector<uint8_t>& out, const Key* key) {
  out.clear();
  out.reserve(kHeaderBytes + frame.entries.size() * (kEntryHeaderBytes + 16) + frame.text.size());
  put<uint32_t>(out, kMagic);
  put<uint8_t>(out, kVersion);
  put<uint8_t>(out, static_cast<uint8_t>(frame.type));
  put<uint16_t>(out, frame.channel);
  put<uint16_t>(out, frame.tkno);
  put<uint16_t>(out, static_cast<uint16_t>(frame.entries.size()));
  put<uint32_t>(out, frame.seq);
  put<uint64_t>(out, frame.cycles);
  for (uint32_t v : frame.info) put<uint32_t>(out, v);
  put<uint64_t>(out, frame.nonce);
  put<uint32_t>(out, frame.ack);
  put<uint32_t>(out, frame.session);
  put<uint32_t>(out, 0);  // payload length, filled below
  put<uint32_t>(out, 0);  // checksum, filled below
  out.insert(out.end(), frame.mac.begin(), frame.mac.end());  // MAC, computed below with a key
  for (const Entry& e : frame.entries) {
    put<uint64_t>(out, e.at_cycle);
    put<uint32_t>(out, e.seq);
    put<uint16_t>(out, e.index);
    put<uint8_t>(out, static_cast<uint8_t>(e.kind));
    put<uint8_t>(out, e.nwords);
    for (int i = 0; i < e.nwords; ++i) put<uint32_t>(out, e.words[size_t(i)]);
  }
  out.insert(out.end(), frame.text.begin(), frame.text.end());
  const uint32_t payload = static_cast<uint32_t>(out.size() - kHeaderBytes);
  std::memcpy(out.data() + kLengthAt, &payload, 4);
  if (key) {
    const Mac m = mac_of(out, *key);
    std::memcpy(out.data() + kMacAt, m.data(), m.size());
  }
  const uint32_t sum = crc(out);
  std::memcpy(out.data() + kChecksumAt, &sum, 4);
  return out.size();
}

std::variant<Frame, LinkError> decode(std::span<const uint8_t> in) {
  using wire::Error;
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
  Frame f;
  f.type = static_cast<FrameType>(type);
  f.channel = get<uint16_t>(in, 6);
  f.tkno = get<uint16_t>(in, 8);
  const uint16_t n = get<uint16_t>(in, 10);
  f.seq = get<uint32_t>(in, 12);
  f.cycles = get<uint64_t>(in, 16);
  for (size_t i = 0; i < 4; ++i) f.info[i] = get<uint32_t>(in, 24 + 4 * i);
  f.nonce = get<uint64_t>(in, 40);
  f.ack = get<uint32_t>(in, 48);
  f.session = get<uint32_t>(in, 52);
  std::memcpy(f.mac.data(), in.data() + kMacAt, kMacBytes);
  if (n > kMaxEntries)
    return LinkError{Error::word_count, fmt::format("frame of {} entries (at most {})", n, kMaxEntries)};
  size_t at = kHeaderBytes;
  f.entries.resize(n);
  for (uint16_t i = 0; i < n; ++i) {
    if (in.size() - at < kEntryHeaderBytes)
      return LinkError{Error::word_count, fmt::format("entry {} of {} is cut off", i, n)};
    Entry& e = f.entries[i];
    e.at_cycle = get<uint64_t>(in, at);
    e.seq = get<uint32_t>(in, at + 8);
    e.index = get<uint16_t>(in, at + 12);
    const uint8_t kind = get<uint8_t>(in, at + 14);
    e.nwords = get<uint8_t>(in, at + 15);
    at += kEntryHeaderBytes;
    if (kind > 2) return LinkError{Error::checksum, fmt::format("entry {} has unknown kind {}", i, kind)};
    e.kind = static_cast<EntryKind>(kind);
    if (e.nwords < 1 || e.nwords > wire::kMaxWords)
      return LinkError{Error::word_count, fmt::format("entry {} has {} words (1..4)", i, e.nwords)};
    if (in.size() - at < 4u * e.nwords)
      return LinkError{Error::word_count, fmt::format("entry {} is cut off", i)};
    for (int w = 0; w < e.nwords; ++w) e.words[size_t(w)] = get<uint32_t>(in, at + 4 * size_t(w));
    at += 4u * e.nwords;
  }
  f.text.assign(reinterpret_cast<const char*>(in.data() + at), in.size() - at);
  return f;
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
  return e;
}

}  // namespace cop::link
