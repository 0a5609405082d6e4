// server_lock: seed 004's server-based queue lock (5.1.1) on MPI. A lock server keeps a
// FIFO queue of requesters per lock: lock = a request message, then wait for the grant;
// unlock = a release message, on which the server grants the next in the queue.
//
// The server is its own process, spawned with MPI_Comm_spawn and reached over the
// intercommunicator. A server thread inside rank 0 would need MPI_THREAD_MULTIPLE, and
// Open MPI 4.1's osc pt2pt (the only one-sided component that works over TCP here)
// refuses to create windows under it. The spawn costs a fraction of a second, so it is
// made only for runs that use the lock (the queue-lock benchmark and verify).
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "mpi/mpi_backend.h"

namespace copbench::mpi {
namespace {

constexpr int kRequestTag = 1;  // client -> server: {op, lock id}
constexpr int kGrantTag = 2;    // server -> client: the lock id, when granted
enum : int { kLock = 1, kUnlock = 2, kStop = 3 };

// Whether this run uses the lock server: the worker's --bench queue-lock, or --verify.
bool run_uses_lock_server(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--verify" || a == "--bench=queue-lock") return true;
    if (a == "--bench" && i + 1 < argc && std::string_view(argv[i + 1]) == "queue-lock") return true;
  }
  return false;
}

std::string worker_timeout(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string_view(argv[i]) == "--timeout") return argv[i + 1];
  return "0";
}

}  // namespace

void MpiBackend::start_lock_server(int argc, char** argv) {
  if (!run_uses_lock_server(argc, argv)) return;
  char self[PATH_MAX] = {};
  if (::readlink("/proc/self/exe", self, sizeof self - 1) <= 0) std::strncpy(self, argv[0], sizeof self - 1);
  std::string timeout = worker_timeout(argc, argv);
  char flag[] = "--lock-server-timeout";
  char* server_argv[] = {flag, timeout.data(), nullptr};
  MPI_Comm_spawn(self, server_argv, 1, MPI_INFO_NULL, 0, comm_, &lock_server_, MPI_ERRCODES_IGNORE);
}

void MpiBackend::stop_lock_server() {
  if (lock_server_ == MPI_COMM_NULL) return;
  // Every rank says stop, so the server has seen each rank's last release (messages from
  // one sender arrive in order) before it leaves.
  int request[2] = {kStop, 0};
  MPI_Send(request, 2, MPI_INT, 0, kRequestTag, lock_server_);
  MPI_Comm_disconnect(&lock_server_);
}

void MpiBackend::server_lock(int lock_id) {
  if (lock_server_ == MPI_COMM_NULL) throw std::runtime_error("mpi: the lock server was not started for this run");
  int request[2] = {kLock, lock_id % kLocks};
  int granted = 0;
  MPI_Send(request, 2, MPI_INT, 0, kRequestTag, lock_server_);
  MPI_Recv(&granted, 1, MPI_INT, 0, kGrantTag, lock_server_, MPI_STATUS_IGNORE);
}

void MpiBackend::server_unlock(int lock_id) {
  if (lock_server_ == MPI_COMM_NULL) throw std::runtime_error("mpi: the lock server was not started for this run");
  int request[2] = {kUnlock, lock_id % kLocks};
  MPI_Send(request, 2, MPI_INT, 0, kRequestTag, lock_server_);
}

int run_lock_server(MPI_Comm parent) {
  int clients = 0;
  MPI_Comm_remote_size(parent, &clients);
  std::vector<int> holder(Backend::kLocks, -1);
  std::vector<std::deque<int>> waiting(Backend::kLocks);
  auto grant = [&](int client, int id) { MPI_Send(&id, 1, MPI_INT, client, kGrantTag, parent); };
  int stopped = 0;
  while (stopped < clients) {
    int request[2] = {0, 0};
    MPI_Status status;
    MPI_Recv(request, 2, MPI_INT, MPI_ANY_SOURCE, kRequestTag, parent, &status);
    const int from = status.MPI_SOURCE;
    const int id = request[1];
    if (request[0] == kStop) {
      ++stopped;
      continue;
    }
    if (id < 0 || id >= Backend::kLocks) return 1;
    const auto lock = static_cast<std::size_t>(id);
    if (request[0] == kLock) {
      if (holder[lock] < 0) {
        holder[lock] = from;
        grant(from, id);
      } else {
        waiting[lock].push_back(from);
      }
    } else if (request[0] == kUnlock) {
      if (waiting[lock].empty()) {
        holder[lock] = -1;
      } else {
        holder[lock] = waiting[lock].front();
        waiting[lock].pop_front();
        grant(holder[lock], id);
      }
    }
  }
  MPI_Comm_disconnect(&parent);
  return 0;
}

}  // namespace copbench::mpi
