// Encoding and decoding of COP messages; the layout is documented in cop/wire.h.
#include <cop/wire.h>

#include <fmt/format.h>

namespace cop::wire {
namespace {

bool is_collective(Opcode op) {
  return is_reduction(op) || op == Opcode::BENTRY || op == Opcode::BCAST32 ||
         op == Opcode::BCAST64 || op == Opcode::SETTC || op == Opcode::SETBM;
}

DecodeError err(Error code, std::string detail) { return DecodeError{code, std::move(detail)}; }

}  // namespace

std::optional<DecodeError> validate(const Message& msg, Direction dir, const Limits& limits) {
  const Opcode op = msg.ins.opcode;
  const int words = word_count(op, dir);
  if (words == 0)
    return err(Error::unknown_opcode,
               fmt::format("{} is never sent {}", opcode_name(op),
                           dir == Direction::to_node ? "to a node" : "to the controller"));
  if (msg.ins.tkno > kMaxTkno) return err(Error::reserved_bits, "TKNO wider than 10 bits");
  if (msg.ins.ppn > kMaxPpn) return err(Error::reserved_bits, "PPN wider than 4 bits");
  if (dir == Direction::to_controller) {
    const bool m_allowed = op == Opcode::RSRAM64 || op == Opcode::RMW64;
    if (msg.ins.m && !m_allowed)
      return err(Error::reserved_bits, fmt::format("M bit has no meaning for {}", opcode_name(op)));
    if (msg.ins.msel_bcast && !(msg.ins.m && op == Opcode::RSRAM64))
      return err(Error::reserved_bits, "MSEL set without a mask read");
  }
  if (words < 2) return std::nullopt;

  const Address& a = msg.addr;
  if (a.cntno > kMaxCntno) return err(Error::reserved_bits, "CNTNO wider than 6 bits");
  if (a.chno > limits.channels || a.chno > kChannels)
    return err(Error::channel_range, fmt::format("channel {} (controller has {})", a.chno, limits.channels));
  if (msg.ins.z && a.chno == 0) return err(Error::channel_range, "Z bit set but CHNO is 0");
  if (a.msgtag > kMaxMsgtag) return err(Error::reserved_bits, "MSGTAG wider than 19 bits");
  if (dir == Direction::to_node || op == Opcode::NACK) return std::nullopt;

  if (is_collective(op) || (op == Opcode::RSRAM64 && msg.ins.m)) {
    if (msg.ins.space != Space::GAS)
      return err(Error::address_range, fmt::format("{} addresses the GAS only", opcode_name(op)));
    const uint32_t n = (op == Opcode::SETTC || op == Opcode::SETBM) ? static_cast<uint32_t>(msg.count()) : 1;
    if (a.msgtag + n > limits.gas_words)
      return err(Error::address_range, fmt::format("GAS offset {}+{} beyond {} words", a.msgtag, n, limits.gas_words));
    return std::nullopt;
  }
  if (!is_data_ram_access(op)) return std::nullopt;
  switch (msg.ins.space) {
    case Space::TAS:
      if (a.ttkno() >= limits.tasks_per_channel)
        return err(Error::address_range, fmt::format("task {} beyond {} task spaces", a.ttkno(), limits.tasks_per_channel));
      if (a.tas_offset() >= limits.tas_words)
        return err(Error::address_range, fmt::format("TAS offset {} beyond {} words", a.tas_offset(), limits.tas_words));
      break;
    case Space::GAS:
      if (a.msgtag >= limits.gas_words)
        return err(Error::address_range, fmt::format("GAS offset {} beyond {} words", a.msgtag, limits.gas_words));
      break;
    case Space::SAS:
      if (a.msgtag >= limits.sas_words)
        return err(Error::address_range, fmt::format("SAS offset {} beyond {} words", a.msgtag, limits.sas_words));
      break;
  }
  return std::nullopt;
}

int encode(const Message& msg, Direction dir, Words& out) {
  const int n = word_count(msg.ins.opcode, dir);
  if (n == 0) return 0;
  const Instruction& i = msg.ins;
  out = {};
  out[0] = field::kSupervisor.put(i.supervisor) | field::kX.put(i.x) |
           field::kOpcode.put(static_cast<uint32_t>(i.opcode)) | field::kM.put(i.m) | field::kZ.put(i.z) |
           field::kWordCount.put(static_cast<uint32_t>(n - 1)) | field::kSpace.put(static_cast<uint32_t>(i.space)) |
           field::kMsel.put(i.msel_bcast) | field::kPpn.put(i.ppn) | field::kTkno.put(i.tkno);
  if (n >= 2)
    out[1] = field::kCntno.put(msg.addr.cntno) | field::kChno.put(msg.addr.chno) | field::kMsgtag.put(msg.addr.msgtag);
  if (n >= 3) out[2] = msg.data1;
  if (n >= 4) out[3] = msg.data2;
  return n;
}

std::variant<Message, DecodeError> decode(std::span<const uint32_t> words, Direction dir,
                                          const Limits& limits) {
  if (words.empty()) return err(Error::word_count, "empty message");
  if (words.size() > kMaxWords) return err(Error::word_count, fmt::format("{} words (at most 4)", words.size()));
  const uint32_t w0 = words[0];
  const uint32_t raw_op = field::kOpcode.get(w0);
  if (!is_opcode(raw_op)) return err(Error::unknown_opcode, fmt::format("opcode {:#09b}", raw_op));
  Message m;
  m.ins.opcode = static_cast<Opcode>(raw_op);
  const int expected = word_count(m.ins.opcode, dir);
  if (expected == 0)
    return err(Error::unknown_opcode,
               fmt::format("{} is never sent {}", opcode_name(m.ins.opcode),
                           dir == Direction::to_node ? "to a node" : "to the controller"));
  const int wc = static_cast<int>(field::kWordCount.get(w0)) + 1;
  if (wc != expected)
    return err(Error::word_count, fmt::format("{} has {} words, WC field says {}", opcode_name(m.ins.opcode), expected, wc));
  if (static_cast<int>(words.size()) != expected)
    return err(Error::word_count, fmt::format("{} has {} words, got {}", opcode_name(m.ins.opcode), expected, words.size()));
  if (field::kReserved.get(w0) != 0) return err(Error::reserved_bits, "instruction bits 11..10 set");
  const uint32_t space = field::kSpace.get(w0);
  if (space == 3) return err(Error::reserved_bits, "SPACE field is the reserved value 3");

  m.ins.supervisor = field::kSupervisor.get(w0) != 0;
  m.ins.x = field::kX.get(w0) != 0;
  m.ins.m = field::kM.get(w0) != 0;
  m.ins.z = field::kZ.get(w0) != 0;
  m.ins.space = static_cast<Space>(space);
  m.ins.msel_bcast = field::kMsel.get(w0) != 0;
  m.ins.ppn = static_cast<uint8_t>(field::kPpn.get(w0));
  m.ins.tkno = static_cast<uint16_t>(field::kTkno.get(w0));
  if (expected >= 2) {
    m.addr.cntno = static_cast<uint8_t>(field::kCntno.get(words[1]));
    m.addr.chno = static_cast<uint8_t>(field::kChno.get(words[1]));
    m.addr.msgtag = field::kMsgtag.get(words[1]);
  }
  if (expected >= 3) m.data1 = words[2];
  if (expected >= 4) m.data2 = words[3];
  if (auto e = validate(m, dir, limits)) return *e;
  return m;
}

std::string to_string(const Message& msg) {
  std::string s = fmt::format("{}{}{}{}{} ppn={} tkno={}", opcode_name(msg.ins.opcode),
                              msg.ins.supervisor ? " S" : "", msg.ins.x ? " X" : "",
                              msg.ins.m ? (msg.ins.msel_bcast ? " M(BM)" : " M(TC)") : "",
                              msg.ins.z ? " Z" : "", msg.ins.ppn, msg.ins.tkno);
  static constexpr const char* kSpace[] = {"TAS", "GAS", "SAS"};
  s += fmt::format(" {} cnt={} ch={} tag={}", kSpace[static_cast<int>(msg.ins.space)], msg.addr.cntno,
                   msg.addr.chno, msg.addr.msgtag);
  s += fmt::format(" data={:#x}", msg.data64());
  return s;
}

Message make(Opcode op, uint16_t tkno, Space space, uint32_t msgtag) {
  Message m;
  m.ins.opcode = op;
  m.ins.tkno = tkno;
  m.ins.space = space;
  m.addr.msgtag = msgtag;
  return m;
}

}  // namespace cop::wire
