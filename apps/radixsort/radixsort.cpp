// radixsort: Libsplit-C's radix sort (seed 003, section 6.2) of 32-bit keys, K per node,
// with an 8- or 16-bit radix (4 or 2 passes). Each pass has its three stages:
//
//   fill      histogram the digit of the local keys;
//   scan      the global histogram: for every bucket the keys of that digit on lower
//             ranks (an inclusive scan over ranks, all_scan_add in Split-C) and the
//             bucket totals. With the backend's scan (mpi) that is one scan of the
//             R-bucket vector plus a broadcast of the totals from the last rank; where
//             there is none (pvm, armci, cop) every rank's histogram is summed into its
//             own slot of a nodes x R vector by a reduction to rank 0 and broadcast back
//             (label scan_via=reduce);
//   coalesce  every key goes to its global position (rank = position / K): an all-to-all
//             point-to-point exchange of (position, key) pairs.
//
// Checked: rank 0 regenerates every rank's keys, sorts them with std::sort and compares
// every rank's final keys with its slice.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "apps/common.h"

namespace copbench::apps {
namespace {

std::uint32_t key_of(int rank, std::size_t i) {
  std::uint64_t z = (static_cast<std::uint64_t>(rank) << 40) + i + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<std::uint32_t>((z ^ (z >> 31)) >> 16);
}

std::vector<std::uint32_t> keys_of(int rank, std::size_t count) {
  std::vector<std::uint32_t> k(count);
  for (std::size_t i = 0; i < count; ++i) k[i] = key_of(rank, i);
  return k;
}

enum Stage { fill, scan, coalesce };
constexpr const char* kStageNames[] = {"fill", "scan", "coalesce"};

class RadixSort {
 public:
  RadixSort(Backend& b, std::size_t keys, int bits, Breakdown& bd)
      : b_(b), k_(keys), bits_(bits), buckets_(std::size_t{1} << bits), bd_(bd), use_scan_(b.offers(Op::scan)) {}

  std::vector<std::uint32_t>& keys() { return keys_; }
  const std::array<double, 3>& stage_seconds() const { return stage_; }
  bool uses_scan() const { return use_scan_; }

  double run(const RunStart& start) {
    keys_ = keys_of(b_.rank(), k_);
    stage_ = {};
    const double t0 = start();  // every rank at one instant (apps/common.h repeat_runs)
    for (int shift = 0; shift < 32; shift += bits_) pass(shift);
    return now_seconds() - t0;
  }

 private:
  void pass(int shift) {
    const auto nodes = static_cast<std::size_t>(b_.ranks());
    const auto me = static_cast<std::size_t>(b_.rank());
    const std::uint32_t mask = static_cast<std::uint32_t>(buckets_ - 1);

    double t = now_seconds();
    std::vector<std::int32_t> count(buckets_, 0);
    for (std::uint32_t key : keys_) ++count[(key >> shift) & mask];
    stage_[fill] += now_seconds() - t;

    // below[d]: keys of digit d on lower ranks; total[d]: keys of digit d everywhere.
    t = now_seconds();
    std::vector<std::int32_t> below(buckets_), total(buckets_);
    if (use_scan_) {
      std::vector<std::int32_t> inclusive(buckets_);
      bd_.time(Part::scan, [&] { b_.scan(count.data(), inclusive.data(), buckets_, Elem::i32, ReduceOp::sum); });
      for (std::size_t d = 0; d < buckets_; ++d) below[d] = inclusive[d] - count[d];
      total = inclusive;
      bd_.time(Part::broadcast, [&] { b_.broadcast(std::as_writable_bytes(std::span(total)), static_cast<int>(nodes - 1)); });
    } else {
      std::vector<std::int32_t> mine(nodes * buckets_, 0), all(nodes * buckets_, 0);
      std::copy(count.begin(), count.end(), mine.begin() + static_cast<long>(me * buckets_));
      bd_.time(Part::reduction, [&] { b_.reduce(mine.data(), all.data(), mine.size(), Elem::i32, ReduceOp::sum, 0); });
      bd_.time(Part::broadcast, [&] { b_.broadcast(std::as_writable_bytes(std::span(all)), 0); });
      for (std::size_t d = 0; d < buckets_; ++d) {
        std::int32_t sum = 0;
        for (std::size_t r = 0; r < nodes; ++r) {
          if (r == me) below[d] = sum;
          sum += all[r * buckets_ + d];
        }
        total[d] = sum;
      }
    }
    stage_[scan] += now_seconds() - t;

    // Coalesce: global position = start of the bucket + keys of that digit on lower
    // ranks + order among this rank's keys of that digit (a stable sort).
    t = now_seconds();
    std::vector<std::int64_t> next(buckets_);
    std::int64_t start = 0;
    for (std::size_t d = 0; d < buckets_; ++d) {
      next[d] = start + below[d];
      start += total[d];
    }
    std::vector<std::vector<std::uint32_t>> out(nodes);  // pairs (position within the target, key)
    for (std::uint32_t key : keys_) {
      const std::int64_t pos = next[(key >> shift) & mask]++;
      const auto target = static_cast<std::size_t>(pos / static_cast<std::int64_t>(k_));
      out[target].push_back(static_cast<std::uint32_t>(pos % static_cast<std::int64_t>(k_)));
      out[target].push_back(key);
    }
    std::vector<std::uint32_t> sorted(k_);
    auto place = [&](const std::vector<std::uint32_t>& pairs) {
      for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) sorted[pairs[i]] = pairs[i + 1];
    };
    place(out[me]);
    if (p2p_by_multicast(b_)) {
      multicast_exchange(out, place);
    } else {
      for (std::size_t s = 1; s < nodes; ++s) exchange(s, out, place);
    }
    keys_.swap(sorted);
    stage_[coalesce] += now_seconds() - t;
  }

