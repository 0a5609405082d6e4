// Shared helpers of the benchmark files (OSU style: options and timing in one place).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "copbench/aligned_buffer.h"
#include "copbench/bench.h"
#include "copbench/shared_words.h"

namespace copbench::bench {

inline std::vector<std::size_t> sizes_for(const Benchmark& b, const RunParams& p) {
  return p.sizes.empty() ? b.default_sizes() : p.sizes;
}

inline std::vector<std::size_t> powers_of_two(std::size_t first, std::size_t last, bool with_zero) {
  std::vector<std::size_t> v;
  if (with_zero) v.push_back(0);
  for (std::size_t s = first; s <= last; s *= 2) v.push_back(s);
  return v;
}

inline PointResult make_point(std::string name, const Backend& b, Summary s) {
  PointResult p;
  p.name = std::move(name);
  p.counters["nodes"] = b.nodes();
  // With several tasks per node a collective spans more ranks than nodes; say how many.
  if (b.tasks_per_node() > 1) p.counters["ranks"] = b.ranks();
  p.summary = std::move(s);
  return p;
}

// A collective's point name under a labelled method: "method:M/" before the last part
// ("barrier/nodes:4" -> "barrier/method:loop/nodes:4"); the default (window) method's
// points keep the plain names old results and the seeds' reference rows use.
inline std::string method_name(const std::string& name, const std::string& method) {
  if (method == kMethodWindow) return name;
  const auto slash = name.rfind('/');
  const std::string part = "method:" + method;
  return slash == std::string::npos ? name + "/" + part : name.substr(0, slash + 1) + part + name.substr(slash);
}
inline std::string loop_name(const std::string& name) { return method_name(name, kMethodLoop); }

// A collective timed three ways (copbench/timing.h): the window method (every rank
// starts each call at one instant of a common clock; issue 35) under `name`, then the
// thesis's sync method (ch. VI: a sync before each timed call) under
// method_name(name, "sync") and the loop method of IMB and OSU (the calls back to back,
// loop time / n, maximum over ranks) under method_name(name, "loop"). Each point carries
// the label method=window|sync|loop. Only the methods the run picked (params.timing.methods,
// `copbench run --methods`, a campaign's `methods:`) are timed.
inline std::vector<PointResult> measure_collective(Backend& b, const RunParams& params, const std::string& name,
                                                   const std::function<void()>& op) {
  std::vector<PointResult> points;
  for (const std::string& method : params.timing.methods) {
    const std::string_view m = method;
    Batch batch = m == kMethodWindow ? timed_window(b, op, timer_overhead_seconds())
                  : m == kMethodSync ? timed_collective(b, op, timer_overhead_seconds())
                                     : timed_collective_loop(b, op, timer_overhead_seconds());
    PointResult p = make_point(method_name(name, method), b, measure(b, params.timing, batch));
    p.labels["method"] = method;
    points.push_back(std::move(p));
  }
  return points;
}

// measure_collective's points, each with `counters` (bytes, members, ...) added and
// reported: what every sized collective benchmark does with its operation.
inline void report_collective(Backend& b, const RunParams& params, Reporter& out, const std::string& name,
                              const std::function<void()>& op, const std::map<std::string, double>& counters = {}) {
  for (PointResult& p : measure_collective(b, params, name, op)) {
    for (const auto& [key, value] : counters) p.counters[key] = value;
    out.report(std::move(p));
  }
}

// A loop every rank runs and times (shared words, locks, fences): a sync, then `op`
// back to back; per rank loop time / iterations, maximum over ranks. `doing` and
// `per` say it in words: "every rank <doing> back to back after a sync; per rank loop
// time / <per>, maximum over ranks".
inline Batch every_rank_loop(Backend& b, std::function<void()> op, const std::string& doing, const std::string& per) {
  return timed_loop(b, std::move(op), true, 1.0, timer_overhead_seconds(),
                    "every rank " + doing + " back to back after a sync; per rank loop time / " + per +
                        ", maximum over ranks");
}

// The lock benchmarks (lock, ticket-lock, mcs-lock, queue-lock): every rank acquires and
// releases as fast as it can (acquire_release: one cycle); one point lock/<kind>/nodes:N
// with the label lock=<kind>, so the four compare point for point.
// How the report shows the four (copbench/bench.h): one cycle's time over contending nodes.
inline ReportTraits lock_report_traits() {
  ReportTraits t;
  t.time_is = " (acquire + release)";
  t.nodes_axis = "contending nodes";
  return t;
}
void measure_lock(Backend& b, const RunParams& params, Reporter& out, const std::string& kind,
                  std::function<void()> acquire_release);

// A payload of n bytes with a recognisable pattern (so a lost byte would show in verify).
inline std::vector<std::byte> payload(std::size_t n, int seed = 0) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + static_cast<std::size_t>(seed)) & 0xff);
  return v;
}

// How echo and bandwidth time their ping-pong (each point's timing_method).
inline constexpr const char* kPingPongMethod =
    "ping-pong (IMB PingPong, OSU latency): a sync, then the round trips back to back from separate page-aligned send and receive buffers, timed on rank 0 (the initiating rank); round trip / 2";

// echo's buffers, the way IMB PingPong and OSU latency keep them: one to send from and
// a distinct one to receive into, each page-aligned. With one buffer serving both, a
// large message is received over the very lines the next send reads, which is not the
// ping-pong the standard suites (or the thesis's echo, ch. VI) measure.
struct EchoBuffers {
  explicit EchoBuffers(std::size_t bytes) : send(bytes, 0), recv(bytes, 1) {}
  AlignedBuffer send;
  AlignedBuffer recv;
};

// One ping-pong iteration between rank 0 (the initiating rank) and `peer` through the
// backend's echo path; ranks outside the pair do nothing. `bufs` must outlive the op.
inline std::function<void()> ping_pong(Backend& b, int peer, EchoBuffers& bufs) {
  if (b.rank() == 0)
    return [&b, peer, &bufs] {
      b.send(peer, bufs.send.span());
      b.recv(peer, bufs.recv.span());
    };
  if (b.rank() == peer)
    return [&b, &bufs] {
      b.recv(0, bufs.recv.span());
      b.send(0, bufs.send.span());
    };
  return [] {};
}

// echo's and bandwidth's point: ping-pongs of `size` bytes between rank 0 and `peer`
// from their own EchoBuffers, timed on rank 0, round trip / 2 (kPingPongMethod).
inline Summary measure_ping_pong(Backend& b, const RunParams& params, int peer, std::size_t size) {
  EchoBuffers bufs(size);
  return measure(b, params.timing,
                 timed_loop(b, ping_pong(b, peer, bufs), b.rank() == 0, 0.5, timer_overhead_seconds(), kPingPongMethod));
}

}  // namespace copbench::bench
