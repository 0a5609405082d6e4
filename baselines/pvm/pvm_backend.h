// The pvm backend: PVM 3.4 tasks in a running virtual machine. The first task (started
// by `copbench run`) is rank 0 and pvm_spawns the others and one lock/shared-variable
// server task. Routes: normal (daemon-routed: every task PvmAllowDirect, nobody asks for
// a direct link) and direct (every task PvmRouteDirect). Encodings: PvmDataDefault (XDR),
// PvmDataRaw, PvmDataInPlace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "copbench/backend.h"
#include "pvm/tasks.h"

namespace copbench::pvm {

// Message tags. Benchmarks' messages and the harness's never share a tag.
enum Tag : int {
  kEchoTag = 1,
  kBroadcastTag = 2,
  kMulticastTag = 3,
  kReduceTag = 4,   // + 16 * sequence (next_tag)
  kGatherTag = 5,
  kScatterTag = 6,
  // 2000..2002: the harness's (tasks.h)
  kServerRequestTag = 3000,
  kServerReplyTag = 3001,
};

struct PvmOptions {
  std::string route = "normal";
  std::string encoding = "default";
  int nodes = 1;
  int tasks_per_node = 1;             // ranks k*T .. k*T+T-1 on node (host) k
  int timeout_s = 0;                  // watchdog: every task ends itself after this
  std::vector<std::string> spawn_args;  // argv for the spawned copies
};

class PvmBackend final : public PvmTaskBackend {
 public:
  PvmBackend() : PvmTaskBackend("pvm") {}
  // Enrolls in the virtual machine; rank 0 spawns the rest. Throws with a one-line
  // message when the virtual machine is not up or cannot give the nodes asked for, and
  // kills nothing: the worker reports the error first, then calls kill_all().
  void start(const PvmOptions& options);
  ~PvmBackend() override;  // leaves the group, stops the server (rank 0), pvm_exit

  std::string route() const override { return route_; }
  void sync() override;  // pvm_barrier on the run's group

  // messaging.cpp: pvm_send / pvm_recv in the run's encoding.
  void send(int to, std::span<const std::byte> message) override;
  void recv(int from, std::span<std::byte> message) override;
  // barrier.cpp, reduce.cpp: the group server's pvm_barrier, pvm_reduce.
  void barrier() override;
  void reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int root) override;
  // broadcast.cpp: pvm_bcast to the group, pvm_mcast to the members' tids.
  void broadcast(std::span<std::byte> buffer, int root) override;
  void multicast(std::span<std::byte> buffer, int root, std::span<const int> members) override;
  // gather_scatter.cpp: pvm_gather, pvm_scatter.
  void gather(std::span<const std::byte> mine, std::span<std::byte> all, int root) override;
  void scatter(std::span<const std::byte> all, std::span<std::byte> mine, int root) override;

  // shared.cpp: requests to the server task (lock_server.cpp). The native lock already
  // is a server queue lock, so server_lock makes the same requests.
  void lock(int lock_id) override;
  void unlock(int lock_id) override;
  void server_lock(int lock_id) override { lock(lock_id); }
  void server_unlock(int lock_id) override { unlock(lock_id); }
  std::int64_t shared_read(int owner, int index) override;
  void shared_write(int owner, int index, std::int64_t value) override;
  std::int64_t shared_fetch_add(int owner, int index, std::int64_t add) override;
  std::int64_t shared_compare_swap(int owner, int index, std::int64_t expected, std::int64_t desired) override;

  double bare_echo_loop(int peer, std::size_t bytes, int iterations) override;
  double bare_barrier_loop(int iterations) override;

  // Ends every task of this run (used when one of them fails).
  void kill_all();

 private:
  void enroll(const PvmOptions& options);
  void spawn_and_number(const PvmOptions& options);
  std::int64_t server_call(int op, int a, int b, std::int64_t value, bool wants_reply, std::int64_t value2 = 0);
  // pvm_reduce / pvm_gather / pvm_scatter receive from any member by tag, so back-to-back
  // calls with one tag can take a later call's message for this one. Every rank makes the
  // same calls in the same order, so a per-call tag sequence keeps them apart.
  int next_tag(int base) { return base + 16 * (collective_seq_++ % 64); }

  std::string route_;
  int encoding_ = 0;
  int server_tid_ = 0;
  int collective_seq_ = 0;
};

// The lock / shared-variable server task (started by rank 0 with --pvm-server).
int run_server(int nodes, int timeout_s);

}  // namespace copbench::pvm
