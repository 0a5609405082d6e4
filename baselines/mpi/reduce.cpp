// reduce and scan: MPI_Reduce and MPI_Scan (inclusive).
#include "mpi/mpi_backend.h"

namespace copbench::mpi {

void MpiBackend::reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int root) {
  MPI_Reduce(in, out, static_cast<int>(count), mpi_type(elem), mpi_op(op), root, comm_);
}

void MpiBackend::scan(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op) {
  MPI_Scan(in, out, static_cast<int>(count), mpi_type(elem), mpi_op(op), comm_);
}

}  // namespace copbench::mpi
