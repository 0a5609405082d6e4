// `copbench verify`'s checks of the messages and the collectives (see verify_checks.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "copbench/pause.h"
#include "copbench/timing.h"
#include "worker/verify_checks.h"

namespace copbench::verify {

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 7 + static_cast<std::size_t>(seed) * 13 + 1) & 0xff);
  return v;
}

std::string echo(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{70000}}) {
    for (int peer = 1; peer < n; ++peer) {
      if (me == 0) {
        std::vector<std::byte> out = pattern(size, peer), back(size);
        b.send(peer, out);
        b.recv(peer, back);
        for (std::size_t i = 0; i < size; ++i)
          if (back[i] != (out[i] ^ std::byte{0x5a})) return fmt::format("echo from {} of {} B differs at byte {}", peer, size, i);
      } else if (me == peer) {
        std::vector<std::byte> buf(size);
        b.recv(0, buf);
        for (std::byte& x : buf) x ^= std::byte{0x5a};
        b.send(0, buf);
      }
    }
  }
  return {};
}

// Nobody may leave a barrier before the last rank has entered it. Every rank starts
// its clock, then the harness's max_over_ranks (which cannot end on the last rank
// before every rank has contributed) orders every start before the last rank's
// 50 ms pause; so a correct barrier keeps every rank at least 50 ms by its own clock,
// whatever the load, and a rank that leaves early shows it.
std::string barrier(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  for (int i = 0; i < 20; ++i) b.barrier();
  constexpr double kDelay = 0.05;
  const double t0 = now_seconds();
  double started[1] = {0.0};
  b.max_over_ranks(started);
  if (me == n - 1) pause_seconds(kDelay);
  b.barrier();
  const double waited = now_seconds() - t0;
  // 0.999: the rounding of the clock's readings, nothing more.
  if (n > 1 && waited < 0.999 * kDelay) return fmt::format("rank {} left the barrier after {:.1f} ms", me, waited * 1e3);
  return {};
}

namespace {

// Rank r's k-th int element in the reduce checks: odd ranks count up, even ranks down,
// so max and min are not all one rank's; the double element is it + 0.25.
std::int32_t reduce_input(int r, std::size_t k) {
  return static_cast<std::int32_t>(r * 1000 + static_cast<int>(k) * ((r % 2) ? 1 : -1));
}

template <class T>
T combine(ReduceOp op, T a, T v) {
  if (op == ReduceOp::sum) return a + v;
  return op == ReduceOp::max ? std::max(a, v) : std::min(a, v);
}

// Every reduce function on int and double, against the same reduction done locally;
// `reduce_to(elem, op, in, out, count)` is the backend's call, the result checked on
// every rank in `roots`.
template <typename Call>
std::string check_reduce(const Backend& b, std::span<const int> roots, const std::string& what, Call reduce_to) {
  const int n = b.ranks();
  const int me = b.rank();
  const std::size_t count = 1000;
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
    std::vector<std::int32_t> ii(count), io(count, -1), iexp(count);
    std::vector<double> di(count), dout(count, -1.0), dexp(count);
    for (std::size_t k = 0; k < count; ++k) {
      ii[k] = reduce_input(me, k);
      di[k] = static_cast<double>(ii[k]) + 0.25;
      iexp[k] = reduce_input(0, k);
      dexp[k] = static_cast<double>(iexp[k]) + 0.25;
      for (int r = 1; r < n; ++r) {
        iexp[k] = combine(op, iexp[k], reduce_input(r, k));
        dexp[k] = combine(op, dexp[k], static_cast<double>(reduce_input(r, k)) + 0.25);
      }
    }
    reduce_to(Elem::i32, op, ii.data(), io.data(), count);
    reduce_to(Elem::f64, op, di.data(), dout.data(), count);
    if (std::find(roots.begin(), roots.end(), me) == roots.end()) continue;
    for (std::size_t k = 0; k < count; ++k) {
      if (io[k] != iexp[k]) return fmt::format("int {} element {}: {} != {}", what, k, io[k], iexp[k]);
      if (std::abs(dout[k] - dexp[k]) > 1e-9 * std::max(1.0, std::abs(dexp[k])))
        return fmt::format("double {} element {}: {} != {}", what, k, dout[k], dexp[k]);
    }
  }
  return {};
}

}  // namespace

