// copbench-cop-compare --bulk: arrays through libcop beside the bare transport
// moving the same bytes the same way (one task a node).
//
// libcop, each call after an untimed cop_barrier, the per-call time the maximum
// over the tasks (and the modelled time, the controller's clock):
//   a 16 KB cop_bcast (2048 PVM_LONG from instance 0), an 8 KB int cop_reduce
//   (2048 PVM_INT, SUM, root instance 0) and an 8 KB double one (1024 PVM_DOUBLE);
//   every answer checked (a wrong one is no measurement).
// The bare transport: a controller process and a process per other node on
// loopback sockets, plain UDP, no COP frames or logic; this process is the task:
//   bcast   the task sends the 16 KB to the controller process, which sends it
//           to every other node; each node answers the task with one byte (the
//           task's time ends with the last answer: one small hop more than a COP
//           receiver's)
//   reduce  the task sends a one-byte start to every other node and its 8 KB to
//           the controller process; each node sends its 8 KB there; the
//           controller adds the arrays (the element type's sum) and sends the
//           result to the task
#include <cop/cop.h>
#include <pvm3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>

#include "bench/compare.h"
#include "link/udp.h"

namespace cop::bench {

namespace {

constexpr int kBcastWords = 2048, kIntCount = 2048, kDblCount = 1024;
constexpr size_t kBcastBytes = 16384, kReduceBytes = 8192;
// GAS ranges of the three calls, each its own words.
constexpr int kCastTag = 8192, kIntTag = 16384, kDblTag = 24576;

// Per-call sums over a rep (measured and modelled microseconds).
struct Sums {
  double t = 0, m = 0;
};

template <typename Call>
int timed_call(Sums& s, Call call) {
  const double m0 = modelled_us(), t0 = now_us();
  const int rc = call();
  s.t += now_us() - t0;
  s.m += modelled_us() - m0;
  return rc;
}

// One iteration of the three calls, each after an untimed barrier; every answer checked.
int bulk_iteration(int inst, int size, int it, int root_tid, std::vector<Sums>& s) {
  std::vector<long> cast(kBcastWords);
  std::vector<int> ints(kIntCount);
  std::vector<double> dbls(kDblCount);
  int root = 0;
  int status = cop_barrier(kGroup, size, 4);
  for (int i = 0; i < kBcastWords; ++i) cast[size_t(i)] = inst == 0 ? long(i) * 7 + it : -1;
  status = std::min(status, timed_call(s[0], [&] {
    return inst == 0 ? cop_bcast(cast.data(), kBcastWords, PVM_LONG, kGroup, kCastTag, COP_SEND, -1)
                     : cop_bcast(cast.data(), kBcastWords, PVM_LONG, kGroup, kCastTag, COP_RECV, root_tid);
  }));
  for (int i = 0; i < kBcastWords && status >= 0; ++i)
    if (cast[size_t(i)] != long(i) * 7 + it) status = -1;
  status = std::min(status, cop_barrier(kGroup, size, 5));
  for (int i = 0; i < kIntCount; ++i) ints[size_t(i)] = inst + i;
  status = std::min(status, timed_call(s[1], [&] {
    return cop_reduce(COP_SUM, ints.data(), PVM_INT, kIntCount, kIntTag, kGroup, &root, 1);
  }));
  for (int i = 0; i < kIntCount && inst == 0 && status >= 0; ++i)
    if (ints[size_t(i)] != size * (size - 1) / 2 + size * i) status = -1;
  status = std::min(status, cop_barrier(kGroup, size, 6));
  for (int i = 0; i < kDblCount; ++i) dbls[size_t(i)] = inst + 0.5 * i;
  status = std::min(status, timed_call(s[2], [&] {
    return cop_reduce(COP_SUM, dbls.data(), PVM_DOUBLE, kDblCount, kDblTag, kGroup, &root, 1);
  }));
  for (int i = 0; i < kDblCount && inst == 0 && status >= 0; ++i)
    if (dbls[size_t(i)] != size * (size - 1) / 2.0 + size * 0.5 * i) status = -1;
  return status;
}

// The controller process: a broadcast goes to every node; reduce contributions
// are added (32-bit ints or doubles) and the last one sends the result to the task.
template <typename T>
void add_into(std::vector<uint8_t>& acc, const std::vector<uint8_t>& in, size_t n) {
  for (size_t i = 1; i + sizeof(T) <= n; i += sizeof(T)) {
    T a, b;
    std::memcpy(&a, &acc[i], sizeof(T));
    std::memcpy(&b, &in[i], sizeof(T));
    a += b;
    std::memcpy(&acc[i], &a, sizeof(T));
  }
}

[[noreturn]] void controller_process(link::UdpSocket& ctl, const sockaddr_in& task,
                                     const std::vector<sockaddr_in>& nodes, int contributors) {
  std::vector<uint8_t> buf, acc;
  int got = 0;
  for (;;) {
    const long n = ctl.receive(buf, -1);
    if (n <= 0 || buf[0] == 'Q') _exit(0);
    if (buf[0] == 'B') {
      for (const sockaddr_in& to : nodes) ctl.send_to(std::span<const uint8_t>(buf.data(), size_t(n)), to);
      if (nodes.empty()) ctl.send_to(std::span<const uint8_t>(buf.data(), 1), task);
      continue;
    }
    if (got == 0) acc.assign(buf.begin(), buf.begin() + n);
    else if (buf[0] == 'I') add_into<int32_t>(acc, buf, size_t(n));
    else add_into<double>(acc, buf, size_t(n));
    if (++got == contributors) {
      ctl.send_to(acc, task);
      got = 0;
    }
  }
}

// A node process: answers a broadcast with one byte to the task; on a start, sends its 8 KB.
[[noreturn]] void node_process(link::UdpSocket& me, const sockaddr_in& task, const sockaddr_in& ctl) {
  std::vector<uint8_t> buf, mine(1 + kReduceBytes, 0);
  for (;;) {
    const long n = me.receive(buf, -1);
    if (n <= 0 || buf[0] == 'Q') _exit(0);
    if (buf[0] == 'B') {
      const uint8_t got = 'A';
      me.send_to(std::span<const uint8_t>(&got, 1), task);
    } else if (buf[0] == 'G') {
      mine[0] = buf[1];
      me.send_to(mine, ctl);
    }
  }
}

double timed_bare(int iters, int reps, const std::function<void()>& f) {
  std::vector<double> per;
  for (int i = 0; i < 50; ++i) f();  // warm
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_us();
    for (int i = 0; i < iters; ++i) f();
    per.push_back((now_us() - t0) / iters);
  }
  return median(per);
}

}  // namespace

