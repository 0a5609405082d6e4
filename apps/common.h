// What every application shares: its --param options, the repetition loop (one
// repetition = one whole run), the per-operation time breakdown of Table V, and the
// calls of each kind an application makes (the report projects their COP time from them,
// suite/report/cop_projection.h).
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "copbench/bench.h"
#include "copbench/timing.h"

namespace copbench::apps {

// Runs `once` (all ranks) under the suite's Libsplit-C protocol with one run per
// repetition: the first run is thrown out, later ones 3x above the mean of the next three
// are discarded; every rank ends with the same Summary. `once(start)` does its setup,
// calls start() where its timed part begins and returns this rank's seconds since
// (timing.h timed_runs): by default every rank starts at one instant T_k of the common
// clock and the run's time is the maximum over ranks of end - T_k (the window method;
// a run a rank started late is left out and counted in the Summary); with
// config.methods naming sync and not window, start() is the backend's sync.
// `--warmup` and `--iters` do not apply.
Summary repeat_runs(Backend& b, const TimingConfig& config, const Run& once);

// Checks --sizes: throws std::invalid_argument "APP: --sizes N: WHAT must be from LO to
// HI" (HI written as hi_text when given) for a size outside [lo, hi].
void check_sizes(const RunParams& p, std::string_view app, std::string_view what, std::size_t lo, std::size_t hi,
                 std::string_view hi_text = {});

// The kinds of time of Table V.
enum class Part { multicast, reduction, barrier, point_to_point, broadcast, scan, computation };
inline constexpr std::size_t kParts = 7;
std::string_view part_name(Part p);

// Wall time spent in each kind of operation by this rank; computation is what is left.
class Breakdown {
 public:
  template <class F>
  void time(Part part, F&& op) {
    double t0 = now_seconds();
    op();
    seconds_[static_cast<std::size_t>(part)] += now_seconds() - t0;
    ++calls_[static_cast<std::size_t>(part)];
  }
  // One call of `part` that moves `bytes` (a reduction: of doubles; a barrier: 0), counted
  // for the report's projection of the same calls on the COP hardware.
  void call(Part part, std::size_t bytes) { ++calls_by_size_[static_cast<std::size_t>(part)][bytes]; }
  void reset() { *this = Breakdown{}; }
  double seconds(Part p) const { return seconds_[static_cast<std::size_t>(p)]; }
  long calls(Part p) const { return calls_[static_cast<std::size_t>(p)]; }
  // Fractions of `total` per part, averaged over ranks (Table V: "on the average ... on
  // both the slave and control tasks"); every rank must call it and gets the same values.
  std::array<double, kParts> mean_fractions(Backend& b, double total) const;
  // Every rank's call() records summed over ranks, as result counters
  // "calls_<part>_<bytes>" (calls of that part and size); every rank must call it and
  // gets the same counters.
  std::map<std::string, double> call_counters(Backend& b) const;

 private:
  std::array<double, kParts> seconds_{};
  std::array<long, kParts> calls_{};
  std::array<std::map<std::size_t, long>, kParts> calls_by_size_{};
};

// One point of an application: whole runs under repeat_runs, `bd` reset before each;
// `fractions` are the last run's Table V fractions (of the seconds run_once returned)
// averaged over ranks. Every rank calls it; run_once is repeat_runs' `once`.
struct MeasuredRuns {
  Summary summary;
  std::array<double, kParts> fractions{};
};
MeasuredRuns measure_runs(Backend& b, const TimingConfig& config, Breakdown& bd, const Run& run_once);

// Point-to-point in the applications: the backend's send/recv where it has them; where it
// has not (cop) one-member multicasts, every sending rank in turn the root (results say
// p2p_via=multicast). One step: rank r sends bytes(r) bytes to target(r) (-1: nothing);
// both functions give the same answers on every rank. This rank sends `out` and receives
// `in` from `from` (-1: nothing); with send/recv, send_first orders its two calls (the
// caller keeps the pattern free of circular waits). Collective: every rank calls it.
bool p2p_by_multicast(const Backend& b);
std::string p2p_via(const Backend& b);
// Throws NotOffered when the backend has neither send/recv nor multicast.
void require_p2p(const Backend& b);
void exchange(Backend& b, Breakdown& bd, const std::function<int(int)>& target,
              const std::function<std::size_t(int)>& bytes, std::span<const std::byte> out, int from,
              std::span<std::byte> in, bool send_first = true);

// Point name "app/key:value/key:value".
std::string point_name(std::string_view app, std::initializer_list<std::pair<std::string_view, std::string>> keys);

}  // namespace copbench::apps
