// The common clock of a run's ranks (copbench/clock.h; issue 35).
#include "copbench/clock.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sched.h>
#include <fstream>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "copbench/pause.h"
#include "copbench/stats.h"
#include "copbench/timing.h"

#ifdef COPBENCH_SIMULATED_CLOCK
#include <smpi/smpi_helpers_internal.h>
#endif

namespace copbench {

double LocalClock::operator()() const { return (source ? source() : now_seconds()) * rate + offset; }

namespace {

// A number in [-1, 1] fixed by the rank and a salt (splitmix64), so that every rank's
// injected skew differs and a rerun injects the same.
double spread(int rank, std::uint64_t salt) {
  std::uint64_t z = static_cast<std::uint64_t>(rank) * 0x9E3779B97F4A7C15ULL + salt;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return 2.0 * static_cast<double>(z >> 11) / static_cast<double>(1ULL << 53) - 1.0;
}

// COPBENCH_CLOCK_SKEW = "OFFSET_S,DRIFT_PPM"; false when unset or empty.
bool read_skew(double& offset, double& drift_ppm) {
  const char* text = std::getenv("COPBENCH_CLOCK_SKEW");
  if (!text || !*text) return false;
  char* end = nullptr;
  offset = std::strtod(text, &end);
  if (end == text || *end != ',') throw std::invalid_argument(fmt::format("COPBENCH_CLOCK_SKEW '{}': expected OFFSET_S,DRIFT_PPM", text));
  const char* second = end + 1;
  drift_ppm = std::strtod(second, &end);
  if (end == second || *end != '\0' || !std::isfinite(offset) || !std::isfinite(drift_ppm) || offset < 0 ||
      drift_ppm < 0 || offset > 10.0 || drift_ppm > 1e4)
    throw std::invalid_argument(fmt::format(
        "COPBENCH_CLOCK_SKEW '{}': expected OFFSET_S,DRIFT_PPM (0 <= OFFSET_S <= 10, 0 <= DRIFT_PPM <= 10000)", text));
  return true;
}

bool clock_is_simulated() {
#ifdef COPBENCH_SIMULATED_CLOCK
  return true;
#else
  return simulated_clock().now != nullptr;
#endif
}

}  // namespace

LocalClock local_clock_for(int rank, int ranks) {
  (void)ranks;
  LocalClock c;
  double offset = 0, drift_ppm = 0;
  if (!read_skew(offset, drift_ppm)) return c;
  c.offset = offset * spread(rank, 1);
  c.rate = 1.0 + 1e-6 * drift_ppm * spread(rank, 2);
  return c;
}

std::string injected_clock_skew() {
  double offset = 0, drift_ppm = 0;
  if (!read_skew(offset, drift_ppm)) return "";
  return fmt::format("up to {:g} s and {:g} ppm per rank (COPBENCH_CLOCK_SKEW, a test setting)", offset, drift_ppm);
}

std::string CommonClock::basis_name() const {
  switch (basis) {
    case Basis::simulated: return "simulated";
    case Basis::one_kernel: return "one-kernel";
    case Basis::estimated: return "estimated";
  }
  return "?";
}

std::string CommonClock::describe() const {
  if (basis == Basis::simulated)
    return "the simulation's global clock (error 0; a wait is a simulated sleep)";
  const std::string measured =
      exchanges == 0 ? "offsets not measured (the backend has no send/recv)"
                     : fmt::format("measured by {} round trips through the backend's messages: |offset| <= {:.3g} us "
                                   "(bound {:.3g} us), |drift| <= {:.3g} ppm, min round trip {:.3g} us",
                                   exchanges, 1e6 * measured_offset, 1e6 * measured_bound, 1e6 * measured_drift,
                                   1e6 * min_round_trip);
  if (basis == Basis::one_kernel)
    return "one kernel's CLOCK_MONOTONIC on every rank (same boot id); " + measured;
  const std::string check =
      injected_error < 0 ? "" : fmt::format("; injected skew: the maps' largest true error {:.3g} us", 1e6 * injected_error);
  return fmt::format("rank 0's clock, each rank's offset and drift estimated (min-RTT batches, a line fitted), "
                     "error bound {:.3g} us; ", 1e6 * bound) + measured + check;
}

ClockMap fit_clock(const std::vector<ClockSample>& samples, double& bound) {
  ClockMap map;
  bound = 0;
  if (samples.empty()) return map;
  // A batch whose every round trip was slow (a rank descheduled) says little and would
  // tilt the line: only batches within 4x (or 20 us) of the fastest are fitted.
  double fastest = samples.front().round_trip();
  for (const ClockSample& s : samples) fastest = std::min(fastest, s.round_trip());
  const double limit = std::max(4 * fastest, fastest + 20e-6);
  std::vector<ClockSample> best;
  for (const ClockSample& s : samples)
    if (s.round_trip() <= limit) best.push_back(s);
  std::vector<double> x, y;
  for (const ClockSample& s : best) x.push_back(s.t), y.push_back(s.offset());
  map.t_ref = mean_of(x);
  for (double& v : x) v -= map.t_ref;
  // Fewer than three batches left: no drift can be told from them (fit_line gives the mean).
  const Line line = best.size() >= 3 ? fit_line(x, y) : Line{mean_of(y), 0.0};
  map.offset = line.intercept;
  map.drift = line.slope;
  for (std::size_t i = 0; i < best.size(); ++i) {
    const double residual = y[i] - (line.intercept + line.slope * x[i]);
    bound = std::max(bound, 0.5 * best[i].round_trip() + std::abs(residual));
  }
  return map;
}

std::uint32_t kernel_boot_hash() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!(f >> id) || id.empty()) return 0;
  std::uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : id) h = (h ^ c) * 16777619u;
  return h == 0 ? 1 : h;
}