std::vector<double> bulk_child(const Options& o, int inst, int size, int& status) {
  std::vector<double> out(kBulkMetrics, -1.0);
  std::vector<std::vector<double>> per(kBulkMetrics);
  const int root_tid = pvm_gettid(kGroup, 0);
  for (int r = 0; r < o.reps && status >= 0; ++r) {
    std::vector<Sums> s(3);
    for (int it = 0; it < o.iters && status >= 0; ++it) status = bulk_iteration(inst, size, it, root_tid, s);
    for (size_t k = 0; k < 3; ++k) {
      per[2 * k].push_back(s[k].t / o.iters);
      per[2 * k + 1].push_back(s[k].m / o.iters);
    }
  }
  for (size_t k = 0; k < per.size(); ++k) out[k] = median(per[k]);
  return out;
}

BareBulk bare_bulk(int nodes, int iters, int reps, int poll_us) {
  const auto any = link::parse_endpoint("127.0.0.1:0", 0);
  const int others = std::max(0, nodes - 1);
  link::UdpSocket task(any), ctl(any);
  std::vector<link::UdpSocket> node;
  for (int k = 0; k < others; ++k) node.emplace_back(any);
  task.set_poll_us(poll_us);
  ctl.set_poll_us(poll_us);
  std::vector<sockaddr_in> node_at;
  for (auto& n : node) {
    n.set_poll_us(poll_us);
    node_at.push_back(n.local());
  }
  std::vector<pid_t> kids;
  kids.push_back(fork());
  if (kids.back() == 0) controller_process(ctl, task.local(), node_at, nodes);
  for (int k = 0; k < others; ++k) {
    kids.push_back(fork());
    if (kids.back() == 0) node_process(node[size_t(k)], task.local(), ctl.local());
  }
  std::vector<uint8_t> cast(1 + kBcastBytes, 1), contrib(1 + kReduceBytes, 0), buf;
  cast[0] = 'B';
  auto bcast_once = [&] {
    task.send_to(cast, ctl.local());
    for (int k = 0; k < std::max(1, others); ++k) task.receive(buf, 1000);
  };
  auto reduce_once = [&](uint8_t type) {
    const uint8_t go[2] = {'G', type};
    for (const sockaddr_in& to : node_at) task.send_to(std::span<const uint8_t>(go, 2), to);
    contrib[0] = type;
    task.send_to(contrib, ctl.local());
    task.receive(buf, 1000);
  };
  BareBulk b;
  b.bcast_us = timed_bare(iters, reps, bcast_once);
  b.reduce_int_us = timed_bare(iters, reps, [&] { reduce_once('I'); });
  b.reduce_dbl_us = timed_bare(iters, reps, [&] { reduce_once('D'); });
  const uint8_t quit = 'Q';
  task.send_to(std::span<const uint8_t>(&quit, 1), ctl.local());
  for (const sockaddr_in& to : node_at) task.send_to(std::span<const uint8_t>(&quit, 1), to);
  for (pid_t k : kids) waitpid(k, nullptr, 0);
  return b;
}

