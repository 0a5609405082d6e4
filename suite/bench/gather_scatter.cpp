// gather and scatter: blocks of `size` bytes per rank to / from rank 0, against size.
#include "bench/common.h"

namespace copbench::bench {
namespace {

class Gather final : public Benchmark {
 public:
  std::string_view name() const override { return "gather"; }
  std::string_view description() const override { return "a block from every rank to rank 0"; }
  std::vector<Op> needs() const override { return {Op::gather}; }
  std::vector<std::size_t> default_sizes() const override { return {8, 512, 4096, 32768}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    for (std::size_t size : sizes_for(*this, params)) {
      std::vector<std::byte> mine = payload(size, b.rank());
      std::vector<std::byte> all(size * static_cast<std::size_t>(b.ranks()));
      report_collective(b, params, out, "gather/size:" + std::to_string(size), [&] { b.gather(mine, all, 0); },
                        {{"bytes", static_cast<double>(size)}});
    }
  }
};

class Scatter final : public Benchmark {
 public:
  std::string_view name() const override { return "scatter"; }
  std::string_view description() const override { return "a block from rank 0 to every rank"; }
  std::vector<Op> needs() const override { return {Op::scatter}; }
  std::vector<std::size_t> default_sizes() const override { return {8, 512, 4096, 32768}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    for (std::size_t size : sizes_for(*this, params)) {
      std::vector<std::byte> all = payload(size * static_cast<std::size_t>(b.ranks()));
      std::vector<std::byte> mine(size);
      report_collective(b, params, out, "scatter/size:" + std::to_string(size), [&] { b.scatter(all, mine, 0); },
                        {{"bytes", static_cast<double>(size)}});
    }
  }
};

const RegisterWorkload<Gather> registered_gather{WorkloadKind::benchmark, 250};
const RegisterWorkload<Scatter> registered_scatter{WorkloadKind::benchmark, 260};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
