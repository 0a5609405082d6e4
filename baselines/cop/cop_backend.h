// The cop backend: a PVM program using libcop (seed 000 ch. V), as the thesis's COP
// programs are. Tids and the group come from PVM; the first task (started by `copbench
// run`, whose cop_master launcher gives it a pvmd and COP stack) is rank 0 and pvm_spawns the others, each bound to its
// emulated node's channel driver (COP_DRIVER) before cop_mytid. Routes are libcop's
// access modes: direct (the channel window mapped into the task) and normal (read/write
// requests through copdrv).
//
// Where the data lives on the controller (cop.h):
//   GAS tag 1           the harness's sync barrier; tag 2 the measured barrier
//   GAS 1024..32767     reduce operands, a new range per call (see Tags below)
//   GAS 32768..65535    broadcast / multicast data, likewise
//   TAS words 0..63     this task's shared words (Backend::kSharedWords)
//   TAS words 64..71    on rank 0: the ticket locks' (next ticket, now serving) pairs
//   TAS words 72, 73    point-to-point (send/recv, point.cpp): the sender's ready flag,
//                       the receiver's taken flag
//   TAS words 80..255   gather / scatter staging (cop_gather / cop_scatter), and the
//                       point-to-point message area
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cop/floor.h"
#include "cop/tas_layout.h"
#include "copbench/backend.h"
#include "pvm/tasks.h"

namespace copbench::cop {

// PVM messages carry only the setup and the harness's max_over_ranks (pvm/tasks.h's
// tags). COP has no point-to-point operation of its own: echo is the thesis's
// "point-to-point message using cop_write & cop_read" (Table IV) on task address
// spaces (point.cpp), never PVM's messages.

// Global address space layout.
inline constexpr int kSyncBarrierTag = 1;
inline constexpr int kBarrierTag = 2;
inline constexpr std::uint32_t kReduceFirst = 1024, kReduceEnd = 32768;
inline constexpr std::uint32_t kCastFirst = 32768, kCastEnd = 65536;
// Task address space layout: cop/tas_layout.h (shared with sim-cop).
using cop_tas::kLockWords;
using cop_tas::kStageEnd;
using cop_tas::kStageFirst;
// Point-to-point (point.cpp): the flags, and the message in the staging words.
inline constexpr int kReadyWord = 72, kTakenWord = 73, kMessageFirst = kStageFirst;

struct CopOptions {
  std::string route = "direct";  // libcop access mode
  int nodes = 1;           // copdrv channels used (one per node)
  int tasks_per_node = 1;  // tasks sharing each node's channel: ranks k*T .. k*T+T-1 on node k
  int timeout_s = 0;
  std::string driver;                 // this task's COP_DRIVER ("" = keep the environment's)
  std::vector<std::string> drivers;   // rank 0: every rank's COP_DRIVER ("" entries: keep)
  std::vector<std::string> spawn_args;
};

class CopBackend final : public pvm::PvmTaskBackend {
 public:
  CopBackend() : PvmTaskBackend("cop") {}
  // Enrolls, spawns (rank 0) or receives the rank table, joins the group and binds the
  // channel. On failure it throws and kills nothing: the worker reports the error first
  // (so a rank's message reaches the error file before it takes the others down), then
  // calls kill_all().
  void start(const CopOptions& options);
  ~CopBackend() override;

  std::string route() const override { return route_; }
  // cop_backend.cpp: the thesis's barrier before each timed collective, and the
  // controller's cycle clock (seed 000 ch. VI).
  void sync() override;
  std::optional<double> modelled_clock() override;

