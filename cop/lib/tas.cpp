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
int tas_access(const char* call, Opcode op, bool floating, void* data, int count, int datatype, int tid, int msgtag,
               int mode, bool keep_answers) {
  if (int rc = ready(); rc < 0) return rc;
  if (!known_type(datatype) || count < 0 || (count > 0 && !data) || msgtag < 0 ||
      (mode != COP_NORMAL && mode != COP_URGENT))
    return PvmBadParam;
  Place p;
  if (int rc = place_of(tid, p); rc < 0) return rc;
  if (uint64_t(msgtag) + uint64_t(count) > info().tas_words) {
    report(call, "tag + count beyond the task address space");
    return CopErrAddressRange;
  }
  return tas_run(op, floating, data, count, datatype, p, msgtag, mode, keep_answers);
}

}  // namespace

int tas_run(Opcode op, bool floating, void* data, int count, int datatype, Place p, int msgtag, int mode,
            bool keep_answers) {
  if (count == 0) return 0;
  // COP_URGENT holds the channel lock over the whole array (ch. V): LOCK in the
  // first chunk's burst, UNLOCK in the last one's.
  const bool urgent = mode == COP_URGENT;
  for (size_t at = 0; at < size_t(count); at += kChunk) {
    const size_t n = std::min(kChunk, size_t(count) - at);
    const bool lock = urgent && at == 0, unlock = urgent && at + n >= size_t(count);
    std::vector<uint64_t> words(n);  // RSRAM sends none: they stay zero
    for (size_t i = 0; i < n && op != Opcode::RSRAM32 && op != Opcode::RSRAM64; ++i)
      words[i] = to_word(data, at + i, datatype);
    const commands::TasTarget target{uint8_t(p.chno), uint32_t(p.tkno), uint32_t(msgtag) + uint32_t(at)};
    const commands::Burst burst = commands::tas_access(sender(), op, floating, target, words, lock, unlock);
    std::vector<Answer> a;
    if (const int rc = exchange_all(burst, &a); rc < 0) {
      if (urgent && !unlock) exchange_all({commands::command(sender(), Opcode::UNLOCK)});  // do not leave it locked
      return rc;
    }
    const size_t first = lock ? 1 : 0;
    if (keep_answers)
      for (size_t i = 0; i < n; ++i) from_word(data, at + i, datatype, wire::payload(a[first + i].data));
  }
  return 0;
}

}  // namespace cop::lib

using namespace cop::lib;

extern "C" {

int cop_write(void* data, int count, int datatype, int tid, int msgtag, int mode) {
  return tas_access("cop_write", write_opcode(datatype), false, data, count, datatype, tid, msgtag, mode, false);
}

int cop_read(void* data, int count, int datatype, int tid, int msgtag, int mode) {
  return tas_access("cop_read", read_opcode(datatype), false, data, count, datatype, tid, msgtag, mode, true);
}

int cop_rmw(void* data, int count, int datatype, int tid, int msgtag, int mode) {
  // RMW adds in the 64-bit ALU (ch. IV, Table I), or in the FP unit for 64-bit doubles;
  // a PVM_FLOAT would be added as a double and rounded back: not float arithmetic.
  if (datatype == PVM_FLOAT) {
    if (int rc = ready(); rc < 0) return rc;
    report("cop_rmw", "PVM_FLOAT has no read-modify-write (use PVM_DOUBLE)");
    return CopErrBadType;
  }
  return tas_access("cop_rmw", rmw_opcode(datatype), rmw_floating(datatype), data, count, datatype, tid, msgtag, mode,
                    true);
}

}  // extern "C"
