// emulation: an emulated system beside its transport's floor (issue 26), so that a reader
// sees what is the system and what is the emulation. For a barrier, a reduce of 8 B (one
// double), a broadcast of 8 B and of 16 KB and a reduce of 8 KB (int and double), the
// same operation through the backend (cop: libcop, copdrv, copd) and through its floor
// (Backend::floor_*: the same frames, or for an array the same data bytes, through a bare
// controller process: cop/floor.h), repetitions of the two interleaved under the thesis's
// sync method and, where the run times by it (the default), under the window method too
// (one start instant on the common clock, issue 35: no barrier's release skew in either
// figure); every result of both checked against a local computation.
//
// One point per operation (emulation/barrier/nodes:N, emulation/reduce/double/size:8, ...:
// the names of the barrier, reduce and broadcast benchmarks' points after "emulation/"),
// timed as the system's; its counters:
//   floor_us, floor_min_us          the floor's median and fastest repetition
//   cop_over_floor(_min)            the system's median (fastest) over the floor's
//   copd_cpu_us_per_channel         the system's controller processes' CPU per operation
//                                   per channel (absent where they are not on this machine)
//   floor_cpu_us_per_channel        the floor controller's, likewise
//   copd_cpu_over_floor             the two CPU figures' ratio
//   window_us, floor_window_us      the system's and the floor's medians by the window method
//   cop_over_floor_window           their ratio (absent when the run does not time by window)
//   window_invalid_calls            calls of either left out there (a rank late for its instant)
// CPU per operation: on rank 0, the process's CPU clock around `n` operations, each after
// a barrier as the timed ones (one at a time: back to back, the ranks that wait for no
// result would pipeline the system's reductions and broadcasts, and a floor broadcast has
// no flow control), the barrier on the other controller so that it costs this one
// nothing: the system's operations each after a floor barrier, the floor's each after a
// sync (the system's barrier). (The cop backend's array calls take a barrier of their own
// when their GAS pool wraps, every 15-16 calls of 8-16 KB: under 1 % of their copd CPU.)
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "bench/common.h"

namespace copbench::bench {
namespace {

enum class Kind { barrier, reduce, broadcast };

struct Operation {
  Kind kind;
  Elem elem;
  std::size_t bytes;
  std::string name;
};

// One operation's two paths (the system's and the floor's), each with its own iteration
// count, so that every call has fresh values and a stale result shows.
class Checked {
 public:
  Checked(Backend& b, const Operation& op, bool floor) : b_(b), op_(op), floor_(floor) {
    const std::size_t count = std::max<std::size_t>(1, op.bytes / elem_size(op.elem));
    if (op.kind == Kind::reduce) {
      in_.assign(count * elem_size(op.elem), std::byte{0});
      out_.assign(in_.size(), std::byte{0});
    }
    if (op.kind == Kind::broadcast) out_.assign(op.bytes, std::byte{0});
  }

  void operator()() {
    ++k_;
    switch (op_.kind) {
      case Kind::barrier:
        floor_ ? b_.floor_barrier() : b_.barrier();
        return;
      case Kind::reduce:
        op_.elem == Elem::i32 ? reduce<std::int32_t>() : reduce<double>();
        return;
      case Kind::broadcast:
        broadcast();
        return;
    }
  }

 private:
  // Rank r's element i: r + i % 1000 + k % 1000 (exact in a double), the sum over ranks
  // on the root N(N-1)/2 + N (i % 1000 + k % 1000).
  template <class T>
  void reduce() {
    const std::size_t n = in_.size() / sizeof(T);
    auto* in = reinterpret_cast<T*>(in_.data());
    const long base = static_cast<long>(k_ % 1000);
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<T>(b_.rank() + static_cast<long>(i % 1000) + base);
    if (floor_) b_.floor_reduce(in_.data(), out_.data(), n, op_.elem, 0);
    else b_.reduce(in_.data(), out_.data(), n, op_.elem, ReduceOp::sum, 0);
    if (b_.rank() != 0) return;
    const auto* out = reinterpret_cast<const T*>(out_.data());
    const long ranks = b_.ranks();
    for (std::size_t i = 0; i < n; ++i) {
      const T want = static_cast<T>(ranks * (ranks - 1) / 2 + ranks * (static_cast<long>(i % 1000) + base));
      if (out[i] != want)
        throw std::runtime_error(fmt::format("emulation: {} {} gave {} at element {}, expected {} (call {})",
                                             floor_ ? "floor" : b_.name(), op_.name, out[i], i, want, k_));
    }
  }

  void broadcast() {
    auto byte_at = [&](std::size_t i) { return static_cast<std::byte>((i * 31 + k_ * 7) & 0xff); };
    if (b_.rank() == 0)
      for (std::size_t i = 0; i < out_.size(); ++i) out_[i] = byte_at(i);
    else
      std::fill(out_.begin(), out_.end(), std::byte{0});
    if (floor_) b_.floor_broadcast(out_, 0);
    else b_.broadcast(out_, 0);
    for (std::size_t i = 0; i < out_.size(); ++i)
      if (out_[i] != byte_at(i))
        throw std::runtime_error(fmt::format("emulation: {} {} gave byte {} at {} on rank {}, expected {} (call {})",
                                             floor_ ? "floor" : b_.name(), op_.name, static_cast<int>(out_[i]), i,
                                             b_.rank(), static_cast<int>(byte_at(i)), k_));
  }

