#include "controller/data_ram.h"

#include <algorithm>

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
      bm_(std::size_t(partitions) * gas_words) {}

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
