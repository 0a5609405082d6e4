// `copbench verify`: every offered operation of a backend checked against a local
// computation, on whatever number of nodes it was started with. Verification failures
// are agreed over ranks so every rank returns the same verdict.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "copbench/worker.h"

namespace copbench {
namespace {

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 7 + static_cast<std::size_t>(seed) * 13 + 1) & 0xff);
  return v;
}

class Verifier {
 public:
  explicit Verifier(Backend& b) : b_(b), n_(b.ranks()), me_(b.rank()) {}

  std::vector<std::string> run(bool& all_ok) {
    check(Op::echo, [&] { return echo(); });
    check(Op::barrier, [&] { return barrier(); });
    check(Op::reduce, [&] { return reduce(); });
    check(Op::reduce_roots, [&] { return reduce_roots(); });
    check(Op::broadcast, [&] { return broadcast(); });
    check(Op::multicast, [&] { return multicast(); });
    check(Op::gather, [&] { return gather(); });
    check(Op::scatter, [&] { return scatter(); });
    check(Op::scan, [&] { return scan(); });
    check(Op::shared_write, [&] { return shared_read_write(); });
    check(Op::shared_rmw, [&] { return shared_rmw(); });
    check(Op::shared_cas, [&] { return shared_cas(); });
    check(Op::lock, [&] { return lock(); });
    check(Op::fence, [&] { return fence(); });
    check(Op::fence_window, [&] { return fence_window(); });
    check(Op::fence_barrier, [&] { return fence_barrier(); });
    check(Op::server_lock, [&] { return server_lock(); });
    all_ok = all_ok_;
    return lines_;
  }

 private:
  // Runs one check on every rank; a failure anywhere fails it everywhere.
  template <class F>
  void check(Op op, F&& body) {
    if (!b_.offers(op)) {
      lines_.push_back(fmt::format("-- {}: not offered", op_name(op)));
      return;
    }
    b_.sync();
    std::string problem = body();
    std::vector<double> failed{problem.empty() ? 0.0 : static_cast<double>(me_ + 1)};
    b_.max_over_ranks(failed);
    if (failed[0] == 0.0) {
      lines_.push_back(fmt::format("ok {}", op_name(op)));
    } else {
      all_ok_ = false;
      lines_.push_back(fmt::format("FAIL {}: {}", op_name(op),
                                   problem.empty() ? fmt::format("on rank {}", static_cast<int>(failed[0]) - 1)
                                                   : problem));
    }
  }