int bulk_report(const Options& o, const BareBulk& bare, const std::vector<double>& w) {
  std::printf("libcop arrays vs the bare transport (task -> controller process -> every node, plain UDP) on this "
              "machine: %d node(s), %s access, %s, median of %d reps of %d\n",
              o.nodes, o.access.c_str(), o.poll_us > 0 ? "waits poll then sleep" : "waits sleep", o.reps, o.iters);
  std::printf("%-32s %12s %14s %12s %10s\n", "operation", "cop us", "modelled us", "bare us", "cop/bare");
  const struct {
    const char *name, *key;
    double cop, model, bare;
  } rows[] = {{"cop_bcast 16 KB (2048 long)", "bcast_16k", w[kBcast16K], w[kBcastModel], bare.bcast_us},
              {"cop_reduce 8 KB int (2048, SUM)", "reduce_int_8k", w[kReduceInt8K], w[kReduceIntModel],
               bare.reduce_int_us},
              {"cop_reduce 8 KB double (1024)", "reduce_double_8k", w[kReduceDbl8K], w[kReduceDblModel],
               bare.reduce_dbl_us}};
  for (const auto& r : rows)
    std::printf("%-32s %12.1f %14.1f %12.1f %9.2fx\n", r.name, r.cop, r.model, r.bare, r.cop / r.bare);
  if (o.json.empty()) return 0;
  const std::string tmp = o.json + ".tmp";
  std::ofstream j(tmp);
  j << "{\n  \"nodes\": " << o.nodes << ", \"access\": \"" << o.access << "\", \"iters\": " << o.iters
    << ", \"reps\": " << o.reps << ", \"poll_us\": " << o.poll_us << ",\n";
  for (size_t i = 0; i < 3; ++i)
    j << "  \"" << rows[i].key << "\": {\"cop_us\": " << rows[i].cop << ", \"modelled_us\": " << rows[i].model
      << ", \"bare_us\": " << rows[i].bare << ", \"cop_over_bare\": " << rows[i].cop / rows[i].bare << "}"
      << (i < 2 ? ",\n" : "\n");
  j << "}\n";
  j.close();
  if (!j || std::rename(tmp.c_str(), o.json.c_str()) != 0) {
    std::fprintf(stderr, "copbench-cop-compare: could not write %s\n", o.json.c_str());
    return 1;
  }
  return 0;
}

}  // namespace cop::bench
