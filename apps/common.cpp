#include "apps/common.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace copbench::apps {

Summary repeat_runs(Backend& b, const TimingConfig& config, const Run& once) {
  TimingConfig c = config;
  c.iterations = 1;
  c.min_total_iterations = 0;
  c.warmup = 0;  // the first run, thrown out, is the warm-up
  Summary s = measure(b, c, timed_runs(b, once, config.methods));
  s.modelled_reps.clear();  // an application's point has no modelled time (the report projects its calls)
  return s;
}

void check_sizes(const RunParams& p, std::string_view app, std::string_view what, std::size_t lo, std::size_t hi,
                 std::string_view hi_text) {
  for (std::size_t n : p.sizes)
    if (n < lo || n > hi)
      throw std::invalid_argument(fmt::format("{}: --sizes {}: {} must be from {} to {}", app, n, what, lo,
                                              hi_text.empty() ? std::to_string(hi) : std::string(hi_text)));
}

MeasuredRuns measure_runs(Backend& b, const TimingConfig& config, Breakdown& bd, const Run& run_once) {
  double last = 0;
  MeasuredRuns m;
  m.summary = repeat_runs(b, config, [&](const RunStart& start) {
    bd.reset();
    last = run_once(start);
    return last;
  });
  m.fractions = bd.mean_fractions(b, last);
  return m;
}

std::string_view part_name(Part p) {
  switch (p) {
    case Part::multicast: return "multicast";
    case Part::reduction: return "reduction";
    case Part::barrier: return "barrier";
    case Part::point_to_point: return "point_to_point";
    case Part::broadcast: return "broadcast";
    case Part::scan: return "scan";
    case Part::computation: return "computation";
  }
  return "?";
}

std::array<double, kParts> Breakdown::mean_fractions(Backend& b, double total) const {
  // Each rank writes its fractions into its own slot; the maximum over ranks then
  // holds every rank's (the harness offers max_over_ranks, not a sum).
  const auto nodes = static_cast<std::size_t>(b.ranks());
  std::vector<double> all(nodes * kParts, 0.0);
  const std::size_t slot = static_cast<std::size_t>(b.rank()) * kParts;
  double comm = 0;
  for (std::size_t i = 0; i < kParts; ++i) {
    if (static_cast<Part>(i) == Part::computation) continue;
    double f = total > 0 ? seconds_[i] / total : 0.0;
    all[slot + i] = f;
    comm += f;
  }
  all[slot + static_cast<std::size_t>(Part::computation)] = std::max(0.0, 1.0 - comm);
  b.max_over_ranks(all);
  std::array<double, kParts> mean{};
  for (std::size_t r = 0; r < nodes; ++r)
    for (std::size_t i = 0; i < kParts; ++i) mean[i] += all[r * kParts + i] / static_cast<double>(nodes);
  return mean;
}

std::map<std::string, double> Breakdown::call_counters(Backend& b) const {
  // This rank's (part + 1, bytes, calls) triples in its own slot of a vector every rank
  // sizes alike (the longest list); the maximum over ranks then holds every rank's.
  std::vector<double> mine;
  for (std::size_t i = 0; i < kParts; ++i)
    for (const auto& [bytes, n] : calls_by_size_[i])
      mine.insert(mine.end(), {static_cast<double>(i + 1), static_cast<double>(bytes), static_cast<double>(n)});
  std::vector<double> longest{static_cast<double>(mine.size())};
  b.max_over_ranks(longest);
  const auto width = static_cast<std::size_t>(longest[0]);
  const auto nodes = static_cast<std::size_t>(b.ranks());
  std::vector<double> all(nodes * width, 0.0);
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<long>(static_cast<std::size_t>(b.rank()) * width));
  b.max_over_ranks(all);
  std::map<std::string, double> counters;
  for (std::size_t at = 0; at + 3 <= all.size(); at += 3) {
    if (all[at] < 1) continue;  // a shorter rank's padding
    const auto part = static_cast<Part>(static_cast<std::size_t>(all[at]) - 1);
    counters[fmt::format("calls_{}_{}", part_name(part), static_cast<std::size_t>(all[at + 1]))] += all[at + 2];
  }
  return counters;
}

bool p2p_by_multicast(const Backend& b) { return b.p2p_by_multicast(); }

std::string p2p_via(const Backend& b) { return p2p_by_multicast(b) ? "multicast" : "send/recv"; }

void require_p2p(const Backend& b) {
  if (!b.offers(Op::echo) && !b.offers(Op::multicast)) throw NotOffered(b.name(), Op::echo);
}

void exchange(Backend& b, Breakdown& bd, const std::function<int(int)>& target,
              const std::function<std::size_t(int)>& bytes, std::span<const std::byte> out, int from,
              std::span<std::byte> in, bool send_first) {
  const int me = b.rank();
  const int to = target(me);
  if (!p2p_by_multicast(b)) {
    bd.time(Part::point_to_point, [&] {
      if (send_first && to >= 0) b.send(to, out);
      if (from >= 0) b.recv(from, in);
      if (!send_first && to >= 0) b.send(to, out);
    });
    return;
  }
  // Every rank passes a buffer of the root's size: a backend may keep per-call state in
  // step on all ranks (cop's broadcast pool cursors).
  std::vector<std::byte> scratch;
  bd.time(Part::point_to_point, [&] {
    for (int r = 0; r < b.ranks(); ++r) {
      const int t = target(r);
      if (t < 0) continue;
      const std::vector<int> members{t};
      const std::size_t n = bytes(r);
      if (me == r) {
        scratch.assign(out.begin(), out.end());
        scratch.resize(n);
        b.multicast(scratch, r, members);
      } else if (me == t && from == r) {
        if (in.size() == n) {
          b.multicast(in, r, members);
        } else {
          scratch.assign(n, std::byte{0});
          b.multicast(scratch, r, members);
          std::copy_n(scratch.begin(), std::min(n, in.size()), in.begin());
        }
      } else {
        scratch.assign(n, std::byte{0});
        b.multicast(scratch, r, members);
      }
    }
  });
}

std::string point_name(std::string_view app, std::initializer_list<std::pair<std::string_view, std::string>> keys) {
  std::string s(app);
  for (const auto& [k, v] : keys) s += fmt::format("/{}:{}", k, v);
  return s;
}

}  // namespace copbench::apps
