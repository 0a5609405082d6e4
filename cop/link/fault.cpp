#include "link/fault.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "link/fault_internal.h"

namespace cop::link {

namespace {

struct State {
  std::mutex mu;
  bool loaded = false;
  bool on = false;
  // `loaded && !on`, readable without mu: every datagram asks active_faults() (three times
  // a round in copd), and with no faults switched on it need not take the lock.
  std::atomic<bool> known_off{false};
  FaultSpec spec;
  uint64_t salt = 0;
  std::mt19937_64 rng;
  FaultStats stats;
};

State& state() {
  static State s;
  return s;
}

void seed_locked(State& s) { s.rng.seed(s.spec.seed * 0x9E3779B97F4A7C15ull ^ (s.salt + 0x632BE59BD9B4E019ull)); }

void load_locked(State& s) {
  if (s.loaded) return;
  s.loaded = true;
  const char* env = std::getenv("COP_FAULTS");
  if (!env || !*env) return;
  std::string error;
  auto spec = parse_faults(env, error);
  if (!spec) {
    std::fprintf(stderr, "COP_FAULTS ignored: %s\n", error.c_str());
    return;
  }
  s.spec = *spec;
  s.on = spec->any();
  seed_locked(s);
}

// After loaded or on changed (mu held).
void publish_locked(State& s) { s.known_off.store(s.loaded && !s.on, std::memory_order_release); }

double rate(State& s) { return std::uniform_real_distribution<double>(0.0, 1.0)(s.rng); }

}  // namespace

std::optional<FaultSpec> parse_faults(const std::string& text, std::string& error) {
  FaultSpec f;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      error = fmt::format("'{}' is not key=value (keys: drop corrupt dup reorder delay delay_ms seed)", item);
      return std::nullopt;
    }
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    char* end = nullptr;
    if (key == "delay_ms" || key == "seed") {
      const unsigned long long v = std::strtoull(val.c_str(), &end, 10);
      if (val.empty() || *end || val[0] == '-' || (key == "delay_ms" && (v < 1 || v > 10000))) {
        error = fmt::format("{}='{}' is not {}", key, val, key == "seed" ? "an unsigned integer" : "1..10000 (ms)");
        return std::nullopt;
      }
      if (key == "seed") f.seed = v; else f.delay_ms = int(v);
      continue;
    }
    const double p = std::strtod(val.c_str(), &end);
    if (val.empty() || *end || !(p >= 0.0 && p <= 1.0)) {
      error = fmt::format("{}='{}' is not a probability 0..1", key, val);
      return std::nullopt;
    }
    if (key == "drop") f.drop = p;
    else if (key == "corrupt") f.corrupt = p;
    else if (key == "dup") f.dup = p;
    else if (key == "reorder") f.reorder = p;
    else if (key == "delay") f.delay = p;
    else {
      error = fmt::format("unknown fault '{}' (keys: drop corrupt dup reorder delay delay_ms seed)", key);
      return std::nullopt;
    }
  }
  return f;
}

std::string to_string(const FaultSpec& f) {
  return fmt::format("drop={},corrupt={},dup={},reorder={},delay={},delay_ms={},seed={}", f.drop, f.corrupt, f.dup,
                     f.reorder, f.delay, f.delay_ms, f.seed);
}

void set_faults(const FaultSpec& spec, uint64_t salt) {
  State& s = state();
  std::lock_guard lock(s.mu);
  s.loaded = true;
  s.spec = spec;
  s.on = spec.any();
  s.salt = salt;
  seed_locked(s);
  publish_locked(s);
}

void set_fault_salt(uint64_t salt) {
  State& s = state();
  std::lock_guard lock(s.mu);
  load_locked(s);
  s.salt = salt;
  seed_locked(s);
}

const FaultSpec* active_faults() {
  State& s = state();
  if (s.known_off.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard lock(s.mu);
  load_locked(s);
  publish_locked(s);
  return s.on ? &s.spec : nullptr;
}

FaultStats fault_stats() {
  State& s = state();
  std::lock_guard lock(s.mu);
  return s.stats;
}

namespace detail {

FaultDecision fault_decide() {
  State& s = state();
  std::lock_guard lock(s.mu);
  load_locked(s);
  FaultDecision d;
  if (!s.on) return d;
  s.stats.datagrams++;
  // One fault at most per datagram, each with its own rate.
  if (rate(s) < s.spec.drop) {
    d.drop = true;
    s.stats.dropped++;
  } else if (rate(s) < s.spec.corrupt) {
    d.corrupt = std::uniform_int_distribution<int>(1, 3)(s.rng);
    d.corrupt_seed = s.rng();
    s.stats.corrupted++;
  } else if (rate(s) < s.spec.dup) {
    d.dup = true;
    s.stats.duplicated++;
  } else if (rate(s) < s.spec.reorder) {
    d.reorder = true;
    d.hold_ms = s.spec.delay_ms;
    s.stats.reordered++;
  } else if (rate(s) < s.spec.delay) {
    d.hold_ms = std::uniform_int_distribution<int>(0, s.spec.delay_ms)(s.rng);
    d.delay = true;
    s.stats.delayed++;
  }
  return d;
}

void fault_corrupt(std::span<uint8_t> bytes, const FaultDecision& d) {
  if (bytes.empty()) return;
  std::mt19937_64 r(d.corrupt_seed);
  for (int i = 0; i < d.corrupt; ++i) {
    const size_t at = std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(r);
    bytes[at] ^= uint8_t(std::uniform_int_distribution<int>(1, 255)(r));
  }
}

}  // namespace detail

}  // namespace cop::link