  // Step s of the all-to-all: send to rank + s, receive from rank - s. Along each cycle of
  // that permutation even positions send first and odd ones receive first, so blocking
  // sends never wait on each other in a circle.
  template <class Place>
  void exchange(std::size_t s, std::vector<std::vector<std::uint32_t>>& out, Place& place) {
    const auto nodes = static_cast<std::size_t>(b_.ranks());
    const auto me = static_cast<std::size_t>(b_.rank());
    const int to = static_cast<int>((me + s) % nodes), from = static_cast<int>((me + nodes - s) % nodes);
    const std::size_t g = std::gcd(nodes, s);
    std::size_t index = 0;  // me's position along its cycle, which starts at me % g
    for (std::size_t r = me % g; r != me; r = (r + s) % nodes) ++index;
    auto send = [&] {
      std::uint64_t n = out[static_cast<std::size_t>(to)].size();
      b_.send(to, std::as_bytes(std::span(&n, 1)));
      if (n > 0) b_.send(to, std::as_bytes(std::span(out[static_cast<std::size_t>(to)])));
    };
    auto recv = [&] {
      std::uint64_t n = 0;
      b_.recv(from, std::as_writable_bytes(std::span(&n, 1)));
      std::vector<std::uint32_t> in(n);
      if (n > 0) b_.recv(from, std::as_writable_bytes(std::span(in)));
      place(in);
    };
    bd_.time(Part::point_to_point, [&] {
      if (index % 2 == 0) {
        send();
        recv();
      } else {
        recv();
        send();
      }
    });
  }

  // Without send/recv (cop): every rank's message sizes go to all by a reduction and a
  // broadcast, then step s of the all-to-all is one-member multicasts (apps::exchange).
  template <class Place>
  void multicast_exchange(std::vector<std::vector<std::uint32_t>>& out, Place& place) {
    const auto nodes = static_cast<std::size_t>(b_.ranks());
    const auto me = static_cast<std::size_t>(b_.rank());
    std::vector<std::int32_t> mine(nodes * nodes, 0), sizes(nodes * nodes, 0);
    for (std::size_t t = 0; t < nodes; ++t) mine[me * nodes + t] = static_cast<std::int32_t>(out[t].size());
    bd_.time(Part::reduction, [&] { b_.reduce(mine.data(), sizes.data(), mine.size(), Elem::i32, ReduceOp::sum, 0); });
    bd_.time(Part::broadcast, [&] { b_.broadcast(std::as_writable_bytes(std::span(sizes)), 0); });
    for (std::size_t s = 1; s < nodes; ++s) {
      const std::size_t to = (me + s) % nodes, from = (me + nodes - s) % nodes;
      std::vector<std::uint32_t> in(static_cast<std::size_t>(sizes[from * nodes + me]));
      apps::exchange(
          b_, bd_, [&](int r) { return static_cast<int>((static_cast<std::size_t>(r) + s) % nodes); },
          [&](int r) {
            const auto rr = static_cast<std::size_t>(r);
            return sizeof(std::uint32_t) * static_cast<std::size_t>(sizes[rr * nodes + (rr + s) % nodes]);
          },
          std::as_bytes(std::span(out[to])), static_cast<int>(from), std::as_writable_bytes(std::span(in)));
      place(in);
    }
  }

