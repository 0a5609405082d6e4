// multicast: rank 0 to the odd ranks (a proper subset), against size (thesis Fig. 18).
#include "bench/common.h"

namespace copbench::bench {
namespace {

class Multicast final : public Benchmark {
 public:
  std::string_view name() const override { return "multicast"; }
  std::string_view description() const override { return "rank 0 to the odd-numbered ranks"; }
  std::vector<Op> needs() const override { return {Op::multicast}; }
  std::vector<std::size_t> default_sizes() const override { return {0, 8, 64, 512, 4096, 16384, 65536}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    std::vector<int> members;
    for (int r = 1; r < b.ranks(); r += 2) members.push_back(r);
    for (std::size_t size : sizes_for(*this, params)) {
      std::vector<std::byte> buf = payload(size);
      report_collective(b, params, out, "multicast/size:" + std::to_string(size), [&] { b.multicast(buf, 0, members); },
                        {{"bytes", static_cast<double>(size)}, {"members", static_cast<double>(members.size())}});
    }
  }
};

const RegisterWorkload<Multicast> registered{WorkloadKind::benchmark, 240};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
