// Names of operations and element types, and the "not offered" defaults of Backend.
#include "copbench/backend.h"

#include <string>

namespace copbench {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::echo: return "echo";
    case Op::barrier: return "barrier";
    case Op::reduce: return "reduce";
    case Op::reduce_roots: return "reduce-roots";
    case Op::broadcast: return "broadcast";
    case Op::multicast: return "multicast";
    case Op::gather: return "gather";
    case Op::scatter: return "scatter";
    case Op::scan: return "scan";
    case Op::lock: return "lock";
    case Op::shared_read: return "shared-read";
    case Op::shared_write: return "shared-write";
    case Op::shared_rmw: return "shared-rmw";
    case Op::shared_cas: return "shared-cas";
    case Op::fence: return "fence";
    case Op::fence_window: return "fence-window";
    case Op::fence_barrier: return "fence-barrier";
    case Op::server_lock: return "server-lock";
    case Op::bare_loops: return "bare-loops";
    case Op::floor_loops: return "floor-loops";
  }
  return "?";
}

std::size_t elem_size(Elem e) { return e == Elem::i32 ? sizeof(std::int32_t) : sizeof(double); }
std::string_view elem_name(Elem e) { return e == Elem::i32 ? "int" : "double"; }

NotOffered::NotOffered(std::string_view backend, Op op)
    : std::runtime_error(std::string(backend) + ": " + std::string(op_name(op)) + " not offered") {}

void Backend::send(int, std::span<const std::byte>) { throw NotOffered(name(), Op::echo); }
void Backend::recv(int, std::span<std::byte>) { throw NotOffered(name(), Op::echo); }
void Backend::barrier() { throw NotOffered(name(), Op::barrier); }
void Backend::reduce(const void*, void*, std::size_t, Elem, ReduceOp, int) {
  throw NotOffered(name(), Op::reduce);
}
void Backend::reduce_roots(const void*, void*, std::size_t, Elem, ReduceOp, std::span<const int>) {
  throw NotOffered(name(), Op::reduce_roots);
}
void Backend::broadcast(std::span<std::byte>, int) { throw NotOffered(name(), Op::broadcast); }
void Backend::multicast(std::span<std::byte>, int, std::span<const int>) {
  throw NotOffered(name(), Op::multicast);
}
void Backend::gather(std::span<const std::byte>, std::span<std::byte>, int) {
  throw NotOffered(name(), Op::gather);
}
void Backend::scatter(std::span<const std::byte>, std::span<std::byte>, int) {
  throw NotOffered(name(), Op::scatter);
}
void Backend::scan(const void*, void*, std::size_t, Elem, ReduceOp) {
  throw NotOffered(name(), Op::scan);
}
void Backend::lock(int) { throw NotOffered(name(), Op::lock); }
void Backend::unlock(int) { throw NotOffered(name(), Op::lock); }
std::int64_t Backend::shared_read(int, int) { throw NotOffered(name(), Op::shared_read); }
void Backend::shared_write(int, int, std::int64_t) { throw NotOffered(name(), Op::shared_write); }
std::int64_t Backend::shared_fetch_add(int, int, std::int64_t) {
  throw NotOffered(name(), Op::shared_rmw);
}
std::int64_t Backend::shared_compare_swap(int, int, std::int64_t, std::int64_t) {
  throw NotOffered(name(), Op::shared_cas);
}
void Backend::fence(int) { throw NotOffered(name(), Op::fence); }
void Backend::all_fence() { throw NotOffered(name(), Op::fence); }
void Backend::all_fence_window(int) { throw NotOffered(name(), Op::fence_window); }
void Backend::fence_barrier() { throw NotOffered(name(), Op::fence_barrier); }
void Backend::server_lock(int) { throw NotOffered(name(), Op::server_lock); }
void Backend::server_unlock(int) { throw NotOffered(name(), Op::server_lock); }
double Backend::bare_echo_loop(int, std::size_t, int) { throw NotOffered(name(), Op::bare_loops); }
double Backend::bare_barrier_loop(int) { throw NotOffered(name(), Op::bare_loops); }
void Backend::floor_barrier() { throw NotOffered(name(), Op::floor_loops); }
void Backend::floor_reduce(const void*, void*, std::size_t, Elem, int) { throw NotOffered(name(), Op::floor_loops); }
void Backend::floor_broadcast(std::span<std::byte>, int) { throw NotOffered(name(), Op::floor_loops); }
std::optional<double> Backend::floor_cpu_seconds() { throw NotOffered(name(), Op::floor_loops); }
std::optional<double> Backend::controller_cpu_seconds() { throw NotOffered(name(), Op::floor_loops); }

}  // namespace copbench
