// The CPU a barrier costs the live stack (copd, 4 copdrv, 4 direct-mode tasks as
// threads of this process; tests/cop/stack.h), for comparing link versions (the
// frames' MACs, cop/link.h "Keys"): CPU from /proc/PID/stat (daemons) and
// getrusage (tasks) around N SPMD barriers.
//   build/bin/cop_barrier_cpu [N [NODES [COPD_ARG...]]]   (default 2000 4; e.g. 2000 8 --io-threads 4)
#include <sys/resource.h>
#include <cstdio>
#include <fstream>
#include <thread>
#include <cop/cop.h>
#include "driver/port.h"
#include "lib/commands.h"
#include "stack.h"
using namespace cop;
static double proc_cpu_s(pid_t p) {
  std::ifstream in("/proc/" + std::to_string(p) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), {});
  auto r = s.rfind(')');
  std::istringstream is(s.substr(r + 2));
  std::string f; unsigned long ut = 0, st = 0;
  for (int i = 3; i <= 15; ++i) { is >> f; if (i == 14) ut = std::stoul(f); if (i == 15) st = std::stoul(f); }
  return double(ut + st) / double(sysconf(_SC_CLK_TCK));
}
static double self_cpu_s() {
  rusage u{}; getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 2000, nodes = argc > 2 ? atoi(argv[2]) : 4;
  if (n < 1 || nodes < 1 || nodes > 64) { fprintf(stderr, "usage: cop_barrier_cpu [N [NODES [COPD_ARG...]]]\n"); return 2; }
  const std::vector<std::string> copd_extra(argv + std::min(argc, 3), argv + argc);
  testing::Stack s(nodes, nodes, copd_extra);
  std::vector<std::unique_ptr<driver::Port>> ports;
  for (int k = 1; k <= nodes; ++k) { auto r = driver::open_port(s.driver_dir(k), true, 0x40001, -1); if (r.status) { fprintf(stderr, "%s\n", r.error.c_str()); return 1; } ports.push_back(std::move(r.port)); }
  const uint64_t mask = nodes == 64 ? ~uint64_t{0} : (uint64_t{1} << nodes) - 1;
  auto run = [&](int iters) {
    std::vector<std::thread> t;
    for (int k = 0; k < nodes; ++k) t.emplace_back([&, k] {
      auto& p = *ports[size_t(k)];
      commands::Sender snd{p.info().tkno, uint8_t(p.info().ppn)};
      for (int i = 0; i < iters; ++i) {
        std::vector<driver::Answer> a;
        auto f = commands::barrier(snd, 5, mask);
        if (p.exchange(f, a) != wire::Error::none) { fprintf(stderr, "exchange failed\n"); exit(1); }
        wire::Message exit_msg;
        if (p.await(driver::Wanted{driver::ResultKind::barrier, 5, 1, 0}, std::span<wire::Message>(&exit_msg, 1), nullptr) != wire::Error::none) { fprintf(stderr, "await failed\n"); exit(1); }
      }
    });
    for (auto& x : t) x.join();
  };
  run(200);  // warm up
  double d0 = proc_cpu_s(s.copd_pid()), self0 = self_cpu_s(), drv0 = 0;
  for (int k = 1; k <= nodes; ++k) drv0 += proc_cpu_s(s.driver_pid(k));
  auto w0 = std::chrono::steady_clock::now();
  run(n);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  double d1 = proc_cpu_s(s.copd_pid()), self1 = self_cpu_s(), drv1 = 0;
  for (int k = 1; k <= nodes; ++k) drv1 += proc_cpu_s(s.driver_pid(k));
  printf("barriers %d nodes %d: CPU per barrier copd %.2f us (%.2f us per channel), copdrv(all) %.2f us, tasks(all) %.2f us, total %.2f us; wall %.2f us\n",
         n, nodes, (d1 - d0) / n * 1e6, (d1 - d0) / n / nodes * 1e6, (drv1 - drv0) / n * 1e6, (self1 - self0) / n * 1e6,
         ((d1 - d0) + (drv1 - drv0) + (self1 - self0)) / n * 1e6, wall / n * 1e6);
}
