// The map of a rank's shared words (Backend::kSharedWords 64-bit words, zero at start):
// which word numbers each benchmark and each `copbench verify` check uses. Every word
// number in suite/bench/ and suite/worker/ comes from here, so two users of one word are
// visible in one place. A run executes one benchmark (or the verification), so the
// benchmarks may share words with each other. The verification's checks run one after
// the other in one run, and the counting ones (fetch-and-add, compare-and-swap, the two
// locks) need their word still zero, so no other check writes it (the static_asserts).
#pragma once

#include "copbench/backend.h"

namespace copbench {

enum SharedWord : int {
  // ticket-lock (seed 004 5.1.2), on rank 0: the next ticket to hand out, the ticket now served.
  kTicketNextWord = 0,
  kTicketServingWord = 1,
  // fence: the word every put of seed 004's fence tests writes.
  kFencePutWord = 2,
  // mcs-lock (seed 004): the queue's tail on rank 0, and on every rank its queue node:
  // the successor's id and the "still waiting" flag it spins on.
  kMcsTailWord = 4,
  kMcsNextWord = 5,
  kMcsLockedWord = 6,
  // shared: rank r reads, writes and adds to word kSharedAccessFirstWord + r mod
  // kSharedAccessWords of the next rank.
  kSharedAccessFirstWord = 8,
  kSharedAccessWords = Backend::kSharedWords - kSharedAccessFirstWord,

  // copbench verify (suite/worker/verify_shared.cpp):
  // read back: rank r writes word kVerifyReadWriteFirstWord + r mod kVerifyReadWriteWords of the next rank;
  kVerifyReadWriteFirstWord = 2,
  kVerifyReadWriteWords = 40,
  // windowed AllFence: rank r (r < kVerifyFenceWindowWriters) writes word
  // kVerifyFenceWindowFirstWord + r of every rank;
  kVerifyFenceWindowFirstWord = 10,
  kVerifyFenceWindowWriters = 40,
  // one word each, on rank 0 (or, for the fences, on every rank).
  kVerifyServerLockWord = Backend::kSharedWords - 7,
  kVerifyFenceBarrierWord = Backend::kSharedWords - 6,
  kVerifyCasWord = Backend::kSharedWords - 4,
  kVerifyFenceWord = Backend::kSharedWords - 3,
  kVerifyLockWord = Backend::kSharedWords - 2,
  kVerifyRmwWord = Backend::kSharedWords - 1,
};

static_assert(kMcsLockedWord < kSharedAccessFirstWord, "the locks' words lie below the shared benchmark's");
static_assert(kVerifyReadWriteFirstWord + kVerifyReadWriteWords <= kVerifyServerLockWord,
              "verify's read-back words lie below its one-word checks");
static_assert(kVerifyFenceWindowFirstWord + kVerifyFenceWindowWriters <= kVerifyServerLockWord,
              "verify's window words lie below its one-word checks");

}  // namespace copbench
