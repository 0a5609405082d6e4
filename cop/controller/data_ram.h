// The controller's three RAM banks (seed 000, ch. V "COP Controller Address Spaces").
//
// Data RAM: per partition (PPN) a channel address space (CAS1..CAS64, each split
// into task address spaces by TKNO) and a global address space (GAS); one
// system address space (SAS) shared by all partitions and written only in
// supervisor mode. Terminal-count mask RAM and broadcast mask RAM: one entry
// per GAS word and partition, each with its accessed bit.
//
// The accessors do not check their arguments: the controller range-checks
// every field of a command (wire::validate and its own partition check)
// before it indexes these banks.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cop::controller {

// Which task set a mask entry (SETTC/SETBM), so that the entry can be freed
// when that task ends before its operation completes.
struct SetBy {
  uint8_t channel = 0;      // 0: nobody (the entry is idle)
  uint16_t tkno = 0;
  bool supervisor = false;  // set by the channel's driver, not by a task
};

// (The 64-bit fields first: 48 bytes, not 56, a burst's SETTC writes thousands.)
struct TcEntry {
  uint64_t mask = 0;     // channels that take part
  uint64_t pending = 0;  // channels yet to contribute
  uint64_t ended = 0;    // level 2: level-1s that ended it themselves (NACK mismatch up): not told again
  // The first contribution's operation identity (wire::Message::op_id, with `op`): a
  // contribution of another identity (another generation, job, type or count: the tasks
  // are out of step) is refused as one of another opcode is; the result carries it.
  uint64_t op_id = 0;
  bool accessed = false; // set by SETTC, reset when every channel has contributed
  bool has_value = false;  // a contribution (or initialising WSRAM) has arrived
  SetBy set_by;
  bool up = false;         // contributions carry X: the combined one goes to the level 2
  bool forwarded = false;  // sent up; the entry stays accessed until the result comes down
  bool has_op = false;     // the first contribution's opcode is in `op`
  bool mismatch = false;   // a later contribution had another opcode: no result (NACK mismatch)
  uint8_t op = 0;
};

struct BmEntry {
  uint64_t mask = 0;      // channels that receive the result
  bool accessed = false;  // set by SETBM, reset when the result has been broadcast
  SetBy set_by;
  uint64_t op_id = 0;     // the SETBM's operation identity: a NACK voiding the broadcast carries it
};

class DataRam {
 public:
  DataRam(int channels, uint32_t tasks_per_channel, uint32_t tas_words, uint32_t gas_words,
          uint32_t sas_words, int partitions);

  uint64_t& tas(uint8_t ppn, int channel, uint32_t task, uint32_t offset);
  uint64_t tas(uint8_t ppn, int channel, uint32_t task, uint32_t offset) const;
  uint64_t& gas(uint8_t ppn, uint32_t offset) { return gas_[gas_index(ppn, offset)]; }
  uint64_t gas(uint8_t ppn, uint32_t offset) const { return gas_[gas_index(ppn, offset)]; }
  uint64_t& sas(uint32_t offset) { return sas_[offset]; }
  uint64_t sas(uint32_t offset) const { return sas_[offset]; }
  // A terminal-count entry is read here and changed only through update_tc, which keeps
  // the count of entries each channel has joined (joined()) with it.
  const TcEntry& tc(uint8_t ppn, uint32_t offset) const { return tc_[gas_index(ppn, offset)]; }
  // Changes the entry with `change(TcEntry&)` (not nested: one change of an entry at a time).
  template <class Change>
  void update_tc(uint8_t ppn, uint32_t offset, Change&& change) {
    Gathered g(ppn);
    update_tc(offset, change, g);
    apply(g);
  }
  // The joined counts' changes of a loop over many entries of one partition, gathered and
  // applied once (apply): the same counts as one by one (the changes are sums), the ranges
  // holding the words (each grows by the words joined; emptied when its count is 0). Runs of
  // the same channels' changes take one entry here: a burst's elements, one after another
  // (a count changed in memory on every element waited for its last change).
  struct Gathered {
    explicit Gathered(uint8_t p) : ppn(p) {}
    uint8_t ppn;
    uint64_t up = 0, down = 0;   // channels joining (one entry each), leaving
    uint32_t ups = 0, downs = 0;  // how many entries so
    uint32_t lo = UINT32_MAX, hi = 0;  // the words of the ups
  };
  // update_tc within a loop: nothing may read joined() before apply(g).
  template <class Change>
  void update_tc(uint32_t offset, Change&& change, Gathered& g) {
    TcEntry& e = tc_[gas_index(g.ppn, offset)];
    const uint64_t before = joined_set(e);
    change(e);
    const uint64_t after = joined_set(e);
    if (const uint64_t up = after & ~before; up != 0) {
      if (up != g.up) flush_ups(g);
      g.up = up;
      g.ups++;
      g.lo = std::min(g.lo, offset);
      g.hi = std::max(g.hi, offset + 1);
    }
    if (const uint64_t down = before & ~after; down != 0) {
      if (down != g.down) flush_downs(g);
      g.down = down;
      g.downs++;
    }
    set_bit(tc_accessed_, g.ppn, offset, e.accessed);
  }
  void apply(Gathered& g) {
    flush_ups(g);
    flush_downs(g);
  }
  // Whether any of the entries [first, first+n) is accessed (read from a bit per entry).
  bool tc_accessed_in(uint8_t ppn, uint32_t first, uint32_t n) const { return any_in(tc_accessed_, ppn, first, n); }
  // SETTC's all or nothing (ch. V): entries [first, first+n) set to `e` when none of them
  // is accessed; false, nothing changed, when one is.
  bool set_tc_range(uint8_t ppn, uint32_t first, uint32_t n, const TcEntry& e);
  // The channels that have joined the operation in progress on an entry: named in its mask,
  // and contributed already (the accessed bits, ch. V: such a channel's next command on the
  // word belongs to the next operation and waits, Controller::repeats_in_progress).
  static uint64_t joined_set(const TcEntry& e) { return e.accessed ? e.mask & ~e.pending : 0; }
  // The entries of partition `ppn` channel `channel` (1..64) has joined: how many, and
  // words [lo, hi) that hold them all (not the least such: it grows with each one joined and
  // is emptied when the count is back to 0). The poll counter reads only the entries of a
  // command's words inside it (none, nearly always: issue 36).
  struct Joined {
    uint32_t count = 0;
    uint32_t lo = UINT32_MAX, hi = 0;
  };
  const Joined& joined(uint8_t ppn, int channel) const { return joined_[std::size_t{ppn} * 64 + std::size_t(channel - 1)]; }
  // Whether every count and range is what the entries say (a test's check: every entry read).
  bool joined_counts_hold() const;
  // A broadcast-mask entry is read here and changed only through update_bm and set_bm_range,
  // which keep its accessed bit beside it (bm_accessed_in: SETBM's all-or-nothing check 64
  // entries a word, issue 36).
  const BmEntry& bm(uint8_t ppn, uint32_t offset) const { return bm_[gas_index(ppn, offset)]; }
  template <class Change>
  void update_bm(uint8_t ppn, uint32_t offset, Change&& change) {
    BmEntry& e = bm_[gas_index(ppn, offset)];
    change(e);
    set_bit(bm_accessed_, ppn, offset, e.accessed);
  }
  // Whether any of the entries [first, first+n) is accessed (read from a bit per entry).
  bool bm_accessed_in(uint8_t ppn, uint32_t first, uint32_t n) const { return any_in(bm_accessed_, ppn, first, n); }
  // SETBM's all or nothing (ch. V): entries [first, first+n) set to `e` when none of them
  // is accessed; false, nothing changed, when one is.
  bool set_bm_range(uint8_t ppn, uint32_t first, uint32_t n, const BmEntry& e);
  // Whether every TC and BM accessed bit is its entry's (a test's check: every entry read).
  bool accessed_bits_hold() const;

