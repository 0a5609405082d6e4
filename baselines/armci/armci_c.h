// ARMCI-MPI's headers declare C functions without extern "C"; include them through here.
#pragma once

#include <mpi.h>

extern "C" {
#include <armci.h>
#include <message.h>
}
