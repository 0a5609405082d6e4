#include "model/scale.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <iterator>
#include <stdexcept>
#include <thread>

#include "model/scenario.h"
#include "model/scenario_two_level.h"
#include "model/table3.h"

namespace cop::model {
namespace {

// One line of the table at every node count: what is called, on how much.
struct Spec {
  const char* function;
  const char* type;
  Function f;
  DataType dt;
  uint64_t elements;  // 8-byte elements; 0 for a barrier (it carries no data)
};

// Barrier as Table III prints it (master-slave) and as ch. VI's 64-node figure
// (SPMD); reduce of one element and of 1024 (ch. VI's derived figures);
// broadcast of 8 B, 1 KB (one t_MAX-OP burst) and 16 KB of doubles.
const Spec kSpecs[] = {
    {"cop_barrier", "master-slave", Function::barrier_master_slave, DataType::integer, 0},
    {"cop_barrier", "spmd", Function::barrier_spmd, DataType::integer, 0},
    {"cop_reduce", "integer", Function::reduce, DataType::integer, 1},
    {"cop_reduce", "integer", Function::reduce, DataType::integer, 1024},
    {"cop_reduce", "double", Function::reduce, DataType::floating, 1},
    {"cop_reduce", "double", Function::reduce, DataType::floating, 1024},
    {"cop_bcast", "double", Function::bcast, DataType::floating, 1},
    {"cop_bcast", "double", Function::bcast, DataType::floating, 128},
    {"cop_bcast", "double", Function::bcast, DataType::floating, 2048},
};

uint64_t call_elements(const Spec& s) { return s.elements == 0 ? 1 : s.elements; }

// The analytic cycles of one call at `nodes` nodes: ch. VI's expression with
// C̄ = N - 1 on one level, two_level_cycles on two.
uint64_t analytic_cycles_at(Function f, DataType type, const Timing& t, uint64_t nodes, uint64_t elements) {
  if (nodes < 2) throw std::invalid_argument("a collective needs at least 2 nodes");
  const Hierarchy h = hierarchy(nodes);
  // Level 1 (of either system): the source's n1 - 1 fellow nodes in Table III's best-case load.
  const Load level1 = best_load(t, type, h.per_controller - 1);
  const OpCosts ops = OpCosts::hall(t, type);
  return h.levels == 1 ? analytic_cycles(f, t, ops, level1, elements)
                       : two_level_cycles(f, t, ops, level1, h, elements);
}

// The simulated cycles of one call at `nodes` nodes, the same scenario as the
// analytic expression: C̄ = N - 1 others in the best-case load. One level: the
// controller core (scenario.h); two levels: the K level-1 cores and the
// level-2 core running the same call (scenario_two_level.h).
uint64_t simulated_cycles(const Spec& s, const Timing& t, const Hierarchy& h) {
  if (h.levels == 1) return simulate(s.f, s.dt, Column::best, t, h.nodes - 1, call_elements(s)).cycles;
  return simulate_two_level(s.f, s.dt, int(h.nodes), t, call_elements(s)).cycles;
}

// Why the cores and the expression differ, where they do (as table3's notes):
// each reason is given only where the difference is exactly what it explains.
std::string why_they_differ(const Spec& s, const Timing& t, const Hierarchy& h, int64_t diff) {
  const OpCosts ops = OpCosts::hall(t, s.dt);
  const int64_t relay = int64_t(ops.alu + t.t_cop_cn);
  if (s.f == Function::barrier_spmd && diff == -int64_t(t.t_op_int))
    return fmt::format("ch. VI counts the last channel's UNLOCK (t_OP = {} cycles) before the barrier exit; the core "
                       "{} as soon as the last BENTRY is serviced",
                       t.t_op_int, h.levels == 1 ? "broadcasts the exit" : "sends the level-1's BENTRY up");
  if (h.levels == 2 && s.f == Function::reduce && diff == -relay) {
    const uint64_t round = (h.per_controller - 2) * best_load(t, s.dt).t_op_bar + ops.alu + t.t_cn_cop;
    const uint64_t level2 = h.controllers * ops.alu + t.t_cop_cn;
    if (level2 > round)
      return fmt::format("the level 2's pass of an element (K t_OP + t_COP-CN = {} cycles) outlasts the level-1's "
                         "round and link up ({}), so the next-to-last result comes down after the last element has "
                         "gone up and its pass out (t_OP + t_COP-CN = {}) overlaps the level 2's last pass; the "
                         "expression counts it before",
                         level2, round, relay);
  }
  if (h.levels == 2 && s.f == Function::bcast && diff > 0 && diff <= int64_t(ops.ram + t.t_cop_cn))
    return fmt::format("the expression counts controller 0's busy time (each element forwarded up, t_OP + "
                       "t_CN-COP, and passed out to the source's fellow nodes when it comes back, t_OP + t_COP-CN); "
                       "in the core that controller then services the source's UNLOCK and waits for its last "
                       "element's level-2 pass (t_OP + t_COP-CN = {} cycles), which the expression does not count "
                       "(the difference is at most that)",
                       ops.ram + t.t_cop_cn);
  return "not explained: the cores and the expression should count the same commands";
}

std::string difference_note(const Spec& s, const Timing& t, const Hierarchy& h, uint64_t analytic,
                            uint64_t simulated) {
  if (simulated == analytic) return "";
  const int64_t diff = int64_t(simulated) - int64_t(analytic);
  return fmt::format("simulated - analytic = {:+} cycles ({:+.2f} %): {}", diff,
                     100 * (double(simulated) / double(analytic) - 1.0), why_they_differ(s, t, h, diff));
}

ScaleRow row_for(const Spec& s, const Timing& t, uint64_t nodes) {
  const Hierarchy h = hierarchy(nodes);
  ScaleRow r{s.function, s.type, 8 * s.elements, nodes, h.levels, 0, std::nullopt, ""};
  const uint64_t analytic = analytic_cycles_at(s.f, s.dt, t, nodes, call_elements(s));
  const uint64_t simulated = simulated_cycles(s, t, h);
  r.analytic_us = t.us(analytic);
  r.simulated_us = t.us(simulated);
  r.note = difference_note(s, t, h, analytic, simulated);
  return r;
}

}  // namespace

std::optional<double> ScaleRow::difference() const {
  if (!simulated_us) return std::nullopt;
  return *simulated_us / analytic_us - 1.0;
}

const std::vector<uint64_t>& scale_nodes() {
  static const std::vector<uint64_t> nodes{2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096};
  return nodes;
}

double scale_analytic_us(Function f, DataType type, const Timing& t, uint64_t nodes, uint64_t elements) {
  return t.us(analytic_cycles_at(f, type, t, nodes, elements));
}

std::vector<ScaleRow> scale(const Timing& t) {
  // The rows are independent simulations (the 1024-element reductions at 4096
  // nodes service 4.3 million commands each): they run on the host's cores.
  const size_t per_spec = scale_nodes().size();
  const size_t n = std::size(kSpecs) * per_spec;
  std::vector<ScaleRow> rows(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        rows[i] = row_for(kSpecs[i / per_spec], t, scale_nodes()[i % per_spec]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> workers;
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  for (size_t w = 1; w < threads; ++w) workers.emplace_back(work);
  work();
  for (auto& w : workers) w.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return rows;
}

std::string scale_text(const std::vector<ScaleRow>& rows, const Timing& t) {
  std::string out = fmt::format(
      "Scaling of the modelled COP hardware (Hall's timings, seed 000 ch. VI), in microseconds:\n"
      "one level (Figure 4) to 64 nodes, two levels (Figure 5: 64 nodes per level-1 controller) to 4096;\n"
      "C-bar = nodes - 1 other channels per level-1 controller, best-case (unlocked) load of Table III\n"
      "P_CLK = {} ns, t_CN-COP = {}, t_OP = {} (integer, RAM) / {} (floating point), t_COP-CN = {}, "
      "t_MAX-OP = {} cycles (a 1 KB broadcast: 128 x (t_OP + t_COP-CN))\n\n",
      t.p_clk_ns, t.t_cn_cop, t.t_op_int, t.t_op_fp, t.t_cop_cn, t.t_max_op(t.t_op_int));
  out += fmt::format("{:<12} {:<13} {:>7} {:>6} {:>6} {:>11} {:>11} {:>8}  {}\n", "function", "type", "bytes", "nodes",
                     "levels", "analytic", "simulated", "s/a", "note");
  int n = 0;
  std::string notes;
  for (const auto& r : rows) {
    std::string mark;
    if (!r.note.empty()) {
      ++n;
      mark = fmt::format("[{}]", n);
      notes += fmt::format("[{}] {} {} {} B at {} nodes: {}\n", n, r.function, r.type, r.size, r.nodes, r.note);
    }
    const std::string sim = r.simulated_us ? fmt::format("{:.4g}", *r.simulated_us) : "-";
    const std::string diff = r.difference() ? fmt::format("{:+.2f}%", 100 * *r.difference()) : "-";
    out += fmt::format("{:<12} {:<13} {:>7} {:>6} {:>6} {:>11.4g} {:>11} {:>8}  {}\n", r.function, r.type, r.size,
                       r.nodes, r.levels, r.analytic_us, sim, diff, mark);
  }
  return out + "\n" + notes;
}

std::string scale_csv(const std::vector<ScaleRow>& rows) {
  std::string out = "function,type,size,nodes,levels,analytic_us,simulated_us,note\n";
  for (const auto& r : rows)
    out += fmt::format("{},{},{},{},{},{:.4f},{},{}\n", csv_field(r.function), csv_field(r.type), r.size, r.nodes,
                       r.levels, r.analytic_us, r.simulated_us ? fmt::format("{:.4f}", *r.simulated_us) : "",
                       csv_field(r.note));
  return out;
}

}  // namespace cop::model
