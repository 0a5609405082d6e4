// Bringing MPI up and down, the harness services, and what is offered.
#include "mpi/mpi_backend.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "copbench/bench.h"

namespace copbench::mpi {

// The smpi build (baselines/smpi) is these sources compiled with smpicxx: the same
// backend under its own catalog entry.
#ifdef COPBENCH_SMPI
constexpr const char* kCatalogName = "smpi";
#else
constexpr const char* kCatalogName = "mpi";
#endif

MpiBackend::MpiBackend(int* argc, char*** argv) : MpirunBackend(kCatalogName) {
  MPI_Init(argc, argv);
  MPI_Comm parent = MPI_COMM_NULL;
#ifndef COPBENCH_SMPI  // SMPI implements neither MPI_Comm_spawn nor MPI_Comm_get_parent: no lock server
  MPI_Comm_get_parent(&parent);
#endif
  if (parent != MPI_COMM_NULL) {
    // This process is the lock server a run spawned (lock_server.cpp), not a rank.
    if (*argc > 2 && std::strcmp((*argv)[1], "--lock-server-timeout") == 0 && std::atoi((*argv)[2]) > 0)
      ::alarm(static_cast<unsigned>(std::atoi((*argv)[2])));  // never outlive the run
    int code = run_lock_server(parent);
    MPI_Finalize();
    std::exit(code);
  }
#ifdef COPBENCH_SMPI
  // SMPI (SimGrid 3.32) gives every new communicator its node layout by a ring allgather
  // of n steps (Comm::init_smp): n^2 simulated messages, 25 s of simulation at 1024 ranks
  // and hours at 4096. Nothing but the backend uses MPI in this process, so the world is
  // used as it is.
  comm_ = MPI_COMM_WORLD;
#else
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
#endif
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  // Errors abort the job rather than leave ranks waiting for each other.
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_ARE_FATAL);
  // Only what the run uses is set up: a benchmark that uses no shared word, lock or fence
  // (echo, the collectives) runs with no RMA window and no lock_all epoch open, so
  // nothing of one-sided communication is live while it is measured.
  const std::vector<Op> used = ops_of_worker_command(*argc, *argv);
  setup_rma(uses_any(used, {Op::shared_read, Op::shared_write, Op::shared_rmw, Op::shared_cas, Op::fence,
                            Op::fence_window, Op::fence_barrier}),
            uses_any(used, {Op::lock}));
  if (uses_any(used, {Op::server_lock}) && offers(Op::server_lock)) start_lock_server(*argc, *argv);
}

MpiBackend::~MpiBackend() {
  stop_lock_server();
  free_rma();
  for (auto& [members, comm] : multicast_comms_)
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  MPI_Finalize();
}

void MpiBackend::sync() { MPI_Barrier(comm_); }

// The harness's maximum (never timed) as a reduce to rank 0 and a broadcast: 2 (n - 1)
// messages. An allreduce by recursive doubling (smpi's, baselines/backends.json) sends
// n log2 n, and the simulator pays for every one: at 4096 smpi ranks it was 127 s of the
// 143 s of CPU a barrier point took (issue 35).
void MpiBackend::max_over_ranks(std::span<double> values) {
  const int count = static_cast<int>(values.size());
  if (rank_ == 0)
    MPI_Reduce(MPI_IN_PLACE, values.data(), count, MPI_DOUBLE, MPI_MAX, 0, comm_);
  else
    MPI_Reduce(values.data(), nullptr, count, MPI_DOUBLE, MPI_MAX, 0, comm_);
  MPI_Bcast(values.data(), count, MPI_DOUBLE, 0, comm_);
}

#ifdef COPBENCH_SMPI
// SMPI (SimGrid 3.32) has no MPI_T interface and no MCA parameters.
std::string MpiBackend::mca_setting(const char*) { return "not applicable (SimGrid SMPI)"; }
#else
std::string MpiBackend::mca_setting(const char* name) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return "unknown";
  std::string out = "unknown";
  int index = 0;
  if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS) {
    char cvar[256];
    int name_len = sizeof cvar, desc_len = 0, verbosity = 0, bind = 0, scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle handle;
    int count = 0;
    if (MPI_T_cvar_get_info(index, cvar, &name_len, &verbosity, &type, &enumtype, nullptr, &desc_len, &bind,
                            &scope) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      if (type == MPI_C_BOOL) {
        bool v = false;
        if (MPI_T_cvar_read(handle, &v) == MPI_SUCCESS) out = std::to_string(v ? 1 : 0);
      } else if (type == MPI_INT) {
        int v = 0;
        if (MPI_T_cvar_read(handle, &v) == MPI_SUCCESS) out = std::to_string(v);
      }
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
  return out;
}
#endif

void MpiBackend::abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

MPI_Datatype mpi_type(Elem elem) { return elem == Elem::i32 ? MPI_INT32_T : MPI_DOUBLE; }

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::min: return MPI_MIN;
  }
  return MPI_SUM;
}

}  // namespace copbench::mpi