  // barrier.cpp, reduce.cpp: cop_barrier, cop_reduce (one root or several).
  void barrier() override;
  void reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int root) override;
  void reduce_roots(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op,
                    std::span<const int> roots) override;
  // broadcast.cpp: cop_bcast, cop_mcast, each on a fresh GAS range.
  void broadcast(std::span<std::byte> buffer, int root) override;
  void multicast(std::span<std::byte> buffer, int root, std::span<const int> members) override;
  // gather_scatter.cpp: cop_gather, cop_scatter through the TAS staging words.
  void gather(std::span<const std::byte> mine, std::span<std::byte> all, int root) override;
  void scatter(std::span<const std::byte> all, std::span<std::byte> mine, int root) override;
  // point.cpp: echo's send and recv as cop_write into the sender's own task address
  // space and cop_read by the receiver, a flag word for readiness (Table IV).
  void send(int to, std::span<const std::byte> message) override;
  void recv(int from, std::span<std::byte> message) override;
  // The applications keep cop_mcast for their messages: a burst-framed multicast moves
  // an array in a few frames, the flag-word protocol a 176-word piece per round trips.
  bool p2p_by_multicast() const override { return offers(Op::multicast); }

  // shared.cpp: the ticket lock and the task address spaces (cop_read / cop_rmw).
  void lock(int lock_id) override;
  void unlock(int lock_id) override;
  std::int64_t shared_read(int owner, int index) override;
  std::int64_t shared_fetch_add(int owner, int index, std::int64_t add) override;

  // floor.cpp: the floor of the emulation (floor.h), its controller started by rank 0 at
  // the first floor call and stopped by PID at the end; copd's and its CPU on rank 0; the
  // COP settings that change what the emulation measures.
  void floor_barrier() override;
  void floor_reduce(const void* in, void* out, std::size_t count, Elem elem, int root) override;
  void floor_broadcast(std::span<std::byte> buffer, int root) override;
  std::optional<double> floor_cpu_seconds() override;
  std::optional<double> controller_cpu_seconds() override;
  std::map<std::string, std::string> context_settings() override;

  void kill_all();

 private:
  struct FloorSizes {
    std::size_t up = 0, answer = 0, result = 0;  // datagram bytes: sent, answered with, received (broadcast)
  };
  void ensure_floor();
  void stop_floor();
  const FloorSizes& floor_sizes(floor::Kind kind, std::size_t bytes, bool root);
  void floor_send(const floor::Header& h, const void* data, std::size_t size);
  const floor::Header& floor_wait(std::uint32_t seq);
  int floor_fd_ = -1;
  int floor_pid_ = -1;
  int floor_poll_us_ = 0;
  std::uint32_t floor_seq_ = 0;
  std::string floor_where_;
  std::vector<std::uint8_t> floor_tx_, floor_rx_;
  floor::Header floor_rx_header_;
  std::map<std::tuple<int, std::size_t, bool>, FloorSizes> floor_sizes_;

  void enroll(const CopOptions& options);
  void spawn_and_number(const CopOptions& options);
  void bind_channel(const CopOptions& options);
  std::uint64_t cycles() const;
  // A fresh GAS range of `words` words from a pool. Ranges are reused only after a
  // barrier: sync() starts the pools again, and a pool that runs out first does a
  // cop_barrier (every rank makes the same calls, so all wrap together). After any
  // barrier every earlier reduce has all its contributions and every broadcast has been
  // received, so no terminal-count or broadcast mask entry is still in use.
  int take_gas(std::uint32_t& cursor, std::uint32_t first, std::uint32_t end, std::size_t words);
  void cast(std::span<std::byte> buffer, int root, const std::vector<int>* members);

  std::string route_;
  // How libcop finds the group's members: COPBENCH_COP_GROUPS (cop_backend.cpp, enroll).
  std::string groups_ = "static";
  bool enrolled_ = false;
  std::uint32_t reduce_cursor_ = kReduceFirst;
  std::uint32_t cast_cursor_ = kCastFirst;
  std::uint64_t piece_seq_ = 0;           // point-to-point: pieces this task has sent (its ready flag)
  std::vector<std::uint64_t> seen_seq_;  // per source rank: the last piece taken from it
  // The acknowledgement in this task's taken word that its sender has not yet confirmed
  // seeing (point.cpp): the word is not overwritten for another sender before it has.
  int unconfirmed_from_ = -1;
  std::uint64_t unconfirmed_seq_ = 0;
  void await_confirmation();
  std::uint64_t excluded_cycles_ = 0;  // spent in the harness's sync barriers
};

// Throws std::runtime_error naming the call and libcop's reason when rc < 0.
int check(int rc, const char* call);

}  // namespace copbench::cop
