// ARMCI-MPI's headers declare C functions without extern "C"; include them through here.
#pragma once

#include <mpi.h>

extern "C" {
#include <armci.h>
#include <message.h>
}

#include <stdexcept>
#include <string>

namespace copbench::armci {
// ARMCI calls that return a status (Init, Malloc, Create_mutexes, Get, Put, Rmw) return 0
// on success; ARMCI-MPI aborts on most errors itself, but a non-zero status must not pass
// as a done operation, so every such call goes through this.
inline void armci_check(int rc, const char* call) {
  if (rc != 0) throw std::runtime_error(std::string(call) + " failed (status " + std::to_string(rc) + ")");
}
}  // namespace copbench::armci
