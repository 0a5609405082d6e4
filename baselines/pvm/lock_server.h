// Requests understood by the lock / shared-variable server task (lock_server.cpp).
#pragma once

namespace copbench::pvm {

enum ServerOp : int {
  kServerStop = -1,
  kServerLock = 1,       // a = lock id; answered when granted
  kServerUnlock = 2,     // a = lock id; not answered
  kServerRead = 3,       // a = owner rank, b = word; answered with the value
  kServerWrite = 4,      // a, b, value; answered once stored
  kServerFetchAdd = 5,   // a, b, value to add; answered with the old value
  kServerCompareSwap = 6,  // a, b, expected, desired; answered with the old value
};

}  // namespace copbench::pvm
