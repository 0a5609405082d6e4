// What copbench-cop-compare's two modes share (compare.cpp: barrier and reduce
// beside libpvm; compare_bulk.cpp: arrays beside the bare transport).
#pragma once
#include <string>
#include <vector>

namespace cop::bench {

inline constexpr int kResultTag = 5151;
inline constexpr double kPclkNs = 10.0;  // P_CLK (seed 000 ch. VI)
extern char kGroup[];

struct Options {
  std::string stack, access = "direct", json;
  int nodes = 4, tasks = 1, iters = 2000, reps = 5;
  int poll_us = 0;  // COP_POLL_US of the parent, handed to every task (pvm_spawn does not pass it)
  bool bulk = false;
  // How libcop finds each group's members: "static" (CopStaticGroups, fetched once),
  // "default" (libcop's default, CopGroupCache: kept, dropped on a change) or "ask"
  // (CopGroupCache 0: the group server asked each call).
  std::string groups = "static";
};

double now_us();
double median(std::vector<double> v);
// The controller's modelled clock as this task's channel last saw it, in microseconds.
double modelled_us();

// --bulk: what each task measures (microseconds), in this order.
enum BulkMetric { kBcast16K, kBcastModel, kReduceInt8K, kReduceIntModel, kReduceDbl8K, kReduceDblModel, kBulkMetrics };
// One task's --bulk medians (BulkMetric order); status < 0 on a failure or a wrong answer.
std::vector<double> bulk_child(const Options& o, int inst, int size, int& status);

// The bare transport moving the same bytes the same way, in processes of this run.
struct BareBulk {
  double bcast_us = 0, reduce_int_us = 0, reduce_dbl_us = 0;
};
BareBulk bare_bulk(int nodes, int iters, int reps, int poll_us);
// The --bulk table (and JSON when asked); 0, or 1 when the JSON could not be written.
int bulk_report(const Options& o, const BareBulk& bare, const std::vector<double>& worst);

}  // namespace cop::bench
