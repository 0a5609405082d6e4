// tid -> (controller, channel, task number): which channel of which level-1
// controller a PVM task sits on and which task address space is its (seed 000
// ch. V; ch. IV, Figure 5: up to 64 level-1 controllers of K channels each).
//   direct (CopMapDirect): host H (the tid's H field: the host's number in the
//     virtual machine, hosts added in channel order) is on controller
//     CNTNO (H-1)/K, channel CHNO (H-1)%K+1; TKNO is the L field modulo the
//     task spaces per channel. K is COP_PER_CONTROLLER (default 64: one
//     controller, CHNO = H);
//   table (CopMapTable): every task publishes its (CNTNO, CHNO, TKNO, PPN) at enrollment
//     in PVM's mailbox (pvm_putinfo), and a lookup reads it (pvm_recvinfo),
//     once per tid. This holds for any placement, for instance several
//     emulated nodes under one pvmd.
#pragma once
#include <cstdint>
#include <unordered_map>

namespace cop::lib {

struct Place {
  int chno = 0;
  int tkno = 0;
  int cntno = 0;  // the level-1 controller whose channel chno is
  // The task's partition (its job's PPN, cop.h "Jobs"), as it published it; -1 unknown
  // (the direct mapping). Group views leave out tasks of another partition: members of
  // a PVM group of the same name in another job of the virtual machine (issue 34).
  int ppn = -1;
};

// Channels per level-1 controller: $COP_PER_CONTROLLER, 1..64 (default 64).
int per_controller();
Place direct_place(int tid, uint32_t tasks_per_channel);

class Mapping {
 public:
  int publish(int tid, Place p);
  // 0, or a negative error (CopErrMapping when the tid has published nothing
  // within timeout_ms).
  int lookup(int tid, Place& out, int how, uint32_t tasks_per_channel, int timeout_ms);
  void forget() { table_.clear(); }

 private:
  std::unordered_map<int, Place> table_;
};

}  // namespace cop::lib
