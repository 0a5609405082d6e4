// Warm-up, repetitions and the per-iteration maximum over ranks (see timing.h).
#include <algorithm>
#include <ctime>
#include <numeric>

#include "copbench/timing.h"

namespace copbench {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double timer_overhead_seconds() {
  static const double overhead = [] {
    std::vector<double> samples(201);
    for (double& x : samples) {
      double t0 = now_seconds();
      double t1 = now_seconds();
      x = t1 - t0;
    }
    return median_of(samples);
  }();
  return overhead;
}

namespace {

// One repetition: the batch, then the per-iteration maximum over ranks; returns the
// repetition's value and its CPU time per iteration (both identical on every rank).
std::pair<double, double> one_repetition(Backend& backend, const Batch& batch, std::vector<double>& seconds,
                                         std::vector<double>& gathered) {
  const auto iterations = static_cast<double>(seconds.size());
  double c0 = cpu_seconds();
  batch(seconds);
  double cpu = (cpu_seconds() - c0) / iterations;
  std::copy(seconds.begin(), seconds.end(), gathered.begin());
  gathered.back() = cpu;
  backend.max_over_ranks(gathered);  // identical on every rank, so decisions agree
  double sum = std::accumulate(gathered.begin(), gathered.end() - 1, 0.0);
  return {std::max(sum / iterations, 0.0), gathered.back()};
}

void warm_up(const TimingConfig& config, const Batch& batch) {
  if (config.warmup <= 0) return;
  std::vector<double> warm(static_cast<std::size_t>(config.warmup));
  batch(warm);
}

}  // namespace

Summary measure(Backend& backend, const TimingConfig& config, const Batch& batch) {
  const int iterations = std::max(config.iterations, 1);
  warm_up(config, batch);
  OutlierProtocol protocol(config);
  std::vector<double> kept_cpu;
  std::vector<double> seconds(static_cast<std::size_t>(iterations));
  std::vector<double> gathered(static_cast<std::size_t>(iterations) + 1);
  while (protocol.wants_more()) {
    auto [value, cpu] = one_repetition(backend, batch, seconds, gathered);
    if (protocol.add(value)) kept_cpu.push_back(cpu);
  }
  return summarize(protocol, std::move(kept_cpu), iterations, timer_overhead_seconds());
}

std::pair<Summary, Summary> measure_interleaved(Backend& backend, const TimingConfig& config,
                                                const Batch& a, const Batch& b) {
  const int iterations = std::max(config.iterations, 1);
  warm_up(config, a);
  warm_up(config, b);
  OutlierProtocol pa(config), pb(config);
  std::vector<double> cpu_a, cpu_b;
  std::vector<double> seconds(static_cast<std::size_t>(iterations));
  std::vector<double> gathered(static_cast<std::size_t>(iterations) + 1);
  auto run = [&](const Batch& batch, OutlierProtocol& p, std::vector<double>& cpu_kept) {
    auto [value, cpu] = one_repetition(backend, batch, seconds, gathered);
    if (p.add(value)) cpu_kept.push_back(cpu);
  };
  for (int round = 0; pa.wants_more() || pb.wants_more(); ++round) {
    if (round % 2 == 0) {
      run(a, pa, cpu_a);
      run(b, pb, cpu_b);
    } else {
      run(b, pb, cpu_b);
      run(a, pa, cpu_a);
    }
  }
  return {summarize(pa, std::move(cpu_a), iterations, timer_overhead_seconds()),
          summarize(pb, std::move(cpu_b), iterations, timer_overhead_seconds())};
}

Batch timed_collective(Backend& backend, std::function<void()> op, double timer_overhead) {
  return [&backend, op = std::move(op), timer_overhead](std::vector<double>& seconds) {
    for (double& x : seconds) {
      backend.sync();
      double t0 = now_seconds();
      op();
      double t1 = now_seconds();
      x = t1 - t0 - timer_overhead;
    }
  };
}

Batch timed_loop(Backend& backend, std::function<void()> op, bool counted, double scale,
                 double timer_overhead) {
  return [&backend, op = std::move(op), counted, scale, timer_overhead](std::vector<double>& seconds) {
    backend.sync();
    double t0 = now_seconds();
    for (std::size_t i = 0; i < seconds.size(); ++i) op();
    double t1 = now_seconds();
    double per = counted ? (t1 - t0 - timer_overhead) / static_cast<double>(seconds.size()) * scale : 0.0;
    std::fill(seconds.begin(), seconds.end(), per);
  };
}

}  // namespace copbench
