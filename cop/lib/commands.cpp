// The COP messages of each libcop call (layout: commands.h; fields: cop/wire.h).
#include "lib/commands.h"

#include <algorithm>

namespace cop::commands {

using wire::Message;
using wire::Opcode;
using wire::Space;

Message command(const Sender& s, Opcode op, Space space, uint32_t tag) {
  Message m = wire::make(op, s.tkno, space, tag);
  m.ins.ppn = s.ppn;
  // The call's identity on what the controller matches by it (contributions, broadcast
  // data, the broadcast mask whose NACK names it); not on LOCK/UNLOCK, SETTC, TAS accesses.
  const bool global = op == Opcode::BENTRY || op == Opcode::BCAST32 || op == Opcode::BCAST64 ||
                      op == Opcode::SETBM || wire::is_reduction(op);
  if (global && space == Space::GAS) m.op_id = s.op_id;
  return m;
}

Message mask_command(const Sender& s, Opcode op, uint32_t tag, uint64_t mask, int count) {
  Message m = command(s, op, Space::GAS, tag);
  m.set_data64(mask);
  m.set_count(count);  // Figure 14's count: the TKNO field carries COUNT-1
  return m;
}

void append_masks(Burst& b, const Sender& s, Opcode op, uint32_t tag, uint64_t mask, uint64_t count) {
  const uint64_t most = uint64_t(wire::kMaxCount);
  for (uint64_t done = 0; done < count; done += most)
    b.push_back(mask_command(s, op, tag + uint32_t(done), mask, int(std::min(most, count - done))));
}

void append_elements(Burst& b, const Sender& s, Opcode op, uint32_t tag, std::span<const uint64_t> words) {
  // The elements differ only in their word and value (a burst, seed 000 ch. VI): the
  // command is made once and its MSGTAG and payload set per element.
  // (Each made from the unchanged first and then set in place: a copy of a message just
  // changed field by field stalled on its own stores.)
  // The payload's width (wire::set_payload) is the opcode's, so it is decided once, not per
  // element (a call per element was a tenth of building a 16 KB burst, issue 36).
  const Message first = command(s, op, Space::GAS, tag);
  b.reserve(b.size() + words.size() + 1);
  const bool wide = wire::is_64bit(op);
  for (size_t i = 0; i < words.size(); ++i) {
    Message& m = b.emplace_back(first);
    m.addr.msgtag = tag + uint32_t(i);
    if (wide) m.set_data64(words[i]);  // as wire::set_payload writes it
    else m.data1 = uint32_t(words[i]);
  }
}

Burst barrier(const Sender& s, uint32_t tag, uint64_t mask) {
  return {command(s, Opcode::LOCK), mask_command(s, Opcode::SETTC, tag, mask),
          mask_command(s, Opcode::SETBM, tag, mask), command(s, Opcode::BENTRY, Space::GAS, tag),
          command(s, Opcode::UNLOCK)};
}

Burst reduction(const Sender& s, Opcode op, uint32_t tag, std::span<const uint64_t> words, uint64_t tc, uint64_t bm) {
  Burst b{command(s, Opcode::LOCK)};
  append_masks(b, s, Opcode::SETTC, tag, tc, words.size());
  if (bm) append_masks(b, s, Opcode::SETBM, tag, bm, words.size());
  append_elements(b, s, op, tag, words);
  b.push_back(command(s, Opcode::UNLOCK));
  return b;
}

Burst broadcast(const Sender& s, Opcode op, uint32_t tag, std::span<const uint64_t> words, uint64_t mask) {
  Burst b{command(s, Opcode::LOCK)};
  append_masks(b, s, Opcode::SETBM, tag, mask, words.size());
  append_elements(b, s, op, tag, words);
  b.push_back(command(s, Opcode::UNLOCK));
  return b;
}

namespace {
template <typename Make>
std::vector<ArrayBurst> split(uint32_t tag, std::span<const uint64_t> words, size_t per_burst, Make make) {
  std::vector<ArrayBurst> out;
  const size_t step = std::max<size_t>(1, per_burst);
  for (size_t at = 0; at < words.size(); at += step) {
    const size_t n = std::min(step, words.size() - at);
    const uint32_t t = tag + uint32_t(at);
    out.push_back(ArrayBurst{make(t, words.subspan(at, n)), t, uint32_t(n)});
  }
  return out;
}
}  // namespace

std::vector<ArrayBurst> reduction_bursts(const Sender& s, Opcode op, uint32_t tag, std::span<const uint64_t> words,
                                         uint64_t tc, uint64_t bm, size_t per_burst) {
  return split(tag, words, per_burst,
               [&](uint32_t t, std::span<const uint64_t> w) { return reduction(s, op, t, w, tc, bm); });
}

std::vector<ArrayBurst> broadcast_bursts(const Sender& s, Opcode op, uint32_t tag, std::span<const uint64_t> words,
                                         uint64_t mask, size_t per_burst) {
  return split(tag, words, per_burst,
               [&](uint32_t t, std::span<const uint64_t> w) { return broadcast(s, op, t, w, mask); });
}

std::vector<FramedBursts> pack(const std::vector<ArrayBurst>& bursts, size_t most, size_t budget,
                               const std::function<size_t(const Burst&)>& size) {
  std::vector<FramedBursts> frames;
  pack_into(frames, bursts, most, budget, size);
  return frames;
}

void pack_into(std::vector<FramedBursts>& frames, const std::vector<ArrayBurst>& bursts, size_t most, size_t budget,
               const std::function<size_t(const Burst&)>& size) {
  size_t made = 0;  // frames of this call (those after them in `frames` are the call before's)
  size_t used = 0;  // of the budget, by the last frame's bursts
  size_t left = 0;  // commands of the bursts not yet packed
  for (const ArrayBurst& b : bursts) left += b.commands.size();
  for (const ArrayBurst& b : bursts) {
    const size_t cost = size ? size(b.commands) : 0;
    if (made == 0 || frames[made - 1].commands.size() + b.commands.size() > most || (size && used + cost > budget)) {
      if (made == frames.size()) frames.emplace_back();
      FramedBursts& f = frames[made++];
      f.commands.clear();
      f.first_tag = b.tag;
      f.commands.reserve(std::min(std::max(most, b.commands.size()), left));  // grown once
      used = 0;
    }
    left -= b.commands.size();
    used += cost;
    FramedBursts& f = frames[made - 1];
    f.commands.insert(f.commands.end(), b.commands.begin(), b.commands.end());
    f.words = b.tag + b.count - f.first_tag;
  }
  frames.resize(made);
}

Burst tas_access(const Sender& s, Opcode op, bool floating, const TasTarget& at, std::span<const uint64_t> words,
                 bool lock, bool unlock) {
  Burst b;
  if (lock) b.push_back(command(s, Opcode::LOCK));
  const bool carries_value = op != Opcode::RSRAM32 && op != Opcode::RSRAM64;
  for (size_t i = 0; i < words.size(); ++i) {
    Message m = command(s, op, Space::TAS, wire::Address::tas_tag(at.ttkno, at.offset + uint32_t(i)));
    m.ins.z = true;  // the address word's CHNO names the channel whose space is accessed
    m.ins.m = floating;
    m.addr.chno = at.chno;
    if (carries_value) wire::set_payload(m, words[i]);
    b.push_back(m);
  }
  if (unlock) b.push_back(command(s, Opcode::UNLOCK));
  return b;
}

}  // namespace cop::commands
