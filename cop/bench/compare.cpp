// copbench-cop-compare: libcop beside libpvm on one machine, in one run: the
// comparison of seed 000 Table IV (COP's collectives against PVM's on the same
// tasks), with the bare transport round trip as the floor COP's times sit on.
//
//   copbench-cop-compare --stack DIR [--nodes 4] [--tasks 1] [--access direct|normal]
//                        [--iters 2000] [--reps 5] [--json FILE] [--bulk]
//                        [--groups static|default|ask]
// needs a running pvmd and the COP stack of DIR (scripts/cop-stack); `copbench cop
// compare` starts both, runs this and stops them.
//
// Measured, each the median over reps of a mean over iters:
//   rtt          a bare round trip of one COP-sized frame (one command) between two
//                processes over UDP on loopback: the transport copd uses
//   cop_barrier  back to back, all tasks (static group)
//   pvm_barrier  the same tasks and group
//   cop_reduce / pvm_reduce  one double, SUM, root instance 0, each preceded by an
//                untimed barrier of its own library (the thesis's method), timed at the root
// The COP figures also come as modelled hardware time: the controller's cycle clock
// advance per operation (P_CLK = 10 ns).
// --bulk: arrays beside the bare transport instead (compare_bulk.cpp).
// --groups: how libcop finds the group's members (compare.h, Options::groups); static
// (CopStaticGroups, the default here) or libcop's own default, or the group server asked
// on every call (CopGroupCache 0): issue 26 compares them.
#include <cop/cop.h>
#include <cop/link.h>
#include <pvm3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench/compare.h"
#include "link/udp.h"

namespace cop::bench {

char kGroup[] = "copcompare";

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double modelled_us() {
  unsigned long long c = 0;
  cop_modelled_cycles(&c);
  return double(c) * kPclkNs / 1000.0;
}

}  // namespace cop::bench

