// The common clock of a run's ranks (issue 35): the clock every rank's window start
// instants T_k are read on (copbench/timing.h, the window method).
//
// - A simulation (smpi: MPI_Wtime; sim-cop: the S4U engine's clock) has one global
//   simulated clock: it is the common clock, error 0, and waiting for an instant is a
//   simulated sleep (no error either).
// - One kernel (the local emulated cluster's network namespaces, own roots or not, a
//   Slurm job on it): CLOCK_MONOTONIC is one clock. The ranks say so by their kernel's
//   boot id, and the offsets are still measured by round trips through the backend's own
//   messages: the result records them with their bound, and an offset outside its bound
//   refuses the one-clock assumption (the estimated map is used instead).
// - Separate machines (or a test's injected skew, COPBENCH_CLOCK_SKEW): each rank's offset
//   and drift to rank 0 are estimated from round trips (ReproMPI's JK/HCA idea: in each of
//   several batches the exchange with the smallest round trip is kept, and a line is
//   fitted through the batches' offsets); the error bound is the largest of
//   round trip / 2 + |residual| over the batches.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "copbench/backend.h"

namespace copbench {

// From a rank's local clock to the common clock (rank 0's):
// common = local - (offset + drift * (local - t_ref)).
struct ClockMap {
  double offset = 0;  // seconds, local minus common at local time t_ref
  double drift = 0;   // d offset / d local (1e-6 is 1 ppm)
  double t_ref = 0;
  double to_common(double local) const { return local - offset - drift * (local - t_ref); }
  double to_local(double common) const { return (common + offset - drift * t_ref) / (1.0 - drift); }
};

// A rank's local clock: the harness's clock (now_seconds), with a skew a test injects
// (COPBENCH_CLOCK_SKEW="OFFSET_S,DRIFT_PPM": rank r's clock runs at 1 + d_r and is ahead
// by o_r, |o_r| <= OFFSET_S and |d_r| <= DRIFT_PPM, fixed per rank), so that the
// estimation has separate machines' clocks to recover on one machine.
// A unit test replaces the clock and the wait (tests/suite/fake_cluster.h).
struct LocalClock {
  double offset = 0;  // injected, seconds
  double rate = 1;    // injected, 1 + drift
  std::function<double()> source;            // empty: now_seconds()
  std::function<void(double local)> waiter;  // empty: wait_until's sleep and spin
  double operator()() const;
};
// The clock of `rank` under COPBENCH_CLOCK_SKEW (none: the harness's clock). Throws
// std::invalid_argument on a malformed setting.
LocalClock local_clock_for(int rank, int ranks);
// The injected skew's text for the result's context, "" when there is none.
std::string injected_clock_skew();

// Round trips of the estimation: `batches` batches of `pings` exchanges with every rank;
// the exchange with the smallest round trip of each batch is kept.
struct ClockSyncConfig {
  int batches = 6;
  int pings = 3;
};

// The run's common clock as this rank sees it; everything but `map` is the same on
// every rank.
struct CommonClock {
  enum class Basis { simulated, one_kernel, estimated };
  Basis basis = Basis::estimated;
  ClockMap map;                  // this rank's local -> common
  double bound = 0;              // the common clock's error bound on any rank, seconds
  double measured_offset = 0;    // max over ranks of |offset| measured by round trips, seconds
  double measured_bound = 0;     // max over ranks of that measurement's bound, seconds
  double measured_drift = 0;     // max over ranks of |drift| measured
  double min_round_trip = 0;     // the largest of the ranks' smallest round trips, seconds
  int exchanges = 0;             // round trips made (rank 0's count)
  // With an injected skew (COPBENCH_CLOCK_SKEW) the truth is known: the largest error
  // over ranks of the maps just after the estimate, seconds; -1 otherwise.
  double injected_error = -1;
  std::string basis_name() const;
  // One line for the result: the basis, the bound, the measured offsets and drift.
  std::string describe() const;
};

// One exchange of rank 0 with a rank: rank 0's clock at send (t0) and receipt (t1), the
// rank's clock between the two (t).
struct ClockSample {
  double t0 = 0, t = 0, t1 = 0;
  double round_trip() const { return t1 - t0; }
  double offset() const { return t - 0.5 * (t0 + t1); }  // the rank's clock minus rank 0's
};
// The map of one rank from its batches' minimum-round-trip samples and the bound of it:
// a line through (t, offset) of the batches within 4x (or 20 us) of the fastest round
// trip (three at least, else no drift), bound = max over them of round trip / 2 + |residual|.
ClockMap fit_clock(const std::vector<ClockSample>& samples, double& bound);

// A hash of this machine's kernel boot (/proc/sys/kernel/random/boot_id), the same on
// every process of one kernel whatever its namespaces; 0 when unreadable.
std::uint32_t kernel_boot_hash();

// Every rank together: measures the ranks' clocks against rank 0's through the backend's
// own send/recv (Op::echo) and agrees on the common clock. A simulated clock gives the
// simulated basis at once; a backend without send/recv on one kernel gives one_kernel
// unmeasured (said in describe()); otherwise throws std::runtime_error.
CommonClock synchronise_clocks(Backend& backend, const LocalClock& clock, const ClockSyncConfig& config = {});

// Waits until the local clock reads `local_target` (simulation: a simulated sleep;
// otherwise a sleep to within `spin_margin` seconds of it, then a spin on the clock).
void wait_until(const LocalClock& clock, double local_target, double spin_margin = 300e-6);

}  // namespace copbench
