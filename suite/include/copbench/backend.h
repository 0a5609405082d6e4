// The one interface every measured system implements (docs/ARCHITECTURE.md, "Layers":
// baselines/<system> under suite/worker).
//
// A benchmark is written once against Backend and runs on every backend that offers the
// operations it needs. An operation a backend lacks is reported as "not offered": the
// default implementations below throw NotOffered, and offers() says so beforehand, so
// nothing is ever emulated on top of another primitive behind the user's back.
//
// Programs are SPMD: every rank calls every collective with the same arguments. Ranks
// are 0..ranks()-1; rank 0 is the one that reports. A run has nodes() nodes of
// tasks_per_node() ranks each, placed in blocks: node k holds ranks k*T .. k*T+T-1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace copbench {

// The operations a benchmark may use; baselines/backends.json says which backend offers
// which (`copbench list`). `bare_loops` is the backend's own uninstrumented loop of
// its native echo and barrier calls, used to check that the harness is not what is measured.
// `floor_loops` is an emulated system's transport floor (cop: the same operation's frames
// through a bare controller process, baselines/cop/floor.cpp), the `emulation` benchmark's.
enum class Op {
  echo,          // point-to-point send / receive (ping-pong)
  barrier,
  reduce,        // element-wise reduction of an int or double array to a root
  reduce_roots,  // the same reduction delivered to several roots in one operation (cop_reduce)
  broadcast,     // root to every rank
  multicast,     // root to a chosen subset of ranks
  gather,
  scatter,
  scan,          // inclusive prefix reduction
  lock,          // the backend's native mutual-exclusion lock
  shared_read,   // read a word of another rank's shared variables
  shared_write,
  shared_rmw,    // atomic fetch-and-add on a shared word
  shared_cas,    // atomic compare-and-swap on a shared word
  fence,         // remote completion of this rank's writes (one target / all targets)
  fence_window,  // seed 004 3.1.2: AllFence with fence requests to K targets in flight at a time
  fence_barrier, // seed 004 ch. 4: completion of this rank's writes and a barrier in one call
  server_lock,   // seed 004 5.1.1: a lock server keeping a FIFO queue of requesters per lock
  bare_loops,
  floor_loops,
};
inline constexpr Op kAllOps[] = {Op::echo,        Op::barrier,      Op::reduce,     Op::reduce_roots, Op::broadcast,
                                 Op::multicast,   Op::gather,       Op::scatter,    Op::scan,
                                 Op::lock,        Op::shared_read,  Op::shared_write,
                                 Op::shared_rmw,  Op::shared_cas,   Op::fence,
                                 Op::fence_window, Op::fence_barrier, Op::server_lock,
                                 Op::bare_loops,  Op::floor_loops};

std::string_view op_name(Op op);

enum class Elem { i32, f64 };
enum class ReduceOp { sum, max, min };
std::size_t elem_size(Elem e);
std::string_view elem_name(Elem e);

// Thrown when a benchmark asks a backend for an operation it does not have.
class NotOffered : public std::runtime_error {
 public:
  NotOffered(std::string_view backend, Op op);
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  // Route or mode, as the system calls it ("direct", "normal", "pt2pt RMA", ...).
  virtual std::string route() const = 0;
  virtual int rank() const = 0;
  // Every task of the run (nodes x tasks per node); what collectives span.
  virtual int ranks() const = 0;
  virtual int tasks_per_node() const { return 1; }
  int nodes() const { return ranks() / tasks_per_node(); }
  int node_of(int rank) const { return rank / tasks_per_node(); }
  virtual bool offers(Op op) const = 0;
  // Whether the applications (apps/) move their point-to-point data by one-member
  // multicasts instead of send/recv: where there is no send/recv, or where it is built
  // on slower operations (cop: Table IV's cop_write & cop_read protocol).
  virtual bool p2p_by_multicast() const { return !offers(Op::echo); }

  // --- Harness services: used between timed regions, never timed themselves. ---
  // Waits for every rank (the "barrier before each timed collective" of the thesis).
  virtual void sync() = 0;
  // Element-wise maximum over ranks; every rank ends with the result.
  virtual void max_over_ranks(std::span<double> values) = 0;

  // Modelled-hardware time: a backend that emulates hardware with a cycle clock (cop:
  // the controller's clock, Hall's timings) returns that clock, in seconds, as seen by
  // this rank; the harness reports its advance per iteration beside the wall time.
  // Measured systems have none.
  virtual std::optional<double> modelled_clock() { return std::nullopt; }