std::string reduce(Backend& b) {
  const int n = b.ranks();
  for (int root : {0, n - 1}) {
    const int roots[1] = {root};
    std::string e = check_reduce(b, roots, fmt::format("reduce (root {})", root),
                                 [&](Elem elem, ReduceOp op, void* in, void* out, std::size_t count) {
                                   b.reduce(in, out, count, elem, op, root);
                                 });
    if (!e.empty()) return e;
  }
  return {};
}

// Several roots in one operation: the first and last rank, then every rank.
std::string reduce_roots(Backend& b) {
  const int n = b.ranks();
  std::vector<int> ends = {0};
  if (n > 1) ends.push_back(n - 1);
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) all[static_cast<std::size_t>(r)] = r;
  for (const std::vector<int>& roots : {ends, all}) {
    std::string e = check_reduce(b, roots, fmt::format("reduce to {} roots", roots.size()),
                                 [&](Elem elem, ReduceOp op, void* in, void* out, std::size_t count) {
                                   b.reduce_roots(in, out, count, elem, op, roots);
                                 });
    if (!e.empty()) return e;
  }
  return {};
}

std::string broadcast(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  for (int root : {0, n - 1}) {
    for (std::size_t size : {std::size_t{0}, std::size_t{3}, std::size_t{5000}, std::size_t{70000}}) {
      std::vector<std::byte> expect = pattern(size, root + 3);
      std::vector<std::byte> buf = me == root ? expect : std::vector<std::byte>(size);
      b.broadcast(buf, root);
      if (buf != expect) return fmt::format("broadcast of {} B from {} differs on rank {}", size, root, me);
    }
  }
  return {};
}

std::string multicast(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  for (int root : {0, n - 1}) {
    std::vector<int> members;
    for (int r = 0; r < n; ++r)
      if (r != root && r % 2 == 1) members.push_back(r);
    bool member = std::find(members.begin(), members.end(), me) != members.end();
    for (std::size_t size : {std::size_t{0}, std::size_t{8}, std::size_t{5000}}) {
      std::vector<std::byte> expect = pattern(size, root + 5);
      std::vector<std::byte> untouched(size, std::byte{0xee});
      std::vector<std::byte> buf = me == root ? expect : untouched;
      b.multicast(buf, root, members);
      if ((me == root || member) && buf != expect)
        return fmt::format("multicast of {} B from {} differs on member {}", size, root, me);
      if (me != root && !member && buf != untouched)
        return fmt::format("multicast from {} reached non-member {}", root, me);
    }
  }
  return {};
}

std::string gather(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  for (int root : {0, n - 1}) {
    const std::size_t block = 300;
    std::vector<std::byte> mine = pattern(block, me);
    std::vector<std::byte> all(block * static_cast<std::size_t>(n));
    b.gather(mine, all, root);
    if (me == root)
      for (int r = 0; r < n; ++r)
        if (!std::equal(all.begin() + r * static_cast<long>(block), all.begin() + (r + 1) * static_cast<long>(block), pattern(block, r).begin()))
          return fmt::format("gather to {}: block {} differs", root, r);
  }
  return {};
}

std::string scatter(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  for (int root : {0, n - 1}) {
    const std::size_t block = 300;
    std::vector<std::byte> all;
    for (int r = 0; r < n; ++r) {
      std::vector<std::byte> p = pattern(block, r + 11);
      all.insert(all.end(), p.begin(), p.end());
    }
    std::vector<std::byte> mine(block);
    b.scatter(all, mine, root);
    if (mine != pattern(block, me + 11)) return fmt::format("scatter from {}: rank {} got the wrong block", root, me);
  }
  return {};
}

std::string scan(Backend& b) {
  const int me = b.rank();
  const std::size_t count = 100;
  std::vector<double> in(count), out(count);
  std::vector<std::int32_t> iin(count), iout(count);
  for (std::size_t k = 0; k < count; ++k) {
    in[k] = me + 1.0 + static_cast<double>(k);
    iin[k] = me + 1 + static_cast<int>(k);
  }
  b.scan(in.data(), out.data(), count, Elem::f64, ReduceOp::sum);
  b.scan(iin.data(), iout.data(), count, Elem::i32, ReduceOp::sum);
  for (std::size_t k = 0; k < count; ++k) {
    double expect = (me + 1.0) * (me + 2.0) / 2.0 + static_cast<double>(k) * (me + 1);
    if (std::abs(out[k] - expect) > 1e-9 || iout[k] != static_cast<std::int32_t>(expect))
      return fmt::format("scan element {} on rank {}: {} != {}", k, me, out[k], expect);
  }
  return {};
}

}  // namespace copbench::verify
