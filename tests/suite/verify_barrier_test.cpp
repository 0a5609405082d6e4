// `copbench verify`'s barrier check (suite/worker/verify_collectives.cpp) on ranks that are
// threads of this test, with a logical clock per thread (installed as the simulated clock
// and pause of copbench/timing.h and pause.h; a meeting of the ranks moves every clock to
// the latest one), so that nothing here depends on the machine's load: a correct barrier
// must pass on every rank, a barrier that lets a rank through before the last one has
// entered must be caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "copbench/backend.h"
#include "copbench/pause.h"
#include "copbench/timing.h"
#include "worker/verify_checks.h"

namespace copbench {
namespace {

thread_local double logical_now = 0.0;
double read_logical_clock() { return logical_now; }
void logical_pause(double seconds) { logical_now += seconds; }

// What the ranks share: a rendezvous that also brings every rank's clock to the latest
// arrival's, as a real collective does (nobody leaves before the last one came).
struct Meeting {
  explicit Meeting(int n) : rendezvous(n), arrivals(static_cast<std::size_t>(n)) {}
  // Every rank leaves with the maximum over ranks of `value`.
  double exchange(int rank, double value) {
    {
      std::lock_guard lock(mutex);
      arrivals[static_cast<std::size_t>(rank)] = value;
    }
    rendezvous.arrive_and_wait();
    double result = 0.0;
    {
      std::lock_guard lock(mutex);
      result = *std::max_element(arrivals.begin(), arrivals.end());
    }
    rendezvous.arrive_and_wait();
    return result;
  }
  std::barrier<> rendezvous;
  std::mutex mutex;
  std::vector<double> arrivals;
};

class ThreadRank final : public Backend {
 public:
  ThreadRank(int rank, int ranks, Meeting& meeting, bool broken_barrier)
      : rank_(rank), ranks_(ranks), meeting_(meeting), broken_(broken_barrier) {}
  std::string name() const override { return "threads"; }
  std::string route() const override { return "-"; }
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  bool offers(Op op) const override { return op == Op::barrier; }
  void sync() override { logical_now = meeting_.exchange(rank_, logical_now); }
  void max_over_ranks(std::span<double> values) override {
    for (double& v : values) v = meeting_.exchange(rank_, v);
    sync();
  }
  // The broken one returns at once: the bug of a barrier that does not wait.
  void barrier() override {
    if (!broken_) sync();
  }

 private:
  int rank_;
  int ranks_;
  Meeting& meeting_;
  bool broken_;
};

// verify::barrier's finding on every rank of `n`.
std::vector<std::string> run_check(int n, bool broken) {
  simulated_clock().now = read_logical_clock;
  simulated_pause() = logical_pause;
  Meeting meeting(n);
  std::vector<std::string> found(static_cast<std::size_t>(n));
  std::vector<std::thread> ranks;
  for (int r = 0; r < n; ++r)
    ranks.emplace_back([&, r] {
      logical_now = 1000.0;
      ThreadRank me(r, n, meeting, broken);
      found[static_cast<std::size_t>(r)] = verify::barrier(me);
    });
  for (std::thread& t : ranks) t.join();
  simulated_clock().now = nullptr;
  simulated_pause() = nullptr;
  return found;
}

TEST(VerifyBarrier, ACorrectBarrierPassesOnEveryRank) {
  for (int n : {2, 3, 5}) {
    for (const std::string& f : run_check(n, false)) EXPECT_EQ(f, "") << n << " ranks";
  }
}

TEST(VerifyBarrier, ABarrierThatDoesNotWaitIsCaughtOnTheRanksThatLeftEarly) {
  const std::vector<std::string> found = run_check(3, true);
  EXPECT_NE(found[0].find("rank 0 left the barrier"), std::string::npos) << found[0];
  EXPECT_NE(found[1].find("rank 1 left the barrier"), std::string::npos) << found[1];
  EXPECT_EQ(found[2], "") << "the late rank itself waited its own pause";
}

}  // namespace
}  // namespace copbench
