// Warm-up, repetitions and the per-iteration maximum over ranks (see timing.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

#include "copbench/timed_batch.h"
#include "copbench/timing.h"

namespace copbench {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double timer_overhead_seconds() {
#ifdef COPBENCH_SIMULATED_CLOCK
  // A simulated clock reads the same cost every time, so one sample says it. No static
  // here: the smpi worker runs unprivatized (every rank shares the process's statics,
  // baselines/backends.json) and a clock read is a call into the simulator that lets
  // another rank run; a rank reaching a static's guarded initialisation while another
  // is inside it would wait on the guard forever.
  const double t0 = now_seconds();
  const double t1 = now_seconds();
  return t1 - t0;
#else
  static const double overhead = [] {
    std::vector<double> samples(simulated_clock().now ? 1 : 201);
    for (double& x : samples) {
      double t0 = now_seconds();
      double t1 = now_seconds();
      x = t1 - t0;
    }
    return median_of(samples);
  }();
  return overhead;
#endif
}

namespace {

struct Repetition {
  double value = 0;     // seconds per iteration: mean over valid iterations of the max over ranks
  long invalid = 0;     // iterations left out (is_invalid_call); all of them: value is NaN
  double cpu = 0;       // process CPU seconds per iteration, max over ranks
  double modelled = 0;  // modelled-hardware seconds per iteration, max over ranks
};

// One repetition: the batch, then the per-iteration maximum over ranks (identical on
// every rank, so every rank's protocol takes the same decisions).
Repetition one_repetition(Backend& backend, const Batch& batch, std::vector<double>& seconds,
                          std::vector<double>& gathered) {
  const auto iterations = static_cast<double>(seconds.size());
  std::optional<double> m0 = backend.modelled_clock();
  double c0 = cpu_seconds();
  batch(seconds);
  double cpu = (cpu_seconds() - c0) / iterations;
  std::optional<double> m1 = backend.modelled_clock();
  std::copy(seconds.begin(), seconds.end(), gathered.begin());
  gathered[seconds.size()] = cpu;
  gathered[seconds.size() + 1] = m0 && m1 ? (*m1 - *m0) / iterations : 0.0;
  backend.max_over_ranks(gathered);
  double sum = 0;
  long invalid = 0;
  for (std::size_t i = 0; i < seconds.size(); ++i)
    is_invalid_call(gathered[i]) ? void(++invalid) : void(sum += gathered[i]);
  const double valid = iterations - static_cast<double>(invalid);
  const double value = valid > 0 ? std::max(sum / valid, 0.0) : std::nan("");
  return {value, invalid, gathered[seconds.size()], gathered[seconds.size() + 1]};
}

// Records a repetition under the protocol (one whose every call was invalid counts as
// discarded); true when kept. Counts its calls in `s`.
bool record(OutlierProtocol& protocol, const Repetition& rep, std::size_t iterations, Summary& s) {
  s.timed_calls += static_cast<long>(iterations);
  s.invalid_calls += rep.invalid;
  if (std::isnan(rep.value)) {
    protocol.add_invalid();
    return false;
  }
  return protocol.add(rep.value);
}

void describe(Summary& s, const TimingConfig& config, const Batch& batch, const Summary& calls) {
  s.method = batch.method();
  s.max_reps = config.max_reps;
  s.ci_target = config.ci_target;
  s.timed_calls = calls.timed_calls;
  s.invalid_calls = calls.invalid_calls;
  if (batch.annotate) batch.annotate(s);
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
  std::vector<double> kept_cpu, kept_modelled;
  std::vector<double> seconds(static_cast<std::size_t>(iterations));
  std::vector<double> gathered(static_cast<std::size_t>(iterations) + 2);
  const bool modelled = backend.modelled_clock().has_value();
  Summary calls;
  while (protocol.wants_more()) {
    Repetition rep = one_repetition(backend, batch, seconds, gathered);
    if (record(protocol, rep, seconds.size(), calls)) {
      kept_cpu.push_back(rep.cpu);
      if (modelled) kept_modelled.push_back(rep.modelled);
    }
  }
  Summary s = summarize(protocol, std::move(kept_cpu), iterations, timer_overhead_seconds(), std::move(kept_modelled));
  describe(s, config, batch, calls);
  // Never a figure from nothing: a point whose every call was invalid has no time.
  if (s.reps.empty() && s.invalid_calls > 0)
    throw std::runtime_error("no repetition kept: " + std::to_string(s.invalid_calls) + " of the " +
                             std::to_string(s.timed_calls) +
                             " timed calls invalid (a rank late for its start instant), the others thrown out: no "
                             "time to report; " + s.method);
  return s;
}

std::pair<Summary, Summary> measure_interleaved(Backend& backend, const TimingConfig& config,
                                                const Batch& a, const Batch& b) {
  const int iterations = std::max(config.iterations, 1);
  warm_up(config, a);
  warm_up(config, b);
  OutlierProtocol pa(config), pb(config);
  Summary calls_a, calls_b;
  std::vector<double> cpu_a, cpu_b;
  std::vector<double> seconds(static_cast<std::size_t>(iterations));
  std::vector<double> gathered(static_cast<std::size_t>(iterations) + 2);
  auto run = [&](const Batch& batch, OutlierProtocol& p, std::vector<double>& cpu_kept, Summary& calls) {
    Repetition rep = one_repetition(backend, batch, seconds, gathered);
    if (record(p, rep, seconds.size(), calls)) cpu_kept.push_back(rep.cpu);
  };
  for (int round = 0; pa.wants_more() || pb.wants_more(); ++round) {
    if (round % 2 == 0) {
      run(a, pa, cpu_a, calls_a);
      run(b, pb, cpu_b, calls_b);
    } else {
      run(b, pb, cpu_b, calls_b);
      run(a, pa, cpu_a, calls_a);
    }
  }
  std::pair<Summary, Summary> out{summarize(pa, std::move(cpu_a), iterations, timer_overhead_seconds()),
                                  summarize(pb, std::move(cpu_b), iterations, timer_overhead_seconds())};
  describe(out.first, config, a, calls_a);
  describe(out.second, config, b, calls_b);
  return out;
}

namespace {
// The harness's clock (timing.h): steady_clock, read inline in the timed region.
struct SteadyClock {
  double operator()() const { return now_seconds(); }
};
}  // namespace

Batch timed_collective(Backend& backend, std::function<void()> op, double timer_overhead) {
  return timed::collective(backend, std::move(op), timer_overhead, SteadyClock{});
}

Batch timed_loop(Backend& backend, std::function<void()> op, bool counted, double scale,
                 double timer_overhead, std::string method) {
  return timed::loop(backend, std::move(op), counted, scale, timer_overhead, std::move(method), SteadyClock{});
}

Batch timed_collective_loop(Backend& backend, std::function<void()> op, double timer_overhead) {
  return timed::collective_loop(backend, std::move(op), timer_overhead, SteadyClock{});
}

std::vector<std::string> parse_methods(const std::string& list) {
  const std::vector<std::string> known = TimingConfig{}.methods;  // every method, in its order
  std::string known_text = "known:";
  for (const std::string& m : known) known_text += (known_text.size() > 6 ? ", " : " ") + m;
  std::vector<bool> named(known.size(), false);
  std::size_t from = 0;
  while (from <= list.size()) {
    const std::size_t comma = std::min(list.find(',', from), list.size());
    const std::string item = list.substr(from, comma - from);
    from = comma + 1;
    if (item.empty() && list.find_first_not_of(", ") == std::string::npos) break;  // nothing named at all
    const auto at = std::find(known.begin(), known.end(), item);
    if (at == known.end()) throw std::invalid_argument("unknown method '" + item + "' (" + known_text + ")");
    const auto i = static_cast<std::size_t>(at - known.begin());
    if (named[i]) throw std::invalid_argument("method '" + item + "' named twice");
    named[i] = true;
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < known.size(); ++i)
    if (named[i]) out.push_back(known[i]);
  if (out.empty()) throw std::invalid_argument("no method named (" + known_text + ")");
  return out;
}

std::string methods_text(const std::vector<std::string>& methods) {
  std::string s;
  for (const std::string& m : methods) s += (s.empty() ? "" : ",") + m;
  return s;
}

std::vector<std::string> summary_warnings(const Summary& s) {
  std::vector<std::string> w;
  const auto kept = s.reps.size();
  if (s.timed_calls > 0 && s.invalid_calls * 10 > s.timed_calls)
    w.push_back(std::to_string(s.invalid_calls) + " of " + std::to_string(s.timed_calls) +
                " calls invalid (a rank reached its start instant late) even after " + std::to_string(s.widenings) +
                " widening(s) of the window: the machine could not keep the ranks to their instants");
  if (static_cast<std::size_t>(s.discarded) > kept)
    w.push_back(std::to_string(s.discarded) + " repetitions discarded (the first, and those over 3x the mean of the "
                "next three) but only " + std::to_string(kept) + " kept: the machine was disturbed during this point");
  if (!s.ci_met && kept < 2) {  // one value has no interval (the protocol's ci_met)
    w.push_back("confidence target missed: " + std::to_string(kept) +
                " repetition kept, which gives no interval (the discarded first one was not equal to it), after " +
                std::to_string(kept + static_cast<std::size_t>(s.discarded)) + " repetitions" +
                (s.max_reps > 0 ? " (limit " + std::to_string(s.max_reps) + "); --reps 2 keeps two" : std::string()));
  } else if (!s.ci_met) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f %%", s.mean > 0 ? 100.0 * s.ci95_half / s.mean : 0.0);
    char target[32];
    std::snprintf(target, sizeof target, "%.0f %%", 100.0 * s.ci_target);
    w.push_back(std::string("confidence target missed: the 95 % interval is ") + buf + " of the mean (target " +
                target + ") after " + std::to_string(kept + static_cast<std::size_t>(s.discarded)) +
                " repetitions" + (s.max_reps > 0 ? " (limit " + std::to_string(s.max_reps) + ")" : std::string()));
  }
  return w;
}

}  // namespace copbench