  Backend& b_;
  std::size_t k_;
  int bits_;
  std::size_t buckets_;
  Breakdown& bd_;
  bool use_scan_;
  std::vector<std::uint32_t> keys_;
  std::array<double, 3> stage_{};
};

class Radixsort final : public Benchmark {
 public:
  std::string_view name() const override { return "radixsort"; }
  std::string_view description() const override {
    return "Libsplit-C radix sort of 32-bit keys (seed 003 6.2); size = keys per node";
  }
  // The scan is the backend's where offered, else a reduction and a broadcast; the
  // coalesce is send/recv where offered, else one-member multicasts (label p2p_via).
  std::vector<Op> needs() const override { return {Op::reduce, Op::broadcast}; }
  std::vector<std::size_t> default_sizes() const override { return {65536, 524288}; }
  // `radix`: 8, 16, or both ("8,16"): one point per radix and size.
  std::vector<ParamSpec> params() const override {
    return {{.name = "radix", .fallback = 8, .choices = {8, 16}, .list = true}};
  }
  // The run tests' problem (copbench/bench.h): tiny, still checked against the serial answer.
  std::vector<std::size_t> smoke_sizes() const override { return {300}; }
  std::map<std::string, std::string> smoke_params() const override { return {{"radix", "8,16"}}; }

  void check_options(const RunParams& p) const override {
    Benchmark::check_options(p);
    check_sizes(p, "radixsort", "keys per node", 1, std::size_t{1} << 26, "64M");
  }

  void run(Backend& b, const RunParams& params, Reporter& reporter) const override {
    check_options(params);
    require_p2p(b);
    std::vector<std::pair<int, std::size_t>> points;  // (radix bits, keys per node)
    for (long bits : param_ints(params, *this, "radix"))
      for (std::size_t keys : params.sizes.empty() ? default_sizes() : params.sizes) points.emplace_back(static_cast<int>(bits), keys);
    for (auto [bits, keys] : points) {
      if (keys * static_cast<std::size_t>(b.ranks()) >= (std::size_t{1} << 31))
        throw std::invalid_argument(fmt::format("radixsort: {} keys on {} ranks exceed 2^31 keys", keys, b.ranks()));
      Breakdown bd;
      RadixSort sort(b, keys, bits, bd);
      auto [summary, fractions] = measure_runs(b, params.timing, bd, [&](const RunStart& start) { return sort.run(start); });
      std::vector<double> stages(sort.stage_seconds().begin(), sort.stage_seconds().end());
      b.max_over_ranks(stages);
      verify(b, keys, sort.keys());

      PointResult p;
      p.name = point_name("radixsort", {{"keys", std::to_string(keys)}, {"radix", std::to_string(bits)}});
      p.counters["nodes"] = b.nodes();
      if (b.tasks_per_node() > 1) p.counters["ranks"] = b.ranks();
      p.counters["keys_per_node"] = static_cast<double>(keys);
      p.counters["radix_bits"] = bits;
      p.counters["passes"] = 32 / bits;
      p.counters["keys_per_s_per_node"] = summary.median > 0 ? static_cast<double>(keys) / summary.median : 0.0;
      for (int s = 0; s < 3; ++s) p.counters[std::string("stage_") + kStageNames[s] + "_s"] = stages[static_cast<std::size_t>(s)];
      for (Part part : {Part::scan, Part::reduction, Part::broadcast, Part::point_to_point, Part::computation})
        p.counters["frac_" + std::string(part_name(part))] = fractions[static_cast<std::size_t>(part)];
      p.labels["scan_via"] = sort.uses_scan() ? "scan" : "reduce";
      p.labels["p2p_via"] = p2p_via(b);
      p.labels["verified"] = "std::sort";
      p.summary = std::move(summary);
      reporter.report(std::move(p));
    }
  }

 private:
  // Every rank's keys go to rank 0 (point-to-point or multicast), which compares them
  // with its std::sort of everyone's keys.
  static void verify(Backend& b, std::size_t keys, const std::vector<std::uint32_t>& mine) {
    std::vector<std::uint32_t> all;
    if (b.rank() == 0) {
      all.reserve(keys * static_cast<std::size_t>(b.ranks()));
      for (int r = 0; r < b.ranks(); ++r) {
        std::vector<std::uint32_t> k = keys_of(r, keys);
        all.insert(all.end(), k.begin(), k.end());
      }
      std::sort(all.begin(), all.end());
    }
    std::size_t bad = 0;
    std::vector<std::uint32_t> got(keys);
    Breakdown unused;
    const std::size_t bytes = keys * sizeof(std::uint32_t);
    for (int r = 0; r < b.ranks(); ++r) {
      if (r == 0) {
        if (b.rank() == 0) got = mine;
      } else {
        exchange(b, unused, [r](int x) { return x == r ? 0 : -1; }, [r, bytes](int x) { return x == r ? bytes : 0; },
                 std::as_bytes(std::span(mine)), b.rank() == 0 ? r : -1, std::as_writable_bytes(std::span(got)));
      }
      if (b.rank() != 0) continue;
      for (std::size_t i = 0; i < keys; ++i)
        if (got[i] != all[static_cast<std::size_t>(r) * keys + i]) ++bad;
    }
    if (bad > 0) throw std::runtime_error(fmt::format("radixsort: {} keys out of place after the sort", bad));
  }
};

const RegisterWorkload<Radixsort> registered{WorkloadKind::application, 1020};  // copbench/bench.h

}  // namespace

}  // namespace copbench::apps
