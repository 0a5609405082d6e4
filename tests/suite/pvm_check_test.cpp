// pvm_check (baselines/pvm/tasks.h): a failing pvm_* call becomes an error naming the
// call, PVM's own error text (pvm_perror's) and the code; a good result passes through.
#include <gtest/gtest.h>
#include <pvm3.h>
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "pvm/pvm_backend.h"
#include "pvm/tasks.h"

namespace copbench::pvm {
namespace {

std::string message_of(int rc, const char* call) {
  try {
    pvm_check(rc, call);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PvmCheck, GoodResultsPassThrough) {
  EXPECT_EQ(pvm_check(0, "pvm_barrier"), 0);
  EXPECT_EQ(pvm_check(262147, "pvm_recv"), 262147);  // a buffer id
}

TEST(PvmCheck, AnErrorNamesTheCallAndPvmsText) {
  EXPECT_EQ(message_of(PvmNoBuf, "pvm_send"), "pvm_send failed: No current buffer (code -15)");
  EXPECT_EQ(message_of(PvmBadParam, "pvm_pkint"), "pvm_pkint failed: Bad parameter (code -2)");
  EXPECT_EQ(message_of(-9999, "pvm_recv"), "pvm_recv failed: unknown PVM error (code -9999)");
}

// A real call: with no pvmd in PVM_TMP (a directory of the build tree that no pvmd uses;
// libpvm may leave it behind), enrolling fails and says why.
TEST(PvmCheck, NoDaemonIsACleanError) {
  std::filesystem::create_directories(NO_PVM_DIR);
  ::setenv("PVM_TMP", NO_PVM_DIR, 1);
  ::setenv("PVM_ALLOW_ROOT", "1", 1);  // root on test machines; PVM refuses root otherwise
  pvm_setopt(PvmAutoErr, 0);
  EXPECT_EQ(message_of(pvm_mytid(), "pvm_mytid"), "pvm_mytid failed: Can't contact local daemon (code -14)");
}

// With PvmAutoErr off a failed pvm_barrier only says so in its return code: the pvm
// backend's timed barrier must throw (failing the point), not return as if it happened.
TEST(PvmCheck, AFailedBarrierIsAnError) {
  std::filesystem::create_directories(NO_PVM_DIR);
  ::setenv("PVM_TMP", NO_PVM_DIR, 1);
  ::setenv("PVM_ALLOW_ROOT", "1", 1);
  pvm_setopt(PvmAutoErr, 0);
  PvmBackend backend;  // not started: no pvmd, no group
  EXPECT_THROW(backend.barrier(), std::runtime_error);
}

}  // namespace
}  // namespace copbench::pvm