  int partitions() const { return partitions_; }
  // Zeroes one task address space (every word of task `task` of `channel` in partition `ppn`).
  void clear_task(uint8_t ppn, int channel, uint32_t task);

 private:
  std::size_t gas_index(uint8_t ppn, uint32_t offset) const { return std::size_t{ppn} * gas_words_ + offset; }
  std::size_t tas_index(uint8_t ppn, int channel, uint32_t task, uint32_t offset) const;

  int channels_;
  uint32_t tasks_, tas_words_, gas_words_;
  int partitions_;
  std::vector<uint64_t> cas_, gas_, sas_;
  std::vector<TcEntry> tc_;
  std::vector<BmEntry> bm_;
  std::vector<Joined> joined_;  // per (partition, channel): entries joined (joined())
  std::vector<uint64_t> tc_accessed_;  // per partition, a bit per entry: its accessed bit
  std::vector<uint64_t> bm_accessed_;  // the same for the broadcast-mask entries
  std::size_t accessed_words_;         // bitmap words per partition
  std::size_t accessed_index(uint8_t ppn, uint32_t offset) const { return std::size_t{ppn} * accessed_words_ + (offset >> 6); }
  void set_bit(std::vector<uint64_t>& bits, uint8_t ppn, uint32_t offset, bool on) {
    uint64_t& word = bits[accessed_index(ppn, offset)];
    const uint64_t bit = uint64_t{1} << (offset & 63);
    word = on ? word | bit : word & ~bit;
  }
  bool any_in(const std::vector<uint64_t>& bits, uint8_t ppn, uint32_t first, uint32_t n) const;
  void set_bits(std::vector<uint64_t>& bits, uint8_t ppn, uint32_t first, uint32_t n);
  // The counts end exact (modulo 2^32: a leaving flushed before a joining of the same channel
  // still gathered may pass below 0 in between). A range is emptied only where the count is
  // the channel's true count and 0: after its ups are in (flush_ups: downs still gathered
  // only make it larger), or with no up of it gathered (flush_downs).
  void flush_ups(Gathered& g) {
    Joined* j = joined_.data() + std::size_t{g.ppn} * 64;
    for (uint64_t m = g.up; m != 0; m &= m - 1) {
      Joined& c = j[std::countr_zero(m)];
      c.count += g.ups;
      c.lo = std::min(c.lo, g.lo);
      c.hi = std::max(c.hi, g.hi);
      if (c.count == 0) c = Joined{};
    }
    g.up = 0;
    g.ups = 0;
    g.lo = UINT32_MAX;
    g.hi = 0;
  }
  void flush_downs(Gathered& g) {
    Joined* j = joined_.data() + std::size_t{g.ppn} * 64;
    for (uint64_t m = g.down; m != 0; m &= m - 1)
      if (Joined& c = j[std::countr_zero(m)]; (c.count -= g.downs) == 0 && !(g.up & (m & -m))) c = Joined{};
    g.down = 0;
    g.downs = 0;
  }
};

}  // namespace cop::controller
