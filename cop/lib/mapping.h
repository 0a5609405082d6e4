// tid -> (channel, task number): which channel a PVM task sits on and which
// task address space is its (seed 000 ch. V).
//   direct (CopMapDirect): CHNO is the tid's H field (the host's number in the
//     virtual machine, hosts added in channel order), TKNO its L field modulo
//     the task spaces per channel;
//   table (CopMapTable): every task publishes its (CHNO, TKNO) at enrollment
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
};

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
