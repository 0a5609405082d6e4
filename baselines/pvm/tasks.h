// How a PVM program of this suite sets up its tasks: the pvm backend and the cop backend
// (a COP program is a PVM program calling libcop, seed 000 ch. V) both start this way.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/catalog_backend.h"

namespace copbench::pvm {

// The harness's PVM message tags; a backend's own tags are below 2000.
inline constexpr int kSetupTag = 2000;    // rank table from rank 0; join-group token
inline constexpr int kMaxUpTag = 2001;    // max_over_ranks: values to rank 0
inline constexpr int kMaxDownTag = 2002;  // max_over_ranks: the maxima back

// Every pvm_* call's result goes through this: returns rc when it is not negative,
// otherwise throws std::runtime_error "CALL failed: PVM's error text (code RC)".
int pvm_check(int rc, const char* call);

// Spawns ranks 1 .. nodes*tasks_per_node-1 of this executable; rank 0 is the caller
// (my_tid). A virtual machine of several hosts is a cluster: tasks_per_node tasks per
// host, in the order the hosts were added (rank r on host r / tasks_per_node); on one
// host every task runs there. args_for(r) gives rank r's arguments. Returns every rank's
// tid; on failure kills what it spawned and throws.
std::vector<int> spawn_ranks(int my_tid, int nodes, int tasks_per_node,
                             const std::function<std::vector<std::string>(int rank)>& args_for);

// Hosts of the running virtual machine (throws when pvm_config fails).
int virtual_machine_hosts();

// Whether this task was started by hand (rank 0) rather than pvm_spawned: pvm_parent says
// PvmNoParent. Any other error (the pvmd gone) throws instead of passing for "has a parent".
bool started_by_hand();

// A backend whose ranks are PVM tasks (pvm, cop): rank 0 spawns the others and sends
// them the rank table; every task joins the run's group in rank order.
class PvmTaskBackend : public baselines::CatalogBackend {
 public:
  int ranks() const override { return static_cast<int>(tids_.size()); }
  // Element-wise maximum by PVM messages: to rank 0, maximised there and multicast back.
  // A harness service, never timed (and, on cop, kept off the channel).
  void max_over_ranks(std::span<double> values) override;

 protected:
  using CatalogBackend::CatalogBackend;
  // Rank 0: sends every other rank the table: rank count, `extra`, every rank's tid.
  void send_rank_table(std::span<const int> extra) const;
  // Another rank: receives the table from its parent into tids_ and rank_; returns its
  // `extra_count` extra words.
  std::vector<int> receive_rank_table(int extra_count);
  // Joins group_ one rank after the other (a token on kSetupTag), so that instance
  // number == rank, as pvm_reduce / pvm_gather / cop_reduce's roots address members;
  // then freezes the group. joined_ is set once this task is a member.
  void join_group_in_rank_order();
  // Enrolls this task in the local pvmd (mytid_), PVM's own error printing off: every
  // call's result goes through pvm_check. Throws "cannot contact the local pvmd: HINT".
  void enroll_in_pvm(const char* hint);
  // Ends every other rank of the run (when one of them fails); no farewell barrier after.
  void kill_other_ranks();

  int mytid_ = 0;
  std::vector<int> tids_;  // rank -> tid
  std::string group_;
  bool joined_ = false;
};

}  // namespace copbench::pvm
