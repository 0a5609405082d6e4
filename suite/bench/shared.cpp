// shared: read, write and fetch-and-add of one 64-bit word owned by the next rank
// (thesis RSRAM / WSRAM / RMW; ARMCI Get / Put / Rmw; MPI-3 Get / Put / Fetch_and_op).
// Write runs where the backend offers it: COP's task address spaces are written only by
// their owner, so cop measures read and rmw.
#include "bench/common.h"

namespace copbench::bench {
namespace {

class Shared final : public Benchmark {
 public:
  std::string_view name() const override { return "shared"; }
  std::string_view description() const override {
    return "read / write / rmw of a word owned by the next rank, every rank";
  }
  std::vector<Op> needs() const override { return {Op::shared_read, Op::shared_rmw}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    const int owner = (b.rank() + 1) % b.ranks();
    const int word = kSharedAccessFirstWord + b.rank() % kSharedAccessWords;
    // One kind of access to the word: its name in the point's name, and one access.
    struct AccessKind {
      const char* name;
      std::function<void()> op;
    };
    std::int64_t sink = 0;
    const AccessKind kinds[] = {
        {"read", [&] { sink += b.shared_read(owner, word); }},
        {"write", [&] { b.shared_write(owner, word, sink); }},
        {"rmw", [&] { sink += b.shared_fetch_add(owner, word, 1); }},
    };
    for (const AccessKind& kind : kinds) {
      if (std::string_view(kind.name) == "write" && !b.offers(Op::shared_write)) continue;
      Summary s = measure(b, params.timing, every_rank_loop(b, kind.op, "accesses the word", "accesses"));
      out.report(make_point(std::string("shared/") + kind.name, b, std::move(s)));
    }
  }
};

const RegisterWorkload<Shared> registered{WorkloadKind::benchmark, 340};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