  // --- Measured operations. ---
  virtual void send(int to, std::span<const std::byte> message);
  virtual void recv(int from, std::span<std::byte> message);
  virtual void barrier();
  // count elements of type elem; the result is defined on root only.
  virtual void reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op,
                      int root);
  // The same reduction, every rank in `roots` (sorted, distinct) ending with the result in
  // one operation: seed 000's cop_reduce takes a list of roots. Not a series of reduces.
  virtual void reduce_roots(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op,
                            std::span<const int> roots);
  virtual void broadcast(std::span<std::byte> buffer, int root);
  // Every rank calls it; root sends to `members` (sorted, without root), members receive,
  // everyone else returns at once.
  virtual void multicast(std::span<std::byte> buffer, int root, std::span<const int> members);
  // `all` holds ranks() blocks of mine.size() bytes, block r from rank r (root only).
  virtual void gather(std::span<const std::byte> mine, std::span<std::byte> all, int root);
  virtual void scatter(std::span<const std::byte> all, std::span<std::byte> mine, int root);
  virtual void scan(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op);

  // Shared variables: every rank owns kSharedWords 64-bit words, zero at start.
  static constexpr int kSharedWords = 64;
  static constexpr int kLocks = 4;
  virtual void lock(int lock_id);
  virtual void unlock(int lock_id);
  virtual std::int64_t shared_read(int owner, int index);
  virtual void shared_write(int owner, int index, std::int64_t value);
  // Atomically adds `add` to the word and returns its previous value.
  virtual std::int64_t shared_fetch_add(int owner, int index, std::int64_t add);
  // Atomically replaces the word by `desired` if it equals `expected`; returns the old value.
  virtual std::int64_t shared_compare_swap(int owner, int index, std::int64_t expected, std::int64_t desired);
  virtual void fence(int target);
  virtual void all_fence();
  // all_fence with at most k fence requests in flight: requests go to k targets written
  // since the last fence, then their k acknowledgements are awaited, then the next k;
  // targets are visited from a rank-dependent offset so ranks do not all start at one.
  virtual void all_fence_window(int k);
  // Completes this rank's shared writes at their targets and waits for every rank, as one
  // operation of the system (not all_fence followed by barrier).
  virtual void fence_barrier();
  // The message layer's barrier with no RMA completion in it: the same as barrier() except
  // where the native barrier also fences (ARMCI_Barrier), for seed 004's AllFence + MPI_Barrier.
  virtual void message_barrier() { barrier(); }
  // A lock granted by a lock server (a task or process that owns the lock's FIFO queue of
  // requesters): lock = request message, wait for the grant; unlock = release message.
  virtual void server_lock(int lock_id);
  virtual void server_unlock(int lock_id);

  // Bare loops: the same native calls the harness makes for echo and barrier, written
  // inline with no harness in between and timed with the same clock (timing.h), so
  // the "overhead" benchmark can show that the harness is not what is measured.
  // bare_echo_loop: rank 0 <-> peer, `bytes` each way; returns the loop's seconds per
  // one-way trip on rank 0 and 0 elsewhere. bare_barrier_loop: for each iteration a
  // native barrier, then a timed native barrier; returns the mean over iterations of the
  // per-iteration maximum over ranks, on every rank.
  virtual double bare_echo_loop(int peer, std::size_t bytes, int iterations);
  virtual double bare_barrier_loop(int iterations);

  // The floor (Op::floor_loops; issue 26): an emulated system's operation moved by the
  // bare transport under it, with none of the system's logic, so that a reader sees what
  // is the system and what is the emulation. Each is the same collective as barrier(),
  // reduce() (sum, one root) and broadcast(), with the same bytes on the same wires to a
  // floor controller process (one datagram per frame, recvmmsg/sendmmsg, no protocol), and
  // the same results. Every rank calls them together; CPU seconds are rank 0's reading of
  // the floor controller's and the system's own controller's processes (nullopt where
  // that process is not on this machine).
  virtual void floor_barrier();
  virtual void floor_reduce(const void* in, void* out, std::size_t count, Elem elem, int root);
  virtual void floor_broadcast(std::span<std::byte> buffer, int root);
  virtual std::optional<double> floor_cpu_seconds();
  virtual std::optional<double> controller_cpu_seconds();

  // Settings of the system that change what is measured (cop: copd's I/O threads and
  // polling, the tasks' COP_POLL_US), recorded in the result's context by rank 0.
  virtual std::map<std::string, std::string> context_settings() { return {}; }
};

}  // namespace copbench