  Backend& b_;
  Operation op_;
  bool floor_;
  std::size_t k_ = 0;
  std::vector<std::byte> in_, out_;
};

class Emulation final : public Benchmark {
 public:
  std::string_view name() const override { return "emulation"; }
  std::string_view description() const override {
    return "the system beside its transport's floor: barrier, reduce 8 B / 8 KB, broadcast 8 B / 16 KB, "
           "system ÷ floor and controller CPU per operation per channel";
  }
  std::vector<Op> needs() const override { return {Op::barrier, Op::reduce, Op::broadcast, Op::floor_loops}; }
  // Its points are the floors of the barrier, reduce and broadcast points of their names.
  ReportTraits report_traits() const override {
    ReportTraits t;
    t.floors_of_points = true;
    return t;
  }
  int min_ranks() const override { return 2; }
  // Without --sizes: issue 26's points, reduce 8 B (one double) and 8 KB (int and double),
  // broadcast 8 B and 16 KB; with sizes, reduce (int and double) and broadcast at each.
  std::vector<std::size_t> default_sizes() const override { return {8, 8192, 16384}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    std::vector<Operation> ops = {{Kind::barrier, Elem::f64, 0, "barrier/nodes:" + std::to_string(b.nodes())}};
    auto reduce = [&](Elem e, std::size_t s) {
      ops.push_back({Kind::reduce, e, s, fmt::format("reduce/{}/size:{}", elem_name(e), s)});
    };
    auto cast = [&](std::size_t s) { ops.push_back({Kind::broadcast, Elem::f64, s, fmt::format("broadcast/size:{}", s)}); };
    if (params.sizes.empty()) {
      reduce(Elem::f64, 8);
      cast(8);
      cast(16384);
      reduce(Elem::i32, 8192);
      reduce(Elem::f64, 8192);
    } else {
      for (std::size_t s : params.sizes) {
        if (s < 8 || s % 8 != 0) throw std::invalid_argument(fmt::format("emulation: size {} is not a multiple of 8 bytes", s));
        reduce(Elem::i32, s);
        reduce(Elem::f64, s);
        cast(s);
      }
    }
    const double overhead = timer_overhead_seconds();
    const int n = std::max(20, params.timing.iterations * std::max(1, params.timing.min_reps));
    for (const Operation& op : ops) {
      Checked system(b, op, false), floor(b, op, true);
      Batch sys_batch = timed_collective(b, std::ref(system), overhead);
      Batch floor_batch = timed_collective(b, std::ref(floor), overhead);
      auto [sys, flo] = measure_interleaved(b, params.timing, sys_batch, floor_batch);
      const std::optional<double> copd = cpu_of(
          n, std::ref(system), [&] { b.floor_barrier(); }, [&] { return b.controller_cpu_seconds(); });
      const std::optional<double> floor_cpu =
          cpu_of(n, std::ref(floor), [&] { b.sync(); }, [&] { return b.floor_cpu_seconds(); });
      PointResult p = make_point("emulation/" + op.name, b, std::move(sys));
      const double channels = b.nodes();
      p.counters["channels"] = channels;
      if (op.kind != Kind::barrier) p.counters["bytes"] = static_cast<double>(op.bytes);
      p.counters["floor_us"] = flo.median * 1e6;
      p.counters["floor_min_us"] = flo.min * 1e6;
      if (flo.median > 0) p.counters["cop_over_floor"] = p.summary.median / flo.median;
      if (flo.min > 0) p.counters["cop_over_floor_min"] = p.summary.min / flo.min;
      std::optional<double> copd_per, floor_per;
      if (copd) copd_per = *copd / channels * 1e6;
      if (floor_cpu) floor_per = *floor_cpu / channels * 1e6;
      if (copd_per) p.counters["copd_cpu_us_per_channel"] = *copd_per;
      if (floor_per) p.counters["floor_cpu_us_per_channel"] = *floor_per;
      if (copd_per && floor_per && *floor_per > 0) p.counters["copd_cpu_over_floor"] = *copd_per / *floor_per;
      p.labels["floor"] = "cop/floor.h";
      add_window_figures(b, params, system, floor, p);
      out.report(std::move(p));
    }
  }

 private:
  // The system and its floor timed by the window method, interleaved (issue 35: the sync
  // method's floor figure carries the system barrier's release skew, which flatters the
  // ratio): counters beside the sync point's, where the run's methods name window.
  static void add_window_figures(Backend& b, const RunParams& params, Checked& system, Checked& floor,
                                 PointResult& p) {
    const auto& methods = params.timing.methods;
    if (std::find(methods.begin(), methods.end(), kMethodWindow) == methods.end()) return;
    const double overhead = timer_overhead_seconds();
    Batch sys_batch = timed_window(b, std::ref(system), overhead);
    Batch floor_batch = timed_window(b, std::ref(floor), overhead);
    auto [sys, flo] = measure_interleaved(b, params.timing, sys_batch, floor_batch);
    p.counters["window_us"] = sys.median * 1e6;
    p.counters["floor_window_us"] = flo.median * 1e6;
    if (flo.median > 0) p.counters["cop_over_floor_window"] = sys.median / flo.median;
    p.counters["window_invalid_calls"] = static_cast<double>(sys.invalid_calls + flo.invalid_calls);
  }

  // Rank 0's reading of a process's CPU per operation over `n` calls of `op`, each after
  // `separate` (a barrier every rank takes part in); nullopt where there is no reading
  // (other ranks, a process not on this machine).
  static std::optional<double> cpu_of(int n, const std::function<void()>& op,
                                      const std::function<void()>& separate,
                                      const std::function<std::optional<double>()>& read) {
    separate();
    const std::optional<double> before = read();
    for (int i = 0; i < n; ++i) {
      separate();
      op();
    }
    separate();
    const std::optional<double> after = read();
    if (!before || !after) return std::nullopt;
    return (*after - *before) / n;
  }
};

const RegisterWorkload<Emulation> registered{WorkloadKind::benchmark, 410};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