void wait_until(const LocalClock& clock, double local_target, double spin_margin) {
  if (clock.waiter) return clock.waiter(local_target);
#ifdef COPBENCH_SIMULATED_CLOCK
  (void)spin_margin;
  const double d = local_target - clock();
  if (d <= 0) return;
  timespec ts{static_cast<time_t>(d), static_cast<long>((d - std::floor(d)) * 1e9)};
  smpi_nanosleep(&ts, nullptr);
#else
  if (simulated_clock().now) {
    const double d = local_target - clock();
    if (d > 0 && simulated_pause()) simulated_pause()(d);
    return;
  }
  // Sleep to within a margin of the instant, then spin: a sleep wakes late by the
  // scheduler's latency, a spin by one clock read (and a yield).
  const double d = local_target - clock();
  if (d > spin_margin) {
    const double s = (d - spin_margin) / clock.rate;
    timespec ts{static_cast<time_t>(s), static_cast<long>((s - std::floor(s)) * 1e9)};
    nanosleep(&ts, nullptr);
  }
  // Yield while spinning: where ranks outnumber cores, a rank still inside the previous
  // call needs the core this one would spin on.
  while (clock() < local_target) sched_yield();
#endif
}

}  // namespace copbench

namespace copbench {
namespace {

std::vector<std::byte> bytes_of(std::span<const double> values) {
  std::vector<std::byte> out(values.size() * sizeof(double));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::vector<double> doubles_of(std::span<const std::byte> bytes) {
  std::vector<double> out(bytes.size() / sizeof(double));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(double));
  return out;
}

// Rank 0's side of the round trips: batch by batch, every rank in turn, `pings` exchanges
// each; per rank and batch the sample with the smallest round trip.
std::vector<std::vector<ClockSample>> exchange_as_root(Backend& b, const LocalClock& clock, const ClockSyncConfig& cfg) {
  std::vector<std::vector<ClockSample>> best(static_cast<std::size_t>(b.ranks()));
  std::vector<std::byte> ping(sizeof(double)), pong(sizeof(double));
  for (int batch = 0; batch < cfg.batches; ++batch)
    for (int r = 1; r < b.ranks(); ++r) {
      ClockSample kept{0, 0, std::numeric_limits<double>::infinity()};
      for (int k = 0; k < cfg.pings; ++k) {
        ClockSample s;
        s.t0 = clock();
        b.send(r, ping);
        b.recv(r, pong);
        s.t1 = clock();
        s.t = doubles_of(pong).at(0);
        if (s.round_trip() < kept.round_trip()) kept = s;
      }
      best[static_cast<std::size_t>(r)].push_back(kept);
    }
  return best;
}

// A rank's side: answer every ping with its clock, then take its map from rank 0.
ClockMap exchange_as_rank(Backend& b, const LocalClock& clock, const ClockSyncConfig& cfg, double& bound,
                          double& round_trip) {
  std::vector<std::byte> ping(sizeof(double));
  for (int i = 0; i < cfg.batches * cfg.pings; ++i) {
    b.recv(0, ping);
    const double t = clock();
    b.send(0, bytes_of(std::span<const double>(&t, 1)));
  }
  std::vector<std::byte> reply(5 * sizeof(double));
  b.recv(0, reply);
  const std::vector<double> v = doubles_of(reply);
  bound = v[3];
  round_trip = v[4];
  return ClockMap{v[0], v[1], v[2]};
}

// Rank 0 fits every rank's line and sends it its map; returns the largest bound and
// smallest round trip over the ranks.
void fit_and_send(Backend& b, const std::vector<std::vector<ClockSample>>& best) {
  for (int r = 1; r < b.ranks(); ++r) {
    const auto& samples = best[static_cast<std::size_t>(r)];
    double bound = 0;
    const ClockMap m = fit_clock(samples, bound);
    double rtt = std::numeric_limits<double>::infinity();
    for (const ClockSample& s : samples) rtt = std::min(rtt, s.round_trip());
    const double v[5] = {m.offset, m.drift, m.t_ref, bound, rtt};
    b.send(r, bytes_of(v));
  }
}

// Whether every rank runs on one kernel with no injected skew: the same boot hash on all.
bool one_kernel(Backend& b, const LocalClock& clock) {
  const double h = static_cast<double>(kernel_boot_hash());
  const double injected = clock.offset != 0 || clock.rate != 1 || clock.source ? 1.0 : 0.0;
  std::vector<double> v{h, -h, injected};
  b.max_over_ranks(v);
  return h != 0 && v[0] == -v[1] && v[2] == 0;
}

// With a skew injected (COPBENCH_CLOCK_SKEW), the truth is known: rank r's clock reads
// t (1 + d_r) + o_r at true time t, rank 0's t (1 + d_0) + o_0. The largest error over the
// ranks of their maps now, in seconds; -1 when nothing was injected (or a test's clock).
double injected_error(Backend& b, const LocalClock& clock, const ClockMap& map) {
  const bool injected = (clock.offset != 0 || clock.rate != 1) && !clock.source;
  std::vector<double> v{injected ? 1.0 : 0.0, 0.0};
  if (injected) {
    const LocalClock zero = local_clock_for(0, b.ranks());
    const double local = clock();
    const double truth = (local - clock.offset) / clock.rate * zero.rate + zero.offset;
    v[1] = std::abs(map.to_common(local) - truth);
  }
  b.max_over_ranks(v);
  return v[0] > 0 ? v[1] : -1.0;
}

}  // namespace

CommonClock synchronise_clocks(Backend& b, const LocalClock& clock, const ClockSyncConfig& cfg) {
  CommonClock cc;
  if (clock_is_simulated() && !clock.source) {
    cc.basis = CommonClock::Basis::simulated;
    return cc;
  }
  const bool shared = one_kernel(b, clock);
  if (b.ranks() == 1 || !b.offers(Op::echo)) {
    if (b.ranks() > 1 && !shared)
      throw std::runtime_error(b.name() + ": no send/recv to measure the ranks' clocks, and they are not one kernel's");
    cc.basis = shared ? CommonClock::Basis::one_kernel : CommonClock::Basis::estimated;
    return cc;
  }
  double bound = 0, rtt = 0;
  if (b.rank() == 0) {
    fit_and_send(b, exchange_as_root(b, clock, cfg));
  } else {
    cc.map = exchange_as_rank(b, clock, cfg, bound, rtt);
  }
  std::vector<double> agreed{bound, std::abs(cc.map.offset), std::abs(cc.map.drift), rtt};
  b.max_over_ranks(agreed);
  cc.measured_bound = agreed[0];
  cc.measured_offset = agreed[1];
  cc.measured_drift = agreed[2];
  cc.min_round_trip = agreed[3];
  cc.exchanges = cfg.batches * cfg.pings * (b.ranks() - 1);
  // One kernel's clock is one clock: the map is the identity, unless a measured offset
  // lies outside its own bound, which would say it is not (then the estimate is used).
  cc.injected_error = injected_error(b, clock, cc.map);
  if (shared && cc.measured_offset <= cc.measured_bound) {
    cc.basis = CommonClock::Basis::one_kernel;
    cc.map = ClockMap{};
    cc.bound = 0;
  } else {
    cc.basis = CommonClock::Basis::estimated;
    cc.bound = cc.measured_bound;
  }
  return cc;
}

}  // namespace copbench
