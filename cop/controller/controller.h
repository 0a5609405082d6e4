// The coordination processor (seed 000, ch. IV-V) as a transport-independent core.
//
// Commands arrive per channel (receive), set that channel's DATA_RDY, and are
// serviced one at a time (step) in the order of the round-robin poll counter;
// LOCK stops the round robin at the locking channel until its UNLOCK. Every
// serviced command yields its link-level ACK (or a NACK with an error code) to
// the sender plus whatever data the operation sends to nodes: RSRAM/RMW answers,
// reduction results and barrier exits broadcast through the broadcast mask RAM,
// BCAST data. The daemon (copd), the tests and the timing model all drive this
// one core; the core also keeps a modelled-hardware clock (cycles) that charges
// Hall's costs for what it services.
#pragma once

#include <cop/wire.h>

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "controller/data_ram.h"
#include "model/hardware.h"

namespace cop::controller {

struct Config {
  int channels = wire::kChannels;
  uint32_t tasks_per_channel = 16;  // task address spaces in each channel address space
  uint32_t tas_words = 256;         // 64-bit words in one task address space
  uint32_t gas_words = 65536;       // global address space (one TC and BM entry per word)
  uint32_t sas_words = 128;         // system address space: [0] CNTNO, [1..64] channel PPN
  int partitions = 4;               // PPN values in use (each has its own CAS, GAS and masks)
  uint8_t cntno = 0;

  wire::Limits limits() const {
    return wire::Limits{channels, tasks_per_channel, tas_words, gas_words, sas_words};
  }
};

// A message going out to nodes: one channel for answers, a mask for broadcasts.
struct Delivery {
  uint64_t channels = 0;  // bit (c-1) set for channel c
  wire::Message msg;
  uint64_t at_cycle = 0;  // modelled time at which the receiving nodes have it
  bool link_level = false;  // ACK/NACK/resend, produced by the channel interface

  bool to(int channel) const { return (channels >> (channel - 1)) & 1u; }
};

inline uint64_t channel_bit(int channel) { return uint64_t{1} << (channel - 1); }

// Who sent a command, as the link established it (never what the command's own
// fields claim): the channel's driver may send supervisor (U/S) commands; a
// task may act only as the task number its driver enrolled it under.
struct Sender {
  bool supervisor = false;
  uint16_t tkno = 0;  // the enrolled task (meaningless when supervisor)
};

struct Stats {
  uint64_t serviced = 0;
  uint64_t nacks = 0;
  uint64_t broadcasts = 0;
};

class Controller {
 public:
  explicit Controller(Config config = {}, model::Timing timing = {});

  const Config& config() const { return config_; }
  const model::Timing& timing() const { return timing_; }

  // A command fully received on `channel` (1..channels): it waits for service
  // from `ready_at` (modelled cycles) on. Link-level messages (ACK, NACK, XMIT)
  // are handled at once by the channel interface and may produce a resend.
  void receive(int channel, const wire::Message& msg, uint64_t ready_at, std::vector<Delivery>& out);
  void receive(int channel, const wire::Message& msg, std::vector<Delivery>& out) {
    receive(channel, msg, cycles_, out);
  }
  // The same, for a command whose sender the link authenticated: a command
  // claiming more than `from` may (U/S set by a task, another task's number)
  // is refused with NACK protection and changes nothing.
  void receive(int channel, const wire::Message& msg, uint64_t ready_at, Sender from, std::vector<Delivery>& out);
  // Raw words from the link: malformed ones are answered with a NACK at once.
  void receive_words(int channel, std::span<const uint32_t> words, std::vector<Delivery>& out);

  bool data_ready(int channel) const { return !queue(channel).empty(); }
  // Services the next command in poll order (only the locked channel's while
  // a channel is locked). Returns false when there is nothing it may service.
  bool step(std::vector<Delivery>& out);
  // Steps until nothing is serviceable; returns how many commands it serviced.
  int run(std::vector<Delivery>& out);

  int poll_counter() const { return poll_; }
  int locked_channel() const { return locked_; }
  uint64_t cycles() const { return cycles_; }
  const Stats& stats() const { return stats_; }

  // Inspection, for tests and the daemon's status output.
  const DataRam& ram() const { return ram_; }
  uint8_t channel_partition(int channel) const;
  // Forgets a channel's queued commands and releases its lock (its node is gone).
  void reset_channel(int channel);
  // The channel's node is gone for good (copd's lease on it ran out): besides
  // reset_channel, every global operation still waiting for its contribution
  // can never complete, so the channels taking part or waiting for the result
  // get a NACK link_down for that tag and the mask entries are freed. Returns
  // how many operations were failed.
  int fail_channel(int channel, std::vector<Delivery>& out);
  // Task `tkno` of `channel` ended (its driver saw it exit or die): its pending
  // operations fail with an error to the others, a LOCK it holds is released,
  // its task address space is cleared and the mask entries it set are freed,
  // so a task that gets the number next starts clean. Returns how many global
  // operations were failed.
  int end_task(int channel, uint16_t tkno, std::vector<Delivery>& out);

 private:
  struct Pending {
    wire::Message msg;
    uint64_t ready_at;
  };

  std::deque<Pending>& queue(int channel) { return queues_[static_cast<size_t>(channel - 1)]; }
  const std::deque<Pending>& queue(int channel) const { return queues_[static_cast<size_t>(channel - 1)]; }
  int next_channel();
  void service(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  wire::Error execute(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  wire::Error data_ram_access(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  wire::Error contribute(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  wire::Error set_mask(int channel, const wire::Message& msg, bool broadcast_ram);
  wire::Error broadcast(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  wire::Error check_mask(uint64_t mask, uint8_t ppn) const;
  void complete(uint8_t ppn, uint32_t tag, const wire::Message& op, std::vector<Delivery>& out);
  void emit(uint64_t mask, const wire::Message& msg, std::vector<Delivery>& out);
  // Keeps what went last to each channel, for the interface's resend (XMIT).
  void remember(uint64_t mask, const wire::Message& msg);
  void acknowledge(int channel, const wire::Message& msg, wire::Error error, std::vector<Delivery>& out);
  uint64_t cost(const wire::Message& msg) const;

  Config config_;
  model::Timing timing_;
  DataRam ram_;
  std::vector<std::deque<Pending>> queues_;
  std::vector<wire::Message> last_sent_;  // per channel, for XMIT
  std::vector<bool> has_last_sent_;
  int poll_ = 0;    // channel serviced last (0 before the first)
  int locked_ = 0;  // channel holding the lock, 0 when the round robin runs
  uint64_t cycles_ = 0;
  Stats stats_;
};

}  // namespace cop::controller