namespace {

using namespace cop::bench;

// What each task measures (microseconds; modelled in microseconds too).
enum Metric { kCopBarrier, kCopBarrierModel, kPvmBarrier, kCopReduce, kCopReduceModel, kPvmReduce, kMetrics };

// One task's samples, one per rep, each a mean over the rep's iterations.
struct Samples {
  std::vector<double> cop_barrier, cop_barrier_model, pvm_barrier, cop_reduce, cop_reduce_model, pvm_reduce;
};

// cop_barrier back to back (measured and modelled) while `status` stays good, then
// pvm_barrier (always: the other tasks wait in them).
void measure_barriers(const Options& o, int size, int pvm_iters, Samples& s, int& status) {
  pvm_barrier(kGroup, size);
  const double m0 = modelled_us(), t0 = now_us();
  for (int i = 0; i < o.iters && status >= 0; ++i) status = cop_barrier(kGroup, size, 2);
  s.cop_barrier.push_back((now_us() - t0) / o.iters);
  s.cop_barrier_model.push_back((modelled_us() - m0) / o.iters);
  pvm_barrier(kGroup, size);
  const double p0 = now_us();
  for (int i = 0; i < pvm_iters; ++i) pvm_barrier(kGroup, size);
  s.pvm_barrier.push_back((now_us() - p0) / pvm_iters);
}

// Reductions of one double, each after an untimed barrier of its own library (the
// thesis's method), timed at every task; the root checks the sum. The libcop ones
// while `status` stays good, the PVM ones always.
void measure_reductions(const Options& o, int size, int pvm_iters, int inst, Samples& s, int& status) {
  double cop_sum = 0, pvm_sum = 0, cop_model = 0;
  int root = 0;
  for (int i = 0; i < o.iters && status >= 0; ++i) {
    status = cop_barrier(kGroup, size, 3);
    double v = inst + 1.0;
    const double m0 = modelled_us(), t0 = now_us();
    status = std::min(status, cop_reduce(COP_SUM, &v, PVM_DOUBLE, 1, 8, kGroup, &root, 1));
    cop_sum += now_us() - t0;
    cop_model += modelled_us() - m0;
    if (inst == 0 && v != size * (size + 1) / 2.0) status = -1;  // a wrong answer is no measurement
  }
  s.cop_reduce.push_back(cop_sum / o.iters);
  s.cop_reduce_model.push_back(cop_model / o.iters);
  for (int i = 0; i < pvm_iters; ++i) {
    pvm_barrier(kGroup, size);
    double v = inst + 1.0;
    const double t0 = now_us();
    pvm_reduce(PvmSum, &v, 1, PVM_DOUBLE, 9, kGroup, 0);
    pvm_sum += now_us() - t0;
  }
  s.pvm_reduce.push_back(pvm_sum / pvm_iters);
}

// The barrier and reduce medians (Metric order) of one task.
std::vector<double> measure(const Options& o, int size, int inst, int& status) {
  Samples s;
  const int pvm_iters = std::max(20, o.iters / 10);  // pvm is slow: fewer iterations, same method
  for (int r = 0; r < o.reps && status >= 0; ++r) {
    measure_barriers(o, size, pvm_iters, s, status);
    measure_reductions(o, size, pvm_iters, inst, s, status);
  }
  return {median(s.cop_barrier), median(s.cop_barrier_model), median(s.pvm_barrier),
          median(s.cop_reduce),  median(s.cop_reduce_model),  median(s.pvm_reduce)};
}

// A spawned task: enrols on its node's channel, measures, sends the medians (in
// Metric order) and its status to the parent.
int child(char** argv) {
  const int node = std::atoi(argv[1]);
  Options o{argv[2], argv[3], "", std::atoi(argv[4]), std::atoi(argv[5]), std::atoi(argv[6]), std::atoi(argv[7])};
  o.bulk = std::strcmp(argv[9], "1") == 0;
  if (argv[10]) o.groups = argv[10];
  setenv("COP_DRIVER", (o.stack + "/node" + std::to_string(node)).c_str(), 1);
  setenv("COP_ACCESS", o.access.c_str(), 1);
  setenv("COP_POLL_US", argv[8], 1);
  const int metrics = o.bulk ? int(kBulkMetrics) : int(kMetrics);
  std::vector<double> out(size_t(metrics), -1.0);
  int status = cop_mytid();
  const int size = o.nodes * o.tasks;
  if (status > 0) {
    const int inst = pvm_joingroup(kGroup);
    pvm_barrier(kGroup, size);
    if (o.groups == "static") cop_setopt(CopStaticGroups, 1);
    if (o.groups == "ask") cop_setopt(CopGroupCache, 0);
    // One group with the whole global address space (compare_bulk's tags reach 25600).
    cop_setopt(CopGroupWindows, 1);
    status = cop_barrier(kGroup, size, 1);  // warm: the tids are fetched here (kept unless "ask")
    if (o.bulk && status >= 0) out = bulk_child(o, inst, size, status);
    else if (status >= 0) out = measure(o, size, inst, status);
    pvm_barrier(kGroup, size);
    pvm_lvgroup(kGroup);
  }
  pvm_initsend(PvmDataDefault);
  pvm_pkint(&status, 1, 1);
  pvm_pkdouble(out.data(), metrics, 1);
  pvm_send(pvm_parent(), kResultTag);
  cop_exit();
  pvm_exit();
  return 0;
}

// Round trips of one COP-sized frame between this process and a forked echo.
double bare_round_trip_us(int iters, int reps, int poll_us) {
  cop::link::Frame f;
  f.type = cop::link::FrameType::command;
  f.seq = 1;
  f.entries.push_back(cop::link::make_entry(cop::wire::make(cop::wire::Opcode::BENTRY), cop::wire::Direction::to_controller,
                                            cop::link::EntryKind::command, 1));
  std::vector<uint8_t> frame;
  cop::link::encode(f, frame);
  const auto any = cop::link::parse_endpoint("127.0.0.1:0", 0);
  cop::link::UdpSocket a(any), b(any);
  // Waiting as a task waits for a COP result (COP_POLL_US, as libcop reads it).
  a.set_poll_us(poll_us);
  b.set_poll_us(poll_us);
  a.connect(b.local());
  b.connect(a.local());
  const pid_t echo = fork();
  if (echo == 0) {
    std::vector<uint8_t> buf;
    for (;;) {
      const long n = b.receive(buf, -1);
      if (n <= 0 || n == 1) _exit(0);
      b.send(std::span<const uint8_t>(buf.data(), size_t(n)));
    }
  }
  std::vector<uint8_t> buf;
  std::vector<double> per;
  for (int r = 0; r < reps; ++r) {
    for (int i = 0; i < 100; ++i) {  // warm
      a.send(frame);
      a.receive(buf, 1000);
    }
    const double t0 = now_us();
    for (int i = 0; i < iters; ++i) {
      a.send(frame);
      a.receive(buf, 1000);
    }
    per.push_back((now_us() - t0) / iters);
  }
  const uint8_t stop = 0;
  a.send(std::span<const uint8_t>(&stop, 1));
  waitpid(echo, nullptr, 0);
  return median(per);
}

// The command line; false (and a message) when it cannot be run.
bool parse_options(int argc, char** argv, Options& o) {
  if (const char* p = std::getenv("COP_POLL_US")) o.poll_us = std::max(0, std::atoi(p));
  for (int i = 1; i < argc; i += 2) {
    if (std::strcmp(argv[i], "--bulk") == 0) {  // a flag: no value
      o.bulk = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "copbench-cop-compare: %s needs a value\n", argv[i]);
      return false;
    }
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--stack") o.stack = v;
    else if (k == "--nodes") o.nodes = std::atoi(v.c_str());
    else if (k == "--tasks") o.tasks = std::atoi(v.c_str());
    else if (k == "--access") o.access = v;
    else if (k == "--iters") o.iters = std::atoi(v.c_str());
    else if (k == "--reps") o.reps = std::atoi(v.c_str());
    else if (k == "--json") o.json = v;
    else if (k == "--groups") o.groups = v;
    else {
      std::fprintf(stderr, "copbench-cop-compare: unknown option %s\n", k.c_str());
      return false;
    }
  }
  if (o.stack.empty() || o.nodes < 1 || o.tasks < 1 || o.iters < 1 || o.reps < 1 ||
      (o.access != "direct" && o.access != "normal") ||
      (o.groups != "static" && o.groups != "default" && o.groups != "ask")) {
    std::fprintf(stderr, "usage: copbench-cop-compare --stack DIR [--nodes N] [--tasks T] [--access direct|normal] "
                         "[--iters K] [--reps R] [--json FILE] [--bulk] [--groups static|default|ask]\n");
    return false;
  }
  if (o.bulk && o.tasks != 1) {
    std::fprintf(stderr, "copbench-cop-compare: --bulk runs one task a node\n");
    return false;
  }
  return true;
}

