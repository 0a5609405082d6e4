// Writes the seed corpus of the fuzz targets: fuzz_seeds DIR writes DIR/wire,
// DIR/frame and DIR/controller (the committed tests/fuzz/corpus was made so).
// Seeds are valid inputs of every kind, in each target's input format (see the
// comment at the top of each *_fuzz.cpp).
#include <cop/link.h>
#include <cop/wire.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace cop;
using wire::Direction;
using wire::Message;
using wire::Opcode;

namespace {

void write(const fs::path& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

void put32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
}

constexpr Opcode kAll[] = {
    Opcode::BENTRY, Opcode::LOCK,   Opcode::UNLOCK,  Opcode::XMIT,    Opcode::PROBE,   Opcode::ACK,    Opcode::NACK,
    Opcode::BCAST32, Opcode::BCAST64, Opcode::SETBM, Opcode::SETTC,   Opcode::SUMI32,  Opcode::MAXI32, Opcode::MINI32,
    Opcode::OR32,   Opcode::AND32,  Opcode::EXOR32,  Opcode::RSRAM32, Opcode::WSRAM32, Opcode::RMW32,  Opcode::SUMI64,
    Opcode::MAXI64, Opcode::MINI64, Opcode::SUMF,    Opcode::MAXF,    Opcode::MINF,    Opcode::OR64,   Opcode::AND64,
    Opcode::EXOR64, Opcode::RSRAM64, Opcode::WSRAM64, Opcode::RMW64};

Message sample(Opcode op) {
  Message m = wire::make(op, 2, wire::Space::GAS, 5);
  m.addr.chno = 3;
  m.data1 = 0x11223344;
  m.data2 = 0x55667788;
  if (op == Opcode::SETTC || op == Opcode::SETBM) {
    m.set_data64(0b1011);
    m.set_count(2);
  }
  return m;
}

void wire_seeds(const fs::path& dir) {
  for (Opcode op : kAll)
    for (Direction d : {Direction::to_controller, Direction::to_node}) {
      wire::Words w{};
      const int n = wire::encode(sample(op), d, w);
      if (n == 0) continue;
      std::vector<uint8_t> b{uint8_t(d == Direction::to_node ? 1 : 0)};
      for (int i = 0; i < n; ++i) put32(b, w[size_t(i)]);
      write(dir, std::string(wire::opcode_name(op)) + (d == Direction::to_node ? "-to-node" : "-to-controller"), b);
    }
  // A TAS read through Z, a supervisor SAS write, a mask read, under small limits.
  Message tas = wire::make(Opcode::RSRAM32, 1, wire::Space::TAS, wire::Address::tas_tag(1, 3));
  tas.ins.z = true;
  tas.addr.chno = 2;
  Message sas = wire::make(Opcode::WSRAM32, 0, wire::Space::SAS, 1);
  sas.ins.supervisor = true;
  Message mask = wire::make(Opcode::RSRAM64, 0, wire::Space::GAS, 4);
  mask.ins.m = mask.ins.msel_bcast = true;
  int k = 0;
  for (const Message& m : {tas, sas, mask}) {
    wire::Words w{};
    const int n = wire::encode(m, Direction::to_controller, w);
    std::vector<uint8_t> b{uint8_t(2 | (20 << 2))};
    for (int i = 0; i < n; ++i) put32(b, w[size_t(i)]);
    write(dir, "small-limits-" + std::to_string(k++), b);
  }
}

void frame_seeds(const fs::path& dir) {
  using link::EntryKind;
  using link::Frame;
  using link::FrameType;
  // MACed as the link MACs them (cop/link.h "Keys"), under a fixed key.
  link::Key key{};
  for (size_t i = 0; i < key.size(); ++i) key[i] = uint8_t(i * 7 + 1);
  auto emit = [&](const std::string& name, const Frame& f) {
    std::vector<uint8_t> bytes;
    const bool keyed = f.type != FrameType::register_ && f.type != FrameType::challenge && f.type != FrameType::refused;
    link::encode(f, bytes, keyed ? &key : nullptr);
    std::vector<uint8_t> b{0};
    b.insert(b.end(), bytes.begin(), bytes.end());
    write(dir, name, b);
  };
  Frame cmd;
  cmd.type = FrameType::command;
  cmd.channel = 3;
  cmd.tkno = 2;
  cmd.seq = 7;
  cmd.ack = 5;                        // the last in-order reply frame
  cmd.session = 1;
  for (Opcode op : {Opcode::SETTC, Opcode::BENTRY, Opcode::SUMI64, Opcode::RSRAM32, Opcode::WSRAM64, Opcode::LOCK})
    cmd.entries.push_back(link::make_entry(sample(op), Direction::to_controller, EntryKind::command, 7,
                                           uint16_t(cmd.entries.size())));
  emit("command", cmd);
  Frame reply;
  reply.type = FrameType::reply;
  reply.channel = 3;
  reply.cycles = 1234;
  reply.seq = 6;  // the channel's reply stream
  reply.session = 1;
  reply.entries.push_back(link::make_entry(wire::make(Opcode::ACK, 2), Direction::to_node, EntryKind::answer, 7, 0, 10));
  reply.entries.push_back(link::make_entry(sample(Opcode::RSRAM64), Direction::to_node, EntryKind::answer, 7, 1, 20));
  reply.entries.push_back(link::make_entry(sample(Opcode::BCAST64), Direction::to_node, EntryKind::broadcast, 0, 0, 30));
  emit("reply", reply);
  // Compact runs (link.h version 4): a burst's element commands on consecutive words,
  // their ACKs, and the words a broadcast gives each receiver.
  Frame burst = cmd;
  burst.entries.clear();
  for (uint16_t i = 0; i < 6; ++i) {
    Message m = sample(Opcode::SUMI64);
    m.addr.msgtag = 40u + i;
    m.data1 = 100u + i;
    burst.entries.push_back(link::make_entry(m, Direction::to_controller, EntryKind::command, 7, i));
  }
  emit("compact-command", burst);
  Frame runs = reply;
  runs.entries.clear();
  for (uint16_t i = 0; i < 6; ++i)
    runs.entries.push_back(
        link::make_entry(wire::make(Opcode::ACK, 2), Direction::to_node, EntryKind::answer, 7, i, 100 + 5u * i));
  for (uint32_t i = 0; i < 6; ++i) {
    Message m = sample(Opcode::BCAST64);
    m.addr.msgtag = 40u + i;
    m.data2 = i;
    runs.entries.push_back(link::make_entry(m, Direction::to_node, EntryKind::broadcast, 0, 0, 200 + 7u * i));
  }
  emit("compact-reply", runs);
  // Operation identities (link.h version 5): a reduction's elements and the result words
  // with one identity per run, an ACK without.
  Frame ids = reply;
  ids.entries.clear();
  ids.entries.push_back(link::make_entry(wire::make(Opcode::ACK, 2), Direction::to_node, EntryKind::answer, 7, 0, 10));
  for (uint32_t i = 0; i < 4; ++i) {
    Message m = sample(Opcode::SUMI64);
    m.addr.msgtag = 60u + i;
    m.data1 = 7u * i;
    m.op_id = wire::make_identity(3, 0xC0FFEEu + (i / 2));  // two runs: two identities
    ids.entries.push_back(link::make_entry(m, Direction::to_node, EntryKind::broadcast, 0, 0, 300 + 7u * i));
  }
  emit("identity-reply", ids);
  Frame reg;
  reg.type = FrameType::register_;
  reg.channel = 5;
  reg.nonce = 0x5ec2e7d21a3b4c5dull;  // Nc
  emit("register", reg);
  Frame challenge = reg;
  challenge.type = FrameType::challenge;
  challenge.info = {0x11111111u, 0x22222222u, 0x33333333u, 0x44444444u};  // Ns
  emit("challenge", challenge);
  Frame prove = challenge;
  prove.type = FrameType::prove;
  emit("prove", prove);
  Frame ok;
  ok.type = FrameType::registered;
  ok.channel = 5;
  ok.info = {64, 16, 256, 65536};
  ok.nonce = reg.nonce;
  ok.session = 77;
  emit("registered", ok);
  Frame refused;
  refused.type = FrameType::refused;
  refused.channel = 5;
  refused.info[0] = uint32_t(link::Refusal::already_registered);
  refused.text = "channel 5 is held by 127.0.0.1:4000";
  emit("refused", refused);
  for (FrameType t : {FrameType::heartbeat, FrameType::heartbeat_ack, FrameType::bye, FrameType::frame_nack,
                      FrameType::enrol, FrameType::task_end, FrameType::sup_ack, FrameType::ack}) {
    Frame f;
    f.type = t;
    f.channel = 9;
    f.tkno = 4;
    f.seq = 3;
    f.ack = 2;
    f.session = 1;
    if (t == FrameType::enrol) f.nonce = 0x0123456789abcdefull;  // the task's enrolment nonce
    emit(std::string(link::frame_type_name(t)), f);
  }
  // JOIN: a task's job (text) and user (info[2]), the PPN it had + 1 (info[3]).
  Frame join;
  join.type = FrameType::join;
  join.channel = 9;
  join.tkno = 4;
  join.seq = 3;
  join.session = 1;
  join.info = {0, 0, 1000, 2};
  join.text = "slurm:4242";
  emit("join", join);
  // Mode 1: the target writes magic, length and CRC itself (entries reached at once).
  std::vector<uint8_t> raw{1};
  raw.resize(1 + link::kHeaderBytes, 0);
  raw[1 + 5] = uint8_t(FrameType::command);
  raw[1 + 10] = 1;  // one entry
  std::vector<uint8_t> entry(link::kEntryHeaderBytes, 0);
  entry[15] = 2;  // two words
  raw.insert(raw.end(), entry.begin(), entry.end());
  wire::Words w{};
  wire::encode(sample(Opcode::BENTRY), Direction::to_controller, w);
  put32(raw, w[0]);
  put32(raw, w[1]);
  write(dir, "fixup-command", raw);
}

// Controller programs (the operation encoding of controller_fuzz.cpp).
struct Program {
  std::vector<uint8_t> b;
  Program(uint8_t a, uint8_t cfg) : b{a, cfg} {}
  // op 7: a built command: a = opcode index | flags, b = tag/space/ppn, t = tkno/sender.
  Program& built(int ch, uint8_t op_index, uint8_t bb, uint8_t t, uint64_t data = 0) {
    b.insert(b.end(), {7, uint8_t(ch - 1), op_index, bb, t});
    if (op_index % 20 == 4 || op_index % 20 == 5) {
      for (int i = 0; i < 8; ++i) b.push_back(uint8_t(data >> (8 * i)));
    } else {
      b.push_back(uint8_t(data));
      b.push_back(uint8_t(data >> 8));
    }
    return *this;
  }
  Program& op(uint8_t o, int ch, std::vector<uint8_t> rest = {}) {
    b.push_back(o);
    b.push_back(uint8_t(ch - 1));
    b.insert(b.end(), rest.begin(), rest.end());
    return *this;
  }
  Program& words(int ch, const Message& m) {
    wire::Words w{};
    const int n = wire::encode(m, Direction::to_controller, w);
    b.insert(b.end(), {0, uint8_t(ch - 1), uint8_t(n)});
    for (int i = 0; i < n; ++i) put32(b, w[size_t(i)]);
    return *this;
  }
};

// Indexes into controller_fuzz.cpp's kOps.
enum : uint8_t { BENTRY, LOCK, UNLOCK, PROBE, SETTC, SETBM, BCAST32, BCAST64, SUMI32, MAXF, EXOR64, SUMI64,
                 RSRAM32, RSRAM64, WSRAM32, WSRAM64, RMW32, RMW64, XMIT, ACK };

void controller_seeds(const fs::path& dir) {
  // a = 3: 4 channels, 1 partition; cfg 0xE7: 4 task spaces, 2 TAS words, 22 GAS words.
  const uint8_t a = 3, c = 0xE7;
  write(dir, "barrier", Program(a, c).built(1, SETTC, 0, 0, 0b0111).op(3, 1)
                            .built(1, BENTRY, 0, 0).built(2, BENTRY, 0, 0).built(3, BENTRY, 0, 0).op(3, 1).b);
  write(dir, "reduce-bcast", Program(a, c).built(1, SETTC, 1, 0, 0b11).built(1, SETBM, 1, 0, 0b1111)
                                 .op(2, 1).op(2, 1).built(1, SUMI64, 1, 0, 5).built(2, SUMI64, 1, 1, 7).op(3, 1).b);
  write(dir, "maxf", Program(a, c).built(1, SETTC, 2, 0, 0b11).built(1, MAXF, 2, 0, 9).built(2, MAXF, 2, 0, 3).op(3, 1).b);
  write(dir, "broadcast", Program(a, c).built(2, SETBM, 3, 0, 0b1101).built(2, BCAST64, 3, 0, 42).op(3, 1).b);
  write(dir, "lock", Program(a, c).built(1, LOCK, 0, 0).built(2, PROBE, 0, 0).built(1, RMW32, 0x08, 0, 1)
                         .op(3, 1).built(1, UNLOCK, 0, 0).op(3, 1).b);
  write(dir, "ram", Program(a, c).built(1, WSRAM32, 0x01, 1, 77).built(2, RSRAM32, 0x41, 1).built(1, WSRAM64, 0x09, 0, 3)
                        .built(3, RSRAM64, 0x0A, 0).built(1, RMW64, 0x09, 0, 4).op(3, 1).b);
  write(dir, "mask-read", Program(a, c).built(1, SETTC, 4, 0, 0b1010).built(2, RSRAM64 | 0x40, 4, 0x80).op(3, 1).b);
  write(dir, "sas-supervisor", Program(a, c).built(1, WSRAM32 | 0x80, 0x11, 0x40, 0).op(3, 1).b);
  write(dir, "end-task", Program(a, c).built(1, SETTC, 5, 0, 0b11).built(1, BENTRY, 5, 2).op(3, 1)
                             .op(4, 2, {2, 0}).built(2, BENTRY, 5, 0).op(3, 1).b);
  write(dir, "fail-channel", Program(a, c).built(1, SETTC, 6, 0, 0b111).built(1, EXOR64, 6, 0, 1).op(3, 1)
                                 .op(6, 3).op(5, 1).op(2, 1).b);
  write(dir, "xmit-resend", Program(a, c).built(1, PROBE, 0, 0).op(3, 1).built(1, XMIT, 0, 0).built(1, ACK, 0, 0).b);
  write(dir, "mask-in-use", Program(a, c).built(1, SETTC, 0, 0, 0b11).built(2, SETTC, 0, 0, 0b11).op(3, 1).b);
  Message bad = wire::make(Opcode::RSRAM32, 1, wire::Space::GAS, 1000);
  write(dir, "raw-words", Program(a, c).words(1, wire::make(Opcode::LOCK)).words(1, bad).words(2, sample(Opcode::BENTRY))
                              .op(0, 3, {0}).op(3, 1).b);
  write(dir, "sixty-four-channels", Program(0x80, c).built(64, SETTC, 0, 0, ~uint64_t{0}).built(64, BENTRY, 0, 0)
                                        .op(8, 1, {0}).op(3, 1).b);
  write(dir, "partitions", Program(0x63, c).built(1, WSRAM32 | 0x80, 0x12, 0x40, 1).op(3, 1)
                               .built(2, SETTC, 0, 0, 0b11).op(3, 1).b);
  write(dir, "sender-other-task", Program(a, c).built(1, WSRAM32, 0x01, 0x23, 5).op(3, 1).b);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  wire_seeds(dir / "wire");
  frame_seeds(dir / "frame");
  controller_seeds(dir / "controller");
  return 0;
}
