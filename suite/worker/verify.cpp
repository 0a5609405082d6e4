// `copbench verify`: every offered operation of a backend checked against a local
// computation, on whatever number of nodes it was started with. Verification failures
// are agreed over ranks so every rank returns the same verdict. The checks themselves
// are in verify_collectives.cpp and verify_shared.cpp.
#include <fmt/format.h>

#include "copbench/worker.h"
#include "worker/verify_checks.h"

namespace copbench {
namespace {

struct Check {
  Op op;  // the operation checked; a backend that does not offer it skips the check
  std::string (*run)(Backend&);
};

// In this order: the later checks use what the earlier ones found working.
constexpr Check kChecks[] = {
    {Op::echo, verify::echo},
    {Op::barrier, verify::barrier},
    {Op::reduce, verify::reduce},
    {Op::reduce_roots, verify::reduce_roots},
    {Op::broadcast, verify::broadcast},
    {Op::multicast, verify::multicast},
    {Op::gather, verify::gather},
    {Op::scatter, verify::scatter},
    {Op::scan, verify::scan},
    {Op::shared_write, verify::shared_read_write},
    {Op::shared_rmw, verify::shared_rmw},
    {Op::shared_cas, verify::shared_cas},
    {Op::lock, verify::lock},
    {Op::fence, verify::fence},
    {Op::fence_window, verify::fence_window},
    {Op::fence_barrier, verify::fence_barrier},
    {Op::server_lock, verify::server_lock},
};

// Runs one check on every rank; a failure anywhere fails it everywhere. Returns the
// check's line; `ok` turns false on a failure.
std::string run_check(Backend& b, const Check& check, bool& ok) {
  if (!b.offers(check.op)) return fmt::format("-- {}: not offered", op_name(check.op));
  b.sync();
  std::string problem = check.run(b);
  std::vector<double> failed{problem.empty() ? 0.0 : static_cast<double>(b.rank() + 1)};
  b.max_over_ranks(failed);
  if (failed[0] == 0.0) return fmt::format("ok {}", op_name(check.op));
  ok = false;
  return fmt::format("FAIL {}: {}", op_name(check.op),
                     problem.empty() ? fmt::format("on rank {}", static_cast<int>(failed[0]) - 1) : problem);
}

}  // namespace

std::vector<std::string> verify_backend(Backend& backend, bool& all_ok) {
  all_ok = true;
  std::vector<std::string> lines;
  for (const Check& check : kChecks) lines.push_back(run_check(backend, check, all_ok));
  return lines;
}

}  // namespace copbench