  std::string echo() {
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{70000}}) {
      for (int peer = 1; peer < n_; ++peer) {
        if (me_ == 0) {
          std::vector<std::byte> out = pattern(size, peer), back(size);
          b_.send(peer, out);
          b_.recv(peer, back);
          for (std::size_t i = 0; i < size; ++i)
            if (back[i] != (out[i] ^ std::byte{0x5a})) return fmt::format("echo from {} of {} B differs at byte {}", peer, size, i);
        } else if (me_ == peer) {
          std::vector<std::byte> buf(size);
          b_.recv(0, buf);
          for (std::byte& x : buf) x ^= std::byte{0x5a};
          b_.send(0, buf);
        }
      }
    }
    return {};
  }

  // Nobody may leave a barrier before the last rank has entered it: the last rank
  // enters 50 ms late, everyone else must spend most of that in the barrier.
  std::string barrier() {
    for (int i = 0; i < 20; ++i) b_.barrier();
    constexpr double kDelay = 0.05;
    double t0 = now_seconds();
    if (me_ == n_ - 1) std::this_thread::sleep_for(std::chrono::duration<double>(kDelay));
    b_.barrier();
    double waited = now_seconds() - t0;
    if (n_ > 1 && waited < 0.8 * kDelay) return fmt::format("rank {} left the barrier after {:.1f} ms", me_, waited * 1e3);
    return {};
  }

  // Every reduce function on int and double, against the same reduction done locally;
  // `reduce_to(roots, elem, op, in, out)` is the backend's call, the result checked on
  // every rank in `roots`.
  template <typename Call>
  std::string check_reduce(std::span<const int> roots, const std::string& what, Call reduce_to) {
    const std::size_t count = 1000;
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
      std::vector<std::int32_t> ii(count), io(count, -1), iexp(count);
      std::vector<double> di(count), dout(count, -1.0), dexp(count);
      for (std::size_t k = 0; k < count; ++k) {
        ii[k] = static_cast<std::int32_t>(me_ * 1000 + static_cast<int>(k) * ((me_ % 2) ? 1 : -1));
        di[k] = static_cast<double>(ii[k]) + 0.25;
        for (int r = 0; r < n_; ++r) {
          std::int32_t v = static_cast<std::int32_t>(r * 1000 + static_cast<int>(k) * ((r % 2) ? 1 : -1));
          double dv = static_cast<double>(v) + 0.25;
          if (r == 0) {
            iexp[k] = v;
            dexp[k] = dv;
          } else if (op == ReduceOp::sum) {
            iexp[k] += v;
            dexp[k] += dv;
          } else if (op == ReduceOp::max) {
            iexp[k] = std::max(iexp[k], v);
            dexp[k] = std::max(dexp[k], dv);
          } else {
            iexp[k] = std::min(iexp[k], v);
            dexp[k] = std::min(dexp[k], dv);
          }
        }
      }
      reduce_to(Elem::i32, op, ii.data(), io.data(), count);
      reduce_to(Elem::f64, op, di.data(), dout.data(), count);
      if (std::find(roots.begin(), roots.end(), me_) == roots.end()) continue;
      for (std::size_t k = 0; k < count; ++k) {
        if (io[k] != iexp[k]) return fmt::format("int {} element {}: {} != {}", what, k, io[k], iexp[k]);
        if (std::abs(dout[k] - dexp[k]) > 1e-9 * std::max(1.0, std::abs(dexp[k])))
          return fmt::format("double {} element {}: {} != {}", what, k, dout[k], dexp[k]);
      }
    }
    return {};
  }

  std::string reduce() {
    for (int root : {0, n_ - 1}) {
      const int roots[1] = {root};
      std::string e = check_reduce(roots, fmt::format("reduce (root {})", root),
                                   [&](Elem elem, ReduceOp op, void* in, void* out, std::size_t count) {
                                     b_.reduce(in, out, count, elem, op, root);
                                   });
      if (!e.empty()) return e;
    }
    return {};
  }

  // Several roots in one operation: the first and last rank, then every rank.
  std::string reduce_roots() {
    std::vector<int> ends = {0};
    if (n_ > 1) ends.push_back(n_ - 1);
    std::vector<int> all(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) all[static_cast<std::size_t>(r)] = r;
    for (const std::vector<int>& roots : {ends, all}) {
      std::string e = check_reduce(roots, fmt::format("reduce to {} roots", roots.size()),
                                   [&](Elem elem, ReduceOp op, void* in, void* out, std::size_t count) {
                                     b_.reduce_roots(in, out, count, elem, op, roots);
                                   });
      if (!e.empty()) return e;
    }
    return {};
  }

  std::string broadcast() {
    for (int root : {0, n_ - 1}) {
      for (std::size_t size : {std::size_t{0}, std::size_t{3}, std::size_t{5000}, std::size_t{70000}}) {
        std::vector<std::byte> expect = pattern(size, root + 3);
        std::vector<std::byte> buf = me_ == root ? expect : std::vector<std::byte>(size);
        b_.broadcast(buf, root);
        if (buf != expect) return fmt::format("broadcast of {} B from {} differs on rank {}", size, root, me_);
      }
    }
    return {};
  }

  std::string multicast() {
    for (int root : {0, n_ - 1}) {
      std::vector<int> members;
      for (int r = 0; r < n_; ++r)
        if (r != root && r % 2 == 1) members.push_back(r);
      bool member = std::find(members.begin(), members.end(), me_) != members.end();
      for (std::size_t size : {std::size_t{0}, std::size_t{8}, std::size_t{5000}}) {
        std::vector<std::byte> expect = pattern(size, root + 5);
        std::vector<std::byte> untouched(size, std::byte{0xee});
        std::vector<std::byte> buf = me_ == root ? expect : untouched;
        b_.multicast(buf, root, members);
        if ((me_ == root || member) && buf != expect)
          return fmt::format("multicast of {} B from {} differs on member {}", size, root, me_);
        if (me_ != root && !member && buf != untouched)
          return fmt::format("multicast from {} reached non-member {}", root, me_);
      }
    }
    return {};
  }

  std::string gather() {
    for (int root : {0, n_ - 1}) {
      const std::size_t block = 300;
      std::vector<std::byte> mine = pattern(block, me_);
      std::vector<std::byte> all(block * static_cast<std::size_t>(n_));
      b_.gather(mine, all, root);
      if (me_ == root)
        for (int r = 0; r < n_; ++r)
          if (!std::equal(all.begin() + r * static_cast<long>(block), all.begin() + (r + 1) * static_cast<long>(block), pattern(block, r).begin()))
            return fmt::format("gather to {}: block {} differs", root, r);
    }
    return {};
  }

  std::string scatter() {
    for (int root : {0, n_ - 1}) {
      const std::size_t block = 300;
      std::vector<std::byte> all;
      for (int r = 0; r < n_; ++r) {
        std::vector<std::byte> p = pattern(block, r + 11);
        all.insert(all.end(), p.begin(), p.end());
      }
      std::vector<std::byte> mine(block);
      b_.scatter(all, mine, root);
      if (mine != pattern(block, me_ + 11)) return fmt::format("scatter from {}: rank {} got the wrong block", root, me_);
    }
    return {};
  }

  std::string scan() {
    const std::size_t count = 100;
    std::vector<double> in(count), out(count);
    std::vector<std::int32_t> iin(count), iout(count);
    for (std::size_t k = 0; k < count; ++k) {
      in[k] = me_ + 1.0 + static_cast<double>(k);
      iin[k] = me_ + 1 + static_cast<int>(k);
    }
    b_.scan(in.data(), out.data(), count, Elem::f64, ReduceOp::sum);
    b_.scan(iin.data(), iout.data(), count, Elem::i32, ReduceOp::sum);
    for (std::size_t k = 0; k < count; ++k) {
      double expect = (me_ + 1.0) * (me_ + 2.0) / 2.0 + static_cast<double>(k) * (me_ + 1);
      if (std::abs(out[k] - expect) > 1e-9 || iout[k] != static_cast<std::int32_t>(expect))
        return fmt::format("scan element {} on rank {}: {} != {}", k, me_, out[k], expect);
    }
    return {};
  }

  std::string shared_read_write() {
    const int owner = (me_ + 1) % n_;
    const int word = 2 + me_ % 40;
    b_.shared_write(owner, word, 1000 + me_);
    if (b_.offers(Op::fence)) b_.fence(owner);
    b_.sync();
    if (b_.offers(Op::shared_read)) {
      std::int64_t v = b_.shared_read(owner, word);
      if (v != 1000 + me_) return fmt::format("rank {} read {} back from {} word {}, wrote {}", me_, v, owner, word, 1000 + me_);
    }
    return {};
  }

  std::string shared_rmw() {
    const int word = Backend::kSharedWords - 1;
    std::int64_t old = b_.shared_fetch_add(0, word, me_ + 1);
    b_.sync();
    std::vector<double> olds(static_cast<std::size_t>(n_), -1.0);
    olds[static_cast<std::size_t>(me_)] = static_cast<double>(old);
    b_.max_over_ranks(olds);
    std::sort(olds.begin(), olds.end());
    if (std::adjacent_find(olds.begin(), olds.end()) != olds.end()) return "two ranks fetched the same old value";
    if (b_.offers(Op::shared_read)) {
      std::int64_t total = b_.shared_read(0, word);
      if (total != static_cast<std::int64_t>(n_) * (n_ + 1) / 2)
        return fmt::format("fetch-and-add total {} != {}", total, n_ * (n_ + 1) / 2);
    }
    return {};
  }

  // Every rank tries to swing the same zero word to its own id: exactly one wins.
  std::string shared_cas() {
    const int word = Backend::kSharedWords - 4;
    std::int64_t old = b_.shared_compare_swap(0, word, 0, me_ + 1);
    b_.sync();
    std::vector<double> won(static_cast<std::size_t>(n_), 0.0);
    won[static_cast<std::size_t>(me_)] = old == 0 ? 1.0 : 0.0;
    b_.max_over_ranks(won);
    if (std::count(won.begin(), won.end(), 1.0) != 1)
      return fmt::format("{} ranks won the compare-and-swap", std::count(won.begin(), won.end(), 1.0));
    std::vector<double> winner_id{old == 0 ? static_cast<double>(me_ + 1) : 0.0};
    b_.max_over_ranks(winner_id);
    if (b_.offers(Op::shared_read)) {
      std::int64_t now = b_.shared_read(0, word);
      if (now != static_cast<std::int64_t>(winner_id[0]))
        return fmt::format("word holds {}, winner was {}", now, winner_id[0]);
    }
    if (old != 0 && old != static_cast<std::int64_t>(winner_id[0]))
      return fmt::format("rank {} saw {} instead of the winner {}", me_, old, winner_id[0]);
    return {};
  }

  // Mutual exclusion: unprotected read-increment-write under the lock loses no update.
  std::string lock() {
    constexpr int kRounds = 20;
    const int word = Backend::kSharedWords - 2;
    const bool counted = b_.offers(Op::shared_read) && b_.offers(Op::shared_write);
    // Without remote writes (cop), an occupancy count kept with fetch-and-add: whoever
    // enters must find nobody inside.
    const bool occupancy = !counted && b_.offers(Op::shared_rmw);
    int intruded = 0;
    for (int i = 0; i < kRounds; ++i) {
      b_.lock(1);
      if (counted) {
        std::int64_t v = b_.shared_read(0, word);
        b_.shared_write(0, word, v + 1);
        if (b_.offers(Op::fence)) b_.fence(0);
      } else if (occupancy) {
        if (b_.shared_fetch_add(0, word, 1) != 0) ++intruded;
        std::this_thread::yield();
        b_.shared_fetch_add(0, word, -1);
      }
      b_.unlock(1);
    }
    b_.sync();
    if (intruded > 0) return fmt::format("rank {} found another rank inside the lock {} times", me_, intruded);
    if (counted) {
      std::int64_t total = b_.shared_read(0, word);
      if (total != static_cast<std::int64_t>(kRounds) * n_)
        return fmt::format("{} increments under the lock, {} seen", kRounds * n_, total);
    }
    return {};
  }

  std::string fence() {
    const int word = Backend::kSharedWords - 3;
    const int next = (me_ + 1) % n_;
    b_.shared_write(next, word, 77 + me_);
    b_.fence(next);
    b_.shared_write(next, word, 78 + me_);
    b_.all_fence();
    b_.sync();
    if (b_.offers(Op::shared_read)) {
      int prev = (me_ + n_ - 1) % n_;
      std::int64_t v = b_.shared_read(me_, word);
      if (v != 78 + prev) return fmt::format("after the fence rank {} holds {}, not {}", me_, v, 78 + prev);
    }
    return {};
  }

  // Windowed AllFence, for every window size: rank r (r < 40) writes a fresh value into
  // word 10 + r of every rank, fences with window k, and after a barrier each rank finds
  // every such value in its own words.
  std::string fence_window() {
    constexpr int kFirst = 10, kWriters = 40;
    for (int k = 1; k <= std::max(1, n_ - 1); ++k) {
      if (me_ < kWriters)
        for (int t = 0; t < n_; ++t) b_.shared_write(t, kFirst + me_, 1000 * k + me_);
      b_.all_fence_window(k);
      b_.sync();
      for (int r = 0; r < std::min(n_, kWriters); ++r) {
        std::int64_t v = b_.shared_read(me_, kFirst + r);
        if (v != 1000 * k + r)
          return fmt::format("window {}: rank {} holds {} from rank {}, not {}", k, me_, v, r, 1000 * k + r);
      }
      b_.sync();
    }
    return {};
  }

  // The combined fence + barrier: a value written just before it is at its target after it.
  std::string fence_barrier() {
    const int word = Backend::kSharedWords - 6;
    const int next = (me_ + 1) % n_;
    for (int round = 0; round < 3; ++round) {
      b_.shared_write(next, word, 500 + 10 * round + me_);
      b_.fence_barrier();
      if (b_.offers(Op::shared_read)) {
        const int prev = (me_ + n_ - 1) % n_;
        std::int64_t v = b_.shared_read(me_, word);
        if (v != 500 + 10 * round + prev)
          return fmt::format("round {}: after the fence-barrier rank {} holds {}, not {}", round, me_, v,
                             500 + 10 * round + prev);
      }
      b_.sync();
    }
    return {};
  }

  // The server queue lock protecting a read-modify-write counter: no update is lost, so
  // the count is ranks x rounds. Without shared words, an occupancy check is all there is.
  std::string server_lock() {
    constexpr int kRounds = 20;
    const int word = Backend::kSharedWords - 7;
    const bool counted = b_.offers(Op::shared_read) && b_.offers(Op::shared_write);
    for (int i = 0; i < kRounds; ++i) {
      b_.server_lock(2);
      if (counted) {
        std::int64_t v = b_.shared_read(0, word);
        std::this_thread::yield();  // widen the window a lost update would need
        b_.shared_write(0, word, v + 1);
        if (b_.offers(Op::fence)) b_.fence(0);
      }
      b_.server_unlock(2);
    }
    b_.sync();
    if (counted) {
      std::int64_t total = b_.shared_read(0, word);
      if (total != static_cast<std::int64_t>(kRounds) * n_)
        return fmt::format("{} increments under the server lock, {} seen", kRounds * n_, total);
    }
    return {};
  }

  Backend& b_;
  const int n_;
  const int me_;
  bool all_ok_ = true;
  std::vector<std::string> lines_;
};

}  // namespace

std::vector<std::string> verify_backend(Backend& backend, bool& all_ok) {
  return Verifier(backend).run(all_ok);
}

}  // namespace copbench