// One task per (node, task) pair, each told its node and the options (argv of child()).
bool spawn_tasks(const Options& o) {
  const int size = o.nodes * o.tasks;
  for (int i = 0; i < size; ++i) {
    const std::string node = std::to_string(i / o.tasks + 1), n = std::to_string(o.nodes), t = std::to_string(o.tasks),
                      it = std::to_string(o.iters), re = std::to_string(o.reps), po = std::to_string(o.poll_us),
                      bu = o.bulk ? "1" : "0";
    char* args[] = {const_cast<char*>(node.c_str()), const_cast<char*>(o.stack.c_str()),
                    const_cast<char*>(o.access.c_str()), const_cast<char*>(n.c_str()), const_cast<char*>(t.c_str()),
                    const_cast<char*>(it.c_str()), const_cast<char*>(re.c_str()), const_cast<char*>(po.c_str()),
                    const_cast<char*>(bu.c_str()), const_cast<char*>(o.groups.c_str()), nullptr};
    int tid = 0;
    if (pvm_spawn(const_cast<char*>("copbench-cop-compare"), args, PvmTaskDefault, const_cast<char*>(""), 1, &tid) != 1) {
      std::fprintf(stderr, "copbench-cop-compare: pvm_spawn failed (%d)\n", tid);
      return false;
    }
  }
  return true;
}

// Every task's figures; the slowest task's is the operation's time (per-iteration
// max over ranks). 0, a task's failure code, or 1 when a task did not report.
int collect_results(int size, int metrics, std::vector<double>& worst) {
  worst.assign(size_t(metrics), 0.0);
  int failed = 0;
  for (int i = 0; i < size; ++i) {
    timeval tmout{600, 0};
    if (pvm_trecv(-1, kResultTag, &tmout) <= 0) {
      std::fprintf(stderr, "copbench-cop-compare: a task did not report within 600 s\n");
      return 1;
    }
    int status = 0;
    std::vector<double> m(static_cast<size_t>(metrics));
    pvm_upkint(&status, 1, 1);
    pvm_upkdouble(m.data(), metrics, 1);
    if (status < 0) {
      failed = status;
      continue;
    }
    for (int k = 0; k < metrics; ++k) worst[size_t(k)] = std::max(worst[size_t(k)], m[size_t(k)]);
  }
  return failed;
}

