// sim-cop's operations beyond barrier, reduce and broadcast (baselines/simcop/ops_*.cpp),
// on a simulation run in this process: 66 nodes, so two levels whose last level-1 has two
// nodes (ranks 64 and 65), and every cross-level path of each operation is taken. Each
// case checks results against a local computation and the refusals (a clear exception,
// no value), and the simulated time of an uncontended shared read against the links'
// and the controller's figures. SimGrid runs one engine a process: each case simulates in
// a child process of its own (fork), which hands its problems back on a pipe.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "simcop/simcop_backend.h"

namespace {

namespace sg4 = simgrid::s4u;
using copbench::Elem;
using copbench::ReduceOp;
using copbench::simcop::SimCopBackend;
using copbench::simcop::System;

using NodeFn = std::function<void(SimCopBackend&, std::vector<std::string>& problems)>;

// Runs `fn` on every node of a `nodes`-node sim-cop system, in this process; returns
// every rank's problems (an exception that escapes `fn` is one, and ends the simulation).
std::vector<std::string> simulate_here(int nodes, const NodeFn& fn) {
  int argc = 1;
  char name[] = "simcop_ops_test";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("contexts/stack-size:1024");
  // The thesis's COP (CopHardware's defaults: results/platforms/thesis.xml's cop:* props).
  const cop::model::CopHardware hw;
  System sys;
  sys.timing = hw.timing;
  sys.net = copbench::simcop::build_network(nodes, hw);
  sys.mail = copbench::simcop::make_mailboxes(sys.net, sys.timing);
  sys.meeting = sg4::Barrier::create(unsigned(nodes));
  auto controller = [&sys](const std::string& n, sg4::Host* host, int level1) {
    auto actor = std::make_shared<copbench::simcop::ControllerActor>(sys.net, sys.mail, level1, sys.timing);
    sg4::Actor::create(n, host, [actor] { (*actor)(); })->daemonize();
  };
  for (int k = 0; k < sys.net.level1s; ++k) controller(fmt::format("cop-1-{}", k), sys.net.level1_hosts[size_t(k)], k);
  if (sys.net.two_levels()) controller("cop-2", sys.net.level2_host, -1);
  std::vector<std::string> problems;
  int finished = 0;
  for (int i = 0; i < nodes; ++i)
    sg4::Actor::create(fmt::format("node-{}", i), sys.net.node_hosts[size_t(i)], [&, i] {
      try {
        SimCopBackend b(sys, i);
        fn(b, problems);
        ++finished;
      } catch (const std::exception& e) {
        problems.push_back(fmt::format("rank {}: {}", i, e.what()));
        sg4::Actor::kill_all();
      }
    });
  engine.run();
  if (finished != nodes && problems.empty()) problems.push_back(fmt::format("{} of {} nodes finished", finished, nodes));
  return problems;
}

// simulate_here in a child process: its problems, one a line, come back on a pipe.
std::vector<std::string> simulate(int nodes, const NodeFn& fn) {
  int fds[2];
  if (pipe(fds) != 0) return {"pipe failed"};
  const pid_t child = fork();
  if (child < 0) return {"fork failed"};
  if (child == 0) {
    close(fds[0]);
    std::string out;
    for (const std::string& p : simulate_here(nodes, fn)) out += p + "\n";
    const bool written = write(fds[1], out.data(), out.size()) == ssize_t(out.size());
    _exit(written ? 0 : 3);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  std::vector<std::string> problems;
  for (size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
    problems.push_back(text.substr(at, end - at));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    problems.push_back(fmt::format("the simulation's process ended with status {}", status));
  return problems;
}

void expect(bool ok, std::vector<std::string>& problems, const std::string& what) {
  if (!ok) problems.push_back(what);
}

// Fetch-and-add in turn, rank by rank: each rank's old value is the sum of the earlier
// ranks' additions (rank r adds r + 1), and the word ends with all of them; rank 0's
// word is on level-1 0, so ranks 64 and 65 add through the level 2.
TEST(SimCopOps, SharedRmwInTurnIsTheRunningSum) {
  const auto problems = simulate(66, [](SimCopBackend& b, std::vector<std::string>& p) {
    for (int turn = 0; turn < b.ranks(); ++turn) {
      if (turn == b.rank()) {
        const int64_t old = b.shared_fetch_add(0, 5, b.rank() + 1);
        expect(old == int64_t(b.rank()) * (b.rank() + 1) / 2, p, fmt::format("rank {} fetched {}", b.rank(), old));
      }
      b.sync();
    }
    const int64_t total = b.shared_read(0, 5);
    expect(total == 66 * 67 / 2, p, fmt::format("rank {} read a total of {}", b.rank(), total));
    // Rank 65's words, read from level-1 0 through the level 2: still zero.
    expect(b.shared_read(65, 5) == 0, p, "rank 65's word 5 is not zero");
  });
  EXPECT_TRUE(problems.empty()) << fmt::format("{}", fmt::join(problems, "\n"));
}

// The ticket lock, every rank three times at once: whoever holds it finds nobody else
// inside (an occupancy count kept with fetch-and-add), stays a simulated microsecond,
// and leaves; after all, the count is zero and the lock's words have served 3 x 66.
TEST(SimCopOps, LockIsHeldByOneAtATimeAndReleased) {
  const auto problems = simulate(66, [](SimCopBackend& b, std::vector<std::string>& p) {
    for (int round = 0; round < 3; ++round) {
      b.lock(1);
      const int64_t inside = b.shared_fetch_add(0, 6, 1);
      expect(inside == 0, p, fmt::format("rank {} found {} inside the lock", b.rank(), inside));
      sg4::this_actor::sleep_for(1e-6);
      b.shared_fetch_add(0, 6, -1);
      b.unlock(1);
    }
    b.sync();
    expect(b.shared_read(0, 6) == 0, p, "the occupancy count is not zero after every release");
    // Lock 1's next-ticket and now-serving words (cop_tas::kLockWords + 2, + 3).
    expect(b.shared_read(0, 66) == 3 * 66 && b.shared_read(0, 67) == 3 * 66, p, "the lock's tickets are not all served");
    b.sync();
    b.lock(1);  // free again: taken and released
    b.unlock(1);
  });
  EXPECT_TRUE(problems.empty()) << fmt::format("{}", fmt::join(problems, "\n"));
}

// The lock guards a plain read-then-add of a word (no atomic increment): every rank, 4
// times, reads word 7 and adds 1 to it inside the lock; the add's old value is what the
// read found (nobody else touched the word in between), and the word ends at 4 x 66.
// Rank 0's words are on level-1 0, so ranks 64 and 65 hand over through the level 2.
// The holders come in ticket order: the now-serving word shows the count of holders before.
TEST(SimCopOps, LockSerializesAReadThenAdd) {
  const auto problems = simulate(66, [](SimCopBackend& b, std::vector<std::string>& p) {
    for (int round = 0; round < 4; ++round) {
      b.lock(2);
      const int64_t seen = b.shared_read(0, 7);
      const int64_t old = b.shared_fetch_add(0, 7, 1);
      expect(old == seen, p, fmt::format("rank {} read {} but added to {}", b.rank(), seen, old));
      // Lock 2's now-serving word (cop_tas::kLockWords + 5): this holder's ticket.
      const int64_t serving = b.shared_read(0, 69);
      expect(serving == old, p, fmt::format("rank {} holds ticket {} at count {}", b.rank(), serving, old));
      b.unlock(2);
    }
    b.sync();
    expect(b.shared_read(0, 7) == 4 * 66, p, fmt::format("the count is {}, not {}", b.shared_read(0, 7), 4 * 66));
  });
  EXPECT_TRUE(problems.empty()) << fmt::format("{}", fmt::join(problems, "\n"));
}

std::vector<std::byte> block_of(int rank, size_t bytes) {
  std::vector<std::byte> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = std::byte((rank * 7 + i * 3 + 1) & 0xFF);
  return v;
}

// gather to rank 65 (the last level-1) and scatter from rank 1: the blocks in rank order;
// 20 bytes a block (3 words, the last one partial).
TEST(SimCopOps, GatherAndScatterKeepRankOrder) {
  const auto problems = simulate(66, [](SimCopBackend& b, std::vector<std::string>& p) {
    const size_t block = 20, n = size_t(b.ranks());
    std::vector<std::byte> all(block * n);
    b.gather(block_of(b.rank(), block), all, 65);
    if (b.rank() == 65)
      for (size_t r = 0; r < n; ++r)
        expect(std::memcmp(all.data() + r * block, block_of(int(r), block).data(), block) == 0, p,
               fmt::format("gathered block {} differs", r));
    std::vector<std::byte> source;
    for (size_t r = 0; r < n; ++r) {
      const auto v = block_of(int(r) + 100, block);
      source.insert(source.end(), v.begin(), v.end());
    }
    std::vector<std::byte> mine(block);
    b.scatter(b.rank() == 1 ? source : std::vector<std::byte>(block * n), mine, 1);
    expect(mine == block_of(b.rank() + 100, block), p, fmt::format("rank {} got another's block", b.rank()));
  });
  EXPECT_TRUE(problems.empty()) << fmt::format("{}", fmt::join(problems, "\n"));
}

// scatter from rank 5 at 200 nodes, more than the root's 176 staging words: in rounds of
// 176 ranks (ops_gather.cpp), 20 bytes a block (3 words: three slices of words, each in
// two rounds); every rank gets its own block, byte for byte; and a gather of the same.
TEST(SimCopOps, ScatterAbove176RanksStagesInRounds) {
  const auto problems = simulate(200, [](SimCopBackend& b, std::vector<std::string>& p) {
    const size_t block = 20, n = size_t(b.ranks());
    std::vector<std::byte> source;
    for (size_t r = 0; r < n; ++r) {
      const auto v = block_of(int(r) + 300, block);
      source.insert(source.end(), v.begin(), v.end());
    }
    std::vector<std::byte> mine(block);
    b.scatter(b.rank() == 5 ? source : std::vector<std::byte>(block * n), mine, 5);
    expect(mine == block_of(b.rank() + 300, block), p, fmt::format("rank {} got another's block", b.rank()));
    std::vector<std::byte> all(block * n);
    b.gather(block_of(b.rank(), block), all, 199);
    if (b.rank() == 199)
      for (size_t r = 0; r < n; ++r)
        expect(std::memcmp(all.data() + r * block, block_of(int(r), block).data(), block) == 0, p,
               fmt::format("gathered block {} differs", r));
  });
  EXPECT_TRUE(problems.empty()) << fmt::format("{}", fmt::join(problems, "\n"));
}

// multicast from rank 3 to ranks 2, 64 and 65 (both level-1s; rank 64 sets its level-1's
// mask) and a 2-root reduction to ranks 0 and 65: members and roots have the data, the
// others' buffers are untouched.
TEST(SimCopOps, MulticastAndReduceRootsReachTheirSubsetOnly) {
  const auto problems = simulate(66, [](SimCopBackend& b, std::vector<std::string>& p) {
    const std::vector<int> members = {2, 64, 65};
    const bool member = std::find(members.begin(), members.end(), b.rank()) != members.end();
    const std::vector<std::byte> data = block_of(3, 300);
    std::vector<std::byte> buf = b.rank() == 3 ? data : std::vector<std::byte>(300, std::byte{0xee});
    b.multicast(buf, 3, members);
    if (member || b.rank() == 3)
      expect(buf == data, p, fmt::format("member {} has other data", b.rank()));
    else
      expect(buf == std::vector<std::byte>(300, std::byte{0xee}), p, fmt::format("non-member {} was written", b.rank()));
    const std::vector<int> roots = {0, 65};
    std::vector<int> in(130), out(130, -1);
    std::iota(in.begin(), in.end(), b.rank());  // element k: rank + k; 130: two bursts
    b.reduce_roots(in.data(), out.data(), in.size(), Elem::i32, ReduceOp::sum, roots);
    const bool root = b.rank() == 0 || b.rank() == 65;
    for (int k = 0; k < 130; ++k) {
      const int want = root ? 65 * 66 / 2 + 66 * k : -1;
      if (out[size_t(k)] != want) {
        p.push_back(fmt::format("rank {} element {}: {} != {}", b.rank(), k, out[size_t(k)], want));
        break;
      }
    }
  });
  EXPECT_TRUE(problems.empty()) << fmt::format("{}", fmt::join(problems, "\n"));
}

// Refusals: a read beyond a task address space (the controller's NACK address range,
// from either level-1 to the other), a multicast naming its root as a member, unsorted
// roots: each an exception on the caller, no value returned; the system goes on.
TEST(SimCopOps, BadArgumentsAreRefused) {
  const auto problems = simulate(66, [](SimCopBackend& b, std::vector<std::string>& p) {
    auto refused = [&](const char* what, const std::function<void()>& call, const char* says) {
      try {
        call();
        p.push_back(fmt::format("rank {}: {} was not refused", b.rank(), what));
      } catch (const std::exception& e) {
        expect(std::string(e.what()).find(says) != std::string::npos, p,
               fmt::format("rank {}: {} refused with '{}'", b.rank(), what, e.what()));
      }
    };
    if (b.rank() == 0 || b.rank() == 65)
      refused("a read beyond the task address space", [&] { b.shared_read(65 - b.rank(), 300); }, "address");
    std::vector<std::byte> buf(8);
    const int with_root[] = {1, 3};
    refused("a multicast to its root", [&] { b.multicast(buf, 3, with_root); }, "root");
    int in[1] = {1}, out[1] = {0};
    const int unsorted[] = {5, 2};
    refused("unsorted roots", [&] { b.reduce_roots(in, out, 1, Elem::i32, ReduceOp::sum, unsorted); }, "sorted");
    b.sync();
    expect(b.shared_fetch_add(0, 9, 1) >= 0, p, "the system does not go on after the refusals");
  });
  EXPECT_TRUE(problems.empty()) << fmt::format("{}", fmt::join(problems, "\n"));
}

// An uncontended read on one controller: the command up its link (t_CN-COP, with its 40 ns
// on the wire), RSRAM serviced (t_OP), its word and ACK down (t_COP-CN): plausible times
// from the same Timing the model uses.
TEST(SimCopOps, UncontendedReadTakesTheLinksAndOneCommand) {
  const auto problems = simulate(2, [](SimCopBackend& b, std::vector<std::string>& p) {
    b.sync();
    if (b.rank() != 0) return;
    const double start = sg4::Engine::get_clock();
    b.shared_read(1, 0);
    const double cycles = (sg4::Engine::get_clock() - start) * 1e9 / cop::model::Timing{}.p_clk_ns;
    const cop::model::Timing t;
    const double want = double(t.t_cn_cop + t.t_op_int + t.t_cop_cn);
    expect(std::abs(cycles - want) <= 8, p, fmt::format("a read took {} cycles, not {} +- 8", cycles, want));
  });
  EXPECT_TRUE(problems.empty()) << fmt::format("{}", fmt::join(problems, "\n"));
}

}  // namespace
