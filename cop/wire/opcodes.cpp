// Table I of seed 000, with ch. V's PROBE and NACK: names, classes, word counts.
#include <cop/wire.h>

#include <algorithm>
#include <array>
#include <bit>
#include <stdexcept>

namespace cop::wire {
namespace {

struct OpInfo {
  Opcode op;
  std::string_view name;
  int to_controller;  // words in a request (0: never sent by a node)
  int to_node;        // words in the controller's answer or broadcast (0: never)
};

constexpr OpInfo kOps[] = {
    {Opcode::BENTRY, "BENTRY", 2, 2},   {Opcode::LOCK, "LOCK", 1, 0},
    {Opcode::UNLOCK, "UNLOCK", 1, 0},   {Opcode::XMIT, "XMIT", 1, 1},
    {Opcode::PROBE, "PROBE", 1, 2},     {Opcode::ACK, "ACK", 1, 1},
    {Opcode::NACK, "NACK", 3, 3},       {Opcode::BCAST32, "BCAST32", 3, 3},
    {Opcode::BCAST64, "BCAST64", 4, 4}, {Opcode::SETBM, "SETBM", 4, 0},
    {Opcode::SETTC, "SETTC", 4, 0},     {Opcode::SUMI32, "SUMI32", 3, 3},
    {Opcode::MAXI32, "MAXI32", 3, 3},   {Opcode::MINI32, "MINI32", 3, 3},
    {Opcode::OR32, "OR32", 3, 3},       {Opcode::AND32, "AND32", 3, 3},
    {Opcode::EXOR32, "EXOR32", 3, 3},   {Opcode::RSRAM32, "RSRAM32", 2, 3},
    {Opcode::WSRAM32, "WSRAM32", 3, 0}, {Opcode::RMW32, "RMW32", 3, 3},
    {Opcode::SUMI64, "SUMI64", 4, 4},   {Opcode::MAXI64, "MAXI64", 4, 4},
    {Opcode::MINI64, "MINI64", 4, 4},   {Opcode::SUMF, "SUMF", 4, 4},
    {Opcode::MAXF, "MAXF", 4, 4},       {Opcode::MINF, "MINF", 4, 4},
    {Opcode::OR64, "OR64", 4, 4},       {Opcode::AND64, "AND64", 4, 4},
    {Opcode::EXOR64, "EXOR64", 4, 4},   {Opcode::RSRAM64, "RSRAM64", 2, 4},
    {Opcode::WSRAM64, "WSRAM64", 4, 0}, {Opcode::RMW64, "RMW64", 4, 4},
};

// kOps indexed by the 7-bit opcode value (-1: not an opcode): decode and
// validate look every command up, so this is a table, not a search.
constexpr std::array<int8_t, 128> kIndex = [] {
  std::array<int8_t, 128> t{};
  t.fill(-1);
  for (size_t i = 0; i < std::size(kOps); ++i) t[static_cast<size_t>(kOps[i].op)] = static_cast<int8_t>(i);
  return t;
}();

const OpInfo* find(Opcode op) {
  const auto v = static_cast<size_t>(op);
  if (v >= kIndex.size() || kIndex[v] < 0) return nullptr;
  return &kOps[static_cast<size_t>(kIndex[v])];
}

}  // namespace

bool is_opcode(uint32_t value) { return value < kIndex.size() && kIndex[value] >= 0; }

std::string_view opcode_name(Opcode op) {
  const OpInfo* i = find(op);
  return i ? i->name : std::string_view{"?"};
}

std::optional<Opcode> opcode_from_name(std::string_view name) {
  for (const auto& i : kOps)
    if (i.name == name) return i.op;
  return std::nullopt;
}

int word_count(Opcode op, Direction dir) {
  const OpInfo* i = find(op);
  if (!i) return 0;
  return dir == Direction::to_controller ? i->to_controller : i->to_node;
}

bool is_reduction(Opcode op) {
  switch (op) {
    case Opcode::SUMI32: case Opcode::MAXI32: case Opcode::MINI32:
    case Opcode::OR32: case Opcode::AND32: case Opcode::EXOR32:
    case Opcode::SUMI64: case Opcode::MAXI64: case Opcode::MINI64:
    case Opcode::SUMF: case Opcode::MAXF: case Opcode::MINF:
    case Opcode::OR64: case Opcode::AND64: case Opcode::EXOR64:
      return true;
    default:
      return false;
  }
}

bool is_floating(Opcode op) {
  return op == Opcode::SUMF || op == Opcode::MAXF || op == Opcode::MINF;
}

// In Table I bit 5 of the opcode distinguishes the 64-bit forms (11xxxxx)
// from the 32-bit ones (10xxxxx); BCAST64 is the one exception.
bool is_64bit(Opcode op) {
  if (op == Opcode::BCAST64) return true;
  if (op == Opcode::BCAST32) return false;
  const auto v = static_cast<uint32_t>(op);
  return (v & 0b1100000) == 0b1100000;
}

std::string_view error_name(Error e) {
  switch (e) {
    case Error::none: return "none";
    case Error::unknown_opcode: return "unknown opcode";
    case Error::word_count: return "wrong word count";
    case Error::reserved_bits: return "reserved bits set";
    case Error::channel_range: return "channel out of range";
    case Error::address_range: return "address out of range";
    case Error::protection: return "task address space protection";
    case Error::partition: return "partition violation";
    case Error::mask_in_use: return "mask entry in use (accessed bit set)";
    case Error::privilege: return "supervisor command from user mode";
    case Error::no_mask: return "no initialised mask entry";
    case Error::not_participant: return "channel not pending in terminal-count mask";
    case Error::not_locked: return "channel does not hold the lock";
    case Error::bad_mask: return "invalid mask";
    case Error::timeout: return "link timeout";
    case Error::checksum: return "link checksum error";
    case Error::retry_limit: return "link retry limit reached";
    case Error::link_down: return "link down";
    case Error::overflow: return "out-of-context buffer overflow (a message was lost)";
    case Error::task_ended: return "a task of the global operation ended before it completed";
    case Error::lock_timeout: return "LOCK held past the controller's deadlock timer: taken back";
    case Error::mismatch: return "contributions to the global operation disagree on function or datatype";
    case Error::voided: return "the operation was voided: a call of a participant on these words had failed";
    case Error::epoch_lost: return "the task's partition (or copd) was lost and taken again since it joined: join again";
  }
  return "unknown error";
}


uint64_t combine(Opcode op, uint64_t a, uint64_t b) {
  switch (op) {
    case Opcode::SUMI32: return combine_as<Opcode::SUMI32>(a, b);
    case Opcode::MAXI32: return combine_as<Opcode::MAXI32>(a, b);
    case Opcode::MINI32: return combine_as<Opcode::MINI32>(a, b);
    case Opcode::OR32: return combine_as<Opcode::OR32>(a, b);
    case Opcode::AND32: return combine_as<Opcode::AND32>(a, b);
    case Opcode::EXOR32: return combine_as<Opcode::EXOR32>(a, b);
    case Opcode::SUMI64: return combine_as<Opcode::SUMI64>(a, b);
    case Opcode::MAXI64: return combine_as<Opcode::MAXI64>(a, b);
    case Opcode::MINI64: return combine_as<Opcode::MINI64>(a, b);
    case Opcode::OR64: return combine_as<Opcode::OR64>(a, b);
    case Opcode::AND64: return combine_as<Opcode::AND64>(a, b);
    case Opcode::EXOR64: return combine_as<Opcode::EXOR64>(a, b);
    case Opcode::SUMF: return combine_as<Opcode::SUMF>(a, b);
    case Opcode::MAXF: return combine_as<Opcode::MAXF>(a, b);
    case Opcode::MINF: return combine_as<Opcode::MINF>(a, b);
    default: throw std::logic_error("not a reduction opcode");
  }
}

uint64_t payload(const Message& m) { return wire::is_64bit(m.ins.opcode) ? m.data64() : m.data1; }

void set_payload(Message& m, uint64_t v) {
  if (wire::is_64bit(m.ins.opcode))
    m.set_data64(v);
  else
    m.data1 = static_cast<uint32_t>(v);
}



bool is_data_ram_access(Opcode op) {
  switch (op) {
    case Opcode::RSRAM32: case Opcode::RSRAM64: case Opcode::WSRAM32:
    case Opcode::WSRAM64: case Opcode::RMW32: case Opcode::RMW64:
      return true;
    default:
      return false;
  }
}

bool has_answer_data(Opcode op) {
  switch (op) {
    case Opcode::PROBE:
    case Opcode::RSRAM32:
    case Opcode::RSRAM64:
    case Opcode::RMW32:
    case Opcode::RMW64:
      return true;
    default:
      return false;
  }
}

}  // namespace cop::wire