void print_table(const Options& o, double rtt, const std::vector<double>& worst) {
  std::printf("libcop vs libpvm on this machine: %d node(s) x %d task(s), %s access, %s, groups %s, "
              "median of %d reps\n",
              o.nodes, o.tasks, o.access.c_str(),
              o.poll_us > 0 ? ("waits poll " + std::to_string(o.poll_us) + " us, then sleep").c_str() : "waits sleep",
              o.groups.c_str(), o.reps);
  std::printf("%-34s %12s %14s %10s\n", "operation", "measured us", "modelled COP us", "ratio");
  std::printf("%-34s %12.2f %14s %10s\n", "bare round trip (UDP, COP frame)", rtt, "-", "-");
  std::printf("%-34s %12.2f %14.3f %9.2fx  (cop_barrier / bare round trip)\n", "cop_barrier", worst[kCopBarrier],
              worst[kCopBarrierModel], worst[kCopBarrier] / rtt);
  std::printf("%-34s %12.2f %14s %9.1fx  (pvm_barrier / cop_barrier)\n", "pvm_barrier", worst[kPvmBarrier], "-",
              worst[kPvmBarrier] / worst[kCopBarrier]);
  std::printf("%-34s %12.2f %14.3f %10s\n", "cop_reduce (1 double, SUM)", worst[kCopReduce], worst[kCopReduceModel], "-");
  std::printf("%-34s %12.2f %14s %9.1fx  (pvm_reduce / cop_reduce)\n", "pvm_reduce (1 double, SUM)", worst[kPvmReduce],
              "-", worst[kPvmReduce] / worst[kCopReduce]);
}

// The same figures as JSON, written whole or not at all (a temporary file renamed).
bool write_json(const Options& o, double rtt, const std::vector<double>& worst) {
  const std::string tmp = o.json + ".tmp";
  std::ofstream j(tmp);
  j << "{\n  \"nodes\": " << o.nodes << ", \"tasks_per_node\": " << o.tasks << ", \"poll_us\": " << o.poll_us
    << ", \"access\": \"" << o.access << "\", \"groups\": \"" << o.groups << "\",\n  \"iters\": " << o.iters << ", \"reps\": " << o.reps << ",\n"
    << "  \"bare_round_trip_us\": " << rtt << ",\n  \"cop_barrier_us\": " << worst[kCopBarrier]
    << ", \"cop_barrier_modelled_us\": " << worst[kCopBarrierModel] << ",\n  \"pvm_barrier_us\": " << worst[kPvmBarrier]
    << ",\n  \"cop_reduce_us\": " << worst[kCopReduce] << ", \"cop_reduce_modelled_us\": " << worst[kCopReduceModel]
    << ",\n  \"pvm_reduce_us\": " << worst[kPvmReduce] << ",\n  \"barrier_over_rtt\": " << worst[kCopBarrier] / rtt
    << ", \"pvm_over_cop_barrier\": " << worst[kPvmBarrier] / worst[kCopBarrier]
    << ", \"pvm_over_cop_reduce\": " << worst[kPvmReduce] / worst[kCopReduce] << "\n}\n";
  j.close();
  if (!j || std::rename(tmp.c_str(), o.json.c_str()) != 0) {
    std::fprintf(stderr, "copbench-cop-compare: could not write %s\n", o.json.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (pvm_parent() != PvmNoParent && argc >= 10) return child(argv);
  Options o;
  if (!parse_options(argc, argv, o)) return 2;
  if (pvm_mytid() < 0) return 1;
  const double rtt = o.bulk ? 0 : bare_round_trip_us(std::max(1000, o.iters), o.reps, o.poll_us);
  const BareBulk bare = o.bulk ? bare_bulk(o.nodes, std::max(200, o.iters), o.reps, o.poll_us) : BareBulk{};
  std::vector<double> worst;
  const int metrics = o.bulk ? int(kBulkMetrics) : int(kMetrics);
  const int failed = spawn_tasks(o) ? collect_results(o.nodes * o.tasks, metrics, worst) : 1;
  pvm_exit();
  if (failed == 1) return 1;
  if (failed < 0) {
    std::fprintf(stderr, "copbench-cop-compare: a task failed: %s\n", cop_strerror(failed));
    return 1;
  }
  if (o.bulk) return bulk_report(o, bare, worst);
  print_table(o, rtt, worst);
  if (!o.json.empty() && !write_json(o, rtt, worst)) return 1;
  return 0;
}
