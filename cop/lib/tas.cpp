// cop_read, cop_write, cop_rmw: one Table I opcode per element on a task
// address space of the controller's Data RAM (seed 000 ch. V; ch. IV, Table I).
#include <pvm3.h>

#include <algorithm>

#include "lib/elements.h"
#include "lib/library.h"

namespace cop::lib {

using driver::Answer;
using wire::Opcode;

namespace {

// The arguments checked and the target found, then tas_run.
int tas_access(const char* call, const TasAccess& a, int tid) {
  if (int rc = ready(); rc < 0) return rc;
  if (!known_type(a.datatype) || a.count < 0 || (a.count > 0 && !a.data) || a.msgtag < 0 ||
      (a.mode != COP_NORMAL && a.mode != COP_URGENT))
    return PvmBadParam;
  Place p;
  if (int rc = place_of(tid, p); rc < 0) return rc;
  if (uint64_t(a.msgtag) + uint64_t(a.count) > info().tas_words) {
    report(call, "tag + count beyond the task address space");
    return CopErrAddressRange;
  }
  return tas_run(a, p);
}

}  // namespace

int tas_run(const TasAccess& a, Place p) {
  if (a.count == 0) return 0;
  // A burst per kChunk elements, all of them sent in as few frames as the port
  // carries. COP_URGENT holds the channel lock over the whole array (ch. V):
  // LOCK in the first burst, UNLOCK in the last.
  const bool urgent = a.mode == COP_URGENT;
  const bool reads = a.op == Opcode::RSRAM32 || a.op == Opcode::RSRAM64;
  commands::Burst all;
  std::vector<size_t> first_of_element;  // where each element's command sits in `all`
  first_of_element.reserve(size_t(a.count));
  for (size_t at = 0; at < size_t(a.count); at += kChunk) {
    const size_t n = std::min(kChunk, size_t(a.count) - at);
    const bool lock = urgent && at == 0, unlock = urgent && at + n >= size_t(a.count);
    std::vector<uint64_t> words(n);  // RSRAM sends none: they stay zero
    for (size_t i = 0; i < n && !reads; ++i) words[i] = to_word(a.data, at + i, a.datatype);
    const commands::TasTarget target{uint8_t(p.chno), uint32_t(p.tkno), uint32_t(a.msgtag) + uint32_t(at)};
    commands::Burst burst = commands::tas_access(sender(), a.op, a.floating, target, words, lock, unlock);
    // A space on another level-1 controller: through the level 2, X with its CNTNO (ch. V; Z names it).
    if (p.cntno != lib().cntno)
      for (wire::Message& m : burst)
        if (m.ins.space == wire::Space::TAS) {
          m.ins.x = true;
          m.addr.cntno = uint8_t(p.cntno);
        }
    for (size_t i = 0; i < n; ++i) first_of_element.push_back(all.size() + (lock ? 1 : 0) + i);
    all.insert(all.end(), burst.begin(), burst.end());
  }
  std::vector<Answer> answers;
  if (const int rc = exchange_all(all, &answers); rc < 0) {
    // A frame before the UNLOCK's did not get through: do not leave the channel locked.
    if (urgent && answers.size() < all.size()) exchange_all({commands::command(sender(), Opcode::UNLOCK)});
    return rc;
  }
  if (a.keep_answers)
    for (size_t i = 0; i < size_t(a.count); ++i)
      from_word(a.data, i, a.datatype, wire::payload(answers[first_of_element[i]].data));
  return 0;
}

}  // namespace cop::lib

using namespace cop::lib;

extern "C" {

int cop_write(void* data, int count, int datatype, int tid, int msgtag, int mode) {
  return tas_access("cop_write", {.op = write_opcode(datatype), .data = data, .count = count, .datatype = datatype,
                                  .msgtag = msgtag, .mode = mode},
                    tid);
}

int cop_read(void* data, int count, int datatype, int tid, int msgtag, int mode) {
  return tas_access("cop_read", {.op = read_opcode(datatype), .data = data, .count = count, .datatype = datatype,
                                 .msgtag = msgtag, .mode = mode, .keep_answers = true},
                    tid);
}

int cop_rmw(void* data, int count, int datatype, int tid, int msgtag, int mode) {
  // RMW adds in the 64-bit ALU (ch. IV, Table I), or in the FP unit for 64-bit doubles;
  // a PVM_FLOAT would be added as a double and rounded back: not float arithmetic.
  if (datatype == PVM_FLOAT) {
    if (int rc = ready(); rc < 0) return rc;
    report("cop_rmw", "PVM_FLOAT has no read-modify-write (use PVM_DOUBLE)");
    return CopErrBadType;
  }
  return tas_access("cop_rmw", {.op = rmw_opcode(datatype), .floating = rmw_floating(datatype), .data = data,
                                .count = count, .datatype = datatype, .msgtag = msgtag, .mode = mode,
                                .keep_answers = true},
                    tid);
}

}  // extern "C"
