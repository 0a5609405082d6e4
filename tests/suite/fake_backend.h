// A Backend for unit tests of the timing code (copbench/timing.h, timed_batch.h): it
// stands in for rank 0 of `ranks`, every operation and harness service costs a fixed time
// on a fake clock it owns, and it counts what it was asked to do. The batch builders read
// that clock (clock()), so the time of every timed region is known in the test. Costs
// that are powers of two keep every sum exact in floating point, so a test can compare
// with EXPECT_DOUBLE_EQ what it computed by hand.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "copbench/backend.h"
#include "copbench/timing.h"

namespace copbench::testing {

class FakeBackend final : public Backend {
 public:
  struct Costs {
    double sync = 0;     // the harness's sync: outside every timed region
    double barrier = 0;
    double send = 0;
    double recv = 0;
  };
  FakeBackend(int ranks, Costs costs) : ranks_(ranks), costs_(costs) {}

  std::string name() const override { return "fake"; }
  std::string route() const override { return "-"; }
  int rank() const override { return 0; }
  int ranks() const override { return ranks_; }
  bool offers(Op op) const override { return op == Op::barrier || op == Op::echo; }

  void sync() override {
    ++syncs;
    now_ += costs_.sync;
  }
  // The other ranks' values are what `others` writes into a copy of this rank's; the
  // result is the element-wise maximum, as the real backends give.
  void max_over_ranks(std::span<double> values) override {
    ++max_calls;
    if (!others) return;
    std::vector<double> theirs(values.begin(), values.end());
    others(max_calls, theirs);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::max(values[i], theirs[i]);
  }
  // The fake clock doubles as the modelled-hardware clock where a test asks for one.
  std::optional<double> modelled_clock() override {
    return with_modelled_clock ? std::optional<double>(now_) : std::nullopt;
  }

  void barrier() override {
    ++barriers;
    now_ += costs_.barrier;
  }
  void send(int, std::span<const std::byte>) override {
    ++sends;
    now_ += costs_.send;
  }
  void recv(int, std::span<std::byte>) override {
    ++recvs;
    now_ += costs_.recv;
  }

  double now() const { return now_; }
  void advance(double seconds) { now_ += seconds; }
  // What the batch builders read in place of steady_clock.
  auto clock() {
    return [this] { return now_; };
  }

  // call: 1 for the first max_over_ranks; values: what the other ranks would contribute.
  std::function<void(int call, std::vector<double>& values)> others;
  bool with_modelled_clock = false;
  int syncs = 0, barriers = 0, sends = 0, recvs = 0, max_calls = 0;

 private:
  int ranks_;
  Costs costs_;
  double now_ = 1024.0;  // not 0: a region's time must come from a difference of readings
};

// A batch whose repetitions take the times a test scripts: repetition k (0 = the first
// after the warm-up) gives every iteration values[k] seconds (the last value once they
// run out), and advances the fake clock by that much per iteration, so a modelled clock
// sees it too. It records the size of every call: the warm-up's (when warmup_pending:
// measure() warms up once when config.warmup > 0), then each repetition's.
struct ScriptedBatch {
  ScriptedBatch(FakeBackend& b, std::vector<double> v) : backend(b), values(std::move(v)) {}
  FakeBackend& backend;
  std::vector<double> values;
  bool warmup_pending = true;
  std::vector<std::size_t> calls;

  Batch batch(std::string method = "scripted") {
    return Batch([this](std::vector<double>& seconds) { run(seconds); }, std::move(method));
  }

 private:
  std::size_t repetition_ = 0;

  void run(std::vector<double>& seconds) {
    calls.push_back(seconds.size());
    if (warmup_pending) {
      warmup_pending = false;
      return;
    }
    const double v = values[std::min(repetition_++, values.size() - 1)];
    for (double& x : seconds) {
      x = v;
      backend.advance(v);
    }
  }
};

}  // namespace copbench::testing
