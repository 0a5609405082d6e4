// A cluster of fake ranks for the window method's and the clock synchronisation's unit
// tests (window_test.cpp): one thread per rank, each with its own true time (no machine
// clock is read for a value a test asserts). Every collective is a rendezvous of all
// ranks that sets their true times by rule:
//   - sync(): every rank leaves at the last arrival + sync_cost + skew[r] (a barrier whose
//     release reaches the ranks at known different instants);
//   - barrier() (the measured call): every rank leaves at the last arrival + op_time;
//   - max_over_ranks(): every rank leaves at the last arrival + agree_cost;
//   - send/recv: a message arrives latency(from, to, n) after it was sent (the n-th on
//     that pair; asymmetric and varying when a test says so).
// Rank r's local clock reads true_time * rate[r] + offset[r] (clock()), and its wait moves
// its true time to the instant its clock reads the target (waiter()).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "copbench/backend.h"
#include "copbench/clock.h"

namespace copbench::testing {

struct FakeClusterSetup {
  int ranks = 4;
  double op_time = 0, sync_cost = 0, agree_cost = 0;
  std::vector<double> skew;             // per rank: sync()'s release delay
  std::vector<double> offset, rate;     // per rank: local clock = true * rate + offset
  std::function<double(int from, int to, int n)> latency = [](int, int, int) { return 1e-6; };
  // per rank: extra true time before the n-th measured call (a rank that is late).
  std::function<double(int rank, int n)> delay_before_call = [](int, int) { return 0.0; };
};

class FakeCluster {
 public:
  explicit FakeCluster(FakeClusterSetup s) : s_(std::move(s)), now_(static_cast<std::size_t>(s_.ranks), 1000.0) {
    s_.skew.resize(static_cast<std::size_t>(s_.ranks), 0.0);
    s_.offset.resize(static_cast<std::size_t>(s_.ranks), 0.0);
    s_.rate.resize(static_cast<std::size_t>(s_.ranks), 1.0);
    inputs_.resize(static_cast<std::size_t>(s_.ranks));
  }
  const FakeClusterSetup& setup() const { return s_; }
  double& now(int r) { return now_[static_cast<std::size_t>(r)]; }

  // A rendezvous: every rank hands its values (kind first, then its true time, then the
  // payload); all get every rank's.
  std::vector<std::vector<double>> rendezvous(int r, std::vector<double> mine) {
    std::unique_lock lock(mu_);
    const long generation = generation_;
    inputs_[static_cast<std::size_t>(r)] = std::move(mine);
    if (++arrived_ == s_.ranks) {
      for (const auto& in : inputs_)
        if (in.front() != inputs_.front().front()) throw std::logic_error("ranks in different collectives");
      outputs_ = inputs_;
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
    return outputs_;
  }

  void send(int from, int to, std::vector<std::byte> bytes) {
    std::lock_guard lock(mu_);
    int& n = sent_[{from, to}];
    const double at = now(from) + s_.latency(from, to, n++);
    mail_[{from, to}].push_back({at, std::move(bytes)});
    cv_.notify_all();
  }
  void recv(int from, int to, std::span<std::byte> out) {
    std::unique_lock lock(mu_);
    auto& box = mail_[{from, to}];
    cv_.wait(lock, [&] { return !box.empty(); });
    std::copy(box.front().second.begin(), box.front().second.end(), out.begin());
    now(to) = std::max(now(to), box.front().first);
    box.pop_front();
  }

 private:
  FakeClusterSetup s_;
  std::vector<double> now_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  long generation_ = 0;
  std::vector<std::vector<double>> inputs_, outputs_;
  std::map<std::pair<int, int>, int> sent_;
  std::map<std::pair<int, int>, std::deque<std::pair<double, std::vector<std::byte>>>> mail_;
};

class FakeRank final : public Backend {
 public:
  FakeRank(FakeCluster& c, int rank) : c_(c), rank_(rank) {}
  std::string name() const override { return "fake-cluster"; }
  std::string route() const override { return "-"; }
  int rank() const override { return rank_; }
  int ranks() const override { return c_.setup().ranks; }
  bool offers(Op op) const override { return op == Op::barrier || op == Op::echo; }

  void sync() override { leave_after(1, c_.setup().sync_cost + c_.setup().skew[idx()]); }
  void barrier() override {
    c_.now(rank_) += c_.setup().delay_before_call(rank_, calls_++);
    leave_after(2, c_.setup().op_time);
  }
  void max_over_ranks(std::span<double> values) override {
    std::vector<double> mine{3, c_.now(rank_)};
    mine.insert(mine.end(), values.begin(), values.end());
    const auto all = c_.rendezvous(rank_, std::move(mine));
    double last = 0;
    for (const auto& in : all) last = std::max(last, in[1]);
    c_.now(rank_) = last + c_.setup().agree_cost;
    for (std::size_t i = 0; i < values.size(); ++i)
      for (const auto& in : all) values[i] = std::max(values[i], in[i + 2]);
  }
  void send(int to, std::span<const std::byte> m) override { c_.send(rank_, to, {m.begin(), m.end()}); }
  void recv(int from, std::span<std::byte> m) override { c_.recv(from, rank_, m); }

  // Untimed work of this rank alone (an application run's setup): its true time moves on.
  void advance(double seconds) { c_.now(rank_) += seconds; }

  // This rank's local clock and its wait, for the window method and the clock sync.
  LocalClock clock() {
    LocalClock l;
    l.source = [this] { return c_.now(rank_) * c_.setup().rate[idx()] + c_.setup().offset[idx()]; };
    l.waiter = [this](double target) {
      const double t = (target - c_.setup().offset[idx()]) / c_.setup().rate[idx()];
      c_.now(rank_) = std::max(c_.now(rank_), t);
    };
    return l;
  }

 private:
  std::size_t idx() const { return static_cast<std::size_t>(rank_); }
  void leave_after(double kind, double extra) {
    const auto all = c_.rendezvous(rank_, {kind, c_.now(rank_)});
    double last = 0;
    for (const auto& in : all) last = std::max(last, in[1]);
    c_.now(rank_) = last + extra;
  }
  FakeCluster& c_;
  int rank_;
  int calls_ = 0;
};

}  // namespace copbench::testing
