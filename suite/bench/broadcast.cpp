// broadcast: rank 0 to every rank, against size (thesis Fig. 18).
#include "bench/common.h"

namespace copbench::bench {
namespace {

class Broadcast final : public Benchmark {
 public:
  std::string_view name() const override { return "broadcast"; }
  std::string_view description() const override { return "rank 0 to all ranks"; }
  std::vector<Op> needs() const override { return {Op::broadcast}; }
  ReportTraits report_traits() const override {
    ReportTraits t;
    t.validated_families = {"broadcast"};
    t.validated_sizes = {1024};
    t.modelled_calls = {{"broadcast", Op::broadcast, false, true}};
    return t;
  }
  std::vector<std::size_t> default_sizes() const override { return {0, 8, 64, 512, 4096, 16384, 65536}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    for (std::size_t size : sizes_for(*this, params)) {
      std::vector<std::byte> buf = payload(size);
      report_collective(b, params, out, "broadcast/size:" + std::to_string(size), [&] { b.broadcast(buf, 0); },
                        {{"bytes", static_cast<double>(size)}});
    }
  }
};

const RegisterWorkload<Broadcast> registered{WorkloadKind::benchmark, 230};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
