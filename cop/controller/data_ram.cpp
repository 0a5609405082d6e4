#include "controller/data_ram.h"

#include <algorithm>
#include <bit>

namespace cop::controller {

DataRam::DataRam(int channels, uint32_t tasks_per_channel, uint32_t tas_words, uint32_t gas_words,
                 uint32_t sas_words, int partitions)
    : channels_(channels),
      tasks_(tasks_per_channel),
      tas_words_(tas_words),
      gas_words_(gas_words),
      partitions_(partitions),
      cas_(std::size_t(partitions) * std::size_t(channels) * tasks_per_channel * tas_words, 0),
      gas_(std::size_t(partitions) * gas_words, 0),
      sas_(sas_words, 0),
      tc_(std::size_t(partitions) * gas_words),
      bm_(std::size_t(partitions) * gas_words),
      joined_(std::size_t(partitions) * 64),
      tc_accessed_(std::size_t(partitions) * ((std::size_t{gas_words} + 63) / 64), 0),
      bm_accessed_(tc_accessed_.size(), 0),
      accessed_words_((std::size_t{gas_words} + 63) / 64) {}

// A bitmap word's bits [lo, lo+take) (take 1..64).
static uint64_t bits_of(uint64_t lo, uint64_t take) {
  return (take == 64 ? ~uint64_t{0} : ((uint64_t{1} << take) - 1)) << lo;
}

bool DataRam::any_in(const std::vector<uint64_t>& bits, uint8_t ppn, uint32_t first, uint32_t n) const {
  const uint64_t end = uint64_t{first} + n;
  for (uint64_t w = first; w < end;) {
    const uint64_t lo = w & 63, take = std::min<uint64_t>(64 - lo, end - w);
    if (bits[accessed_index(ppn, uint32_t(w))] & bits_of(lo, take)) return true;
    w += take;
  }
  return false;
}

void DataRam::set_bits(std::vector<uint64_t>& bits, uint8_t ppn, uint32_t first, uint32_t n) {
  const uint64_t end = uint64_t{first} + n;
  for (uint64_t w = first; w < end;) {
    const uint64_t lo = w & 63, take = std::min<uint64_t>(64 - lo, end - w);
    bits[accessed_index(ppn, uint32_t(w))] |= bits_of(lo, take);
    w += take;
  }
}

bool DataRam::set_bm_range(uint8_t ppn, uint32_t first, uint32_t n, const BmEntry& e) {
  if (bm_accessed_in(ppn, first, n)) return false;
  const BmEntry v = e;  // a local: the fill's stores cannot alias it (else reread every entry)
  std::fill_n(bm_.begin() + std::ptrdiff_t(gas_index(ppn, first)), n, v);
  if (e.accessed) set_bits(bm_accessed_, ppn, first, n);
  return true;
}

bool DataRam::set_tc_range(uint8_t ppn, uint32_t first, uint32_t n, const TcEntry& e) {
  if (tc_accessed_in(ppn, first, n)) return false;
  // None accessed: none joined before, and `e` (a fresh operation's, pending == mask) none after.
  if (joined_set(e) != 0) {
    Gathered g(ppn);
    for (uint32_t i = first; i < first + n; ++i) update_tc(i, [&](TcEntry& t) { t = e; }, g);
    apply(g);
    return true;
  }
  const TcEntry v = e;  // a local: the fill's stores cannot alias it (else reread every entry)
  std::fill_n(tc_.begin() + std::ptrdiff_t(gas_index(ppn, first)), n, v);
  if (e.accessed) set_bits(tc_accessed_, ppn, first, n);
  return true;
}

bool DataRam::accessed_bits_hold() const {
  for (int p = 0; p < partitions_; ++p)
    for (uint32_t w = 0; w < gas_words_; ++w)
      if (tc(uint8_t(p), w).accessed != tc_accessed_in(uint8_t(p), w, 1) ||
          bm(uint8_t(p), w).accessed != bm_accessed_in(uint8_t(p), w, 1))
        return false;
  return true;
}

bool DataRam::joined_counts_hold() const {
  std::vector<uint32_t> counts(joined_.size(), 0);
  for (int p = 0; p < partitions_; ++p)
    for (uint32_t w = 0; w < gas_words_; ++w)
      for (uint64_t m = joined_set(tc(uint8_t(p), w)); m != 0; m &= m - 1) {
        const std::size_t k = std::size_t(p) * 64 + std::size_t(std::countr_zero(m));
        if (w < joined_[k].lo || w >= joined_[k].hi) return false;  // outside its range
        counts[k]++;
      }
  for (int p = 0; p < partitions_; ++p)
    for (uint32_t w = 0; w < gas_words_; ++w)
      if (tc(uint8_t(p), w).accessed != tc_accessed_in(uint8_t(p), w, 1)) return false;
  for (std::size_t k = 0; k < counts.size(); ++k)
    if (counts[k] != joined_[k].count || (counts[k] == 0 && (joined_[k].lo != UINT32_MAX || joined_[k].hi != 0)))
      return false;
  return true;
}

std::size_t DataRam::tas_index(uint8_t ppn, int channel, uint32_t task, uint32_t offset) const {
  return ((std::size_t{ppn} * std::size_t(channels_) + std::size_t(channel - 1)) * tasks_ + task) * tas_words_ + offset;
}

uint64_t& DataRam::tas(uint8_t ppn, int channel, uint32_t task, uint32_t offset) {
  return cas_[tas_index(ppn, channel, task, offset)];
}

uint64_t DataRam::tas(uint8_t ppn, int channel, uint32_t task, uint32_t offset) const {
  return cas_[tas_index(ppn, channel, task, offset)];
}

void DataRam::clear_task(uint8_t ppn, int channel, uint32_t task) {
  const auto first = cas_.begin() + std::ptrdiff_t(tas_index(ppn, channel, task, 0));
  std::fill(first, first + std::ptrdiff_t(tas_words_), uint64_t{0});
}

}  // namespace cop::controller
