// sim-cop: one simulated node of the COP system. Each node is a SimGrid actor that
// issues the COP commands libcop issues for cop_barrier, cop_reduce and cop_bcast
// (built by cop/lib/commands, the module libcop and the timing model share) on its
// channel's serial link, and waits for what libcop waits for: the barrier exit, the
// reduction result at a root, the broadcast words at a receiver, and the answers
// (ACK/NACK) to its burst. Above 64 nodes the commands carry the X bit and the first
// node of each level-1 controller also sets the level-2 masks (seed 000 ch. V, the X
// bit), as cop/model/scenario_two_level does in-process.
#pragma once

#include <simgrid/s4u.hpp>

#include <cop/wire.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "common/catalog_backend.h"
#include "copbench/backend.h"
#include "lib/commands.h"
#include "simcop/controller_actor.h"
#include "simcop/network.h"

namespace copbench::simcop {

// What every node's actor shares: the system and the harness's meeting point (the
// harness's services take no simulated time).
struct System {
  Network net;
  Mailboxes mail;
  cop::model::Timing timing;
  simgrid::s4u::BarrierPtr meeting;
  std::vector<double> maxima;
};

class SimCopBackend : public baselines::CatalogBackend {
 public:
  SimCopBackend(System& s, int rank) : CatalogBackend("sim-cop"), sys_(s) { rank_ = rank; }

  std::string route() const override { return "simulated COP (SimGrid S4U)"; }
  int ranks() const override { return sys_.net.nodes; }

  void sync() override;
  void max_over_ranks(std::span<double> values) override;

  void barrier() override;
  void reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int root) override;
  void broadcast(std::span<std::byte> buffer, int root) override;
  // The other operations of the live cop backend (baselines/cop), as libcop sends them:
  // ops_casts.cpp (reduce_roots, multicast), ops_shared.cpp (shared words, the ticket
  // lock), ops_gather.cpp (cop_gather, cop_scatter).
  void reduce_roots(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op,
                    std::span<const int> roots) override;
  void multicast(std::span<std::byte> buffer, int root, std::span<const int> members) override;
  void gather(std::span<const std::byte> mine, std::span<std::byte> all, int root) override;
  void scatter(std::span<const std::byte> all, std::span<std::byte> mine, int root) override;
  std::int64_t shared_read(int owner, int index) override;
  std::int64_t shared_fetch_add(int owner, int index, std::int64_t add) override;
  void lock(int lock_id) override;
  void unlock(int lock_id) override;

 private:
  using Burst = cop::commands::Burst;
  int level1() const { return sys_.net.level1_of(rank_); }
  int channel() const { return sys_.net.channel_of(rank_); }
  bool first_of_level1() const { return channel() == 1; }
  // Two levels only: marks the burst's global commands with X and, when `sets_level2`,
  // adds the level-2 masks (tc2, bm2: level-1 controllers; 0 for none) after its LOCK.
  void for_two_levels(Burst& b, cop::wire::Opcode global_op, uint32_t tag, uint64_t tc2, uint64_t bm2,
                      size_t count, bool sets_level2) const;
  void send(const Burst& b);
  // Waits for `n` words of `tag`, `tag`+1, ... (one each) and the answers to the burst sent last.
  std::vector<uint64_t> await_words(uint32_t tag, size_t n);
  void await_answers();
  // Takes the next message of the node's down link (waiting until `need` are queued
  // when none is): whether it is data (into inbox_) rather than an answer.
  bool take_one(size_t need);
  // The node sleeps to the cycle it has the last message it took (links.h).
  void settle() const;
  uint32_t take_tags(uint32_t& cursor, uint32_t first, uint32_t end, size_t n);
  // One reduction burst to the sorted ranks `roots` (cop_reduce's list of roots).
  void reduce_chunk(cop::wire::Opcode op, std::span<uint64_t> words, uint32_t tag, std::span<const int> roots);
  // One broadcast burst from `root` to the channels `members[k]` of each level-1 k
  // (cop_bcast: every channel; cop_mcast: the members').
  void cast_chunk(std::span<uint64_t> words, uint32_t tag, int root, const std::vector<uint64_t>& members);
  void cast(std::span<std::byte> buffer, int root, const std::vector<uint64_t>& members);
  // cop_read/cop_write/cop_rmw (COP_NORMAL) of words offset.. of `owner`'s task address
  // space: the answers' words (RSRAM, RMW: the old values), in order.
  std::vector<uint64_t> tas(cop::wire::Opcode op, int owner, uint32_t offset, std::span<const uint64_t> words);
  // cop_gather's and cop_scatter's check of their arguments: a 2-word MAX reduction to
  // every rank (collectives.cpp, agree).
  void agree(uint64_t descriptor);
  // scatter's staging (ops_gather.cpp).
  void stage_for(std::span<const std::byte> all, size_t block, int root, size_t at, size_t w, size_t first,
                 size_t count);
  void read_staged(std::span<std::byte> mine, int root, size_t at, size_t w, size_t slot);
  void scatter_in_rounds(std::span<const std::byte> all, std::span<std::byte> mine, int root, size_t at);
  // cop_barrier of the sorted ranks `members` (this one among them) on `tag` (not kBarrierTag).
  void barrier_of(std::span<const int> members, uint32_t tag);

  System& sys_;
  std::deque<cop::wire::Message> inbox_;  // data not yet awaited
  std::vector<cop::wire::Message> answers_;
  size_t sent_ = 0;                        // commands of bursts not yet answered
  uint64_t heard_until_ = 0;               // the cycle the node has the last message it took
  uint32_t reduce_cursor_ = kReduceFirst;
  uint32_t cast_cursor_ = kCastFirst;
  std::vector<int> everyone_;      // every rank, in order (agree's roots), once asked for

  static constexpr uint32_t kBarrierTag = 1;
  static constexpr uint32_t kReduceFirst = 1024, kReduceEnd = 32768;
  static constexpr uint32_t kCastFirst = 32768, kCastEnd = 65536;
};

}  // namespace copbench::simcop
