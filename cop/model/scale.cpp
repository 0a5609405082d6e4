#include "model/scale.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "model/scenario.h"
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

constexpr const char* kNeedsLevel2 = "simulated: not compared yet - the two-level scenario (cop/model/scenario_two_level.h) sets its masks untimed and sends one element; the expression counts the whole call";

uint64_t call_elements(const Spec& s) { return s.elements == 0 ? 1 : s.elements; }

// The simulated cycles of one call at `nodes` nodes, the same scenario as the
// analytic expression: C̄ = N - 1 others in the best-case load.
// THE PLUG-IN POINT for two levels: simulate_two_level (scenario_two_level.h)
// drives K level-1 cores and the level-2 core, but times one element with the
// masks set beforehand; once it runs the same call as two_level_cycles counts
// (LOCK, SETTC/SETBM, every element), its cycles go here for h.levels == 2 and
// scale() fills simulated_us and the difference note with no other change.
std::optional<uint64_t> simulated_cycles(const Spec& s, const Timing& t, const Hierarchy& h) {
  if (h.levels == 1) return simulate(s.f, s.dt, Column::best, t, h.nodes - 1, call_elements(s)).cycles;
  return std::nullopt;
}

// Why the core and the expression differ, where they do (as table3's notes).
std::string difference_note(const Spec& s, const Timing& t, double analytic, double simulated) {
  if (simulated == analytic) return "";
  std::string why = "not explained: the core and the expression should count the same commands";
  if (s.f == Function::barrier_spmd)
    why = fmt::format("ch. VI counts the last channel's UNLOCK (t_OP = {} cycles) before the barrier exit; the core "
                      "broadcasts the exit as soon as the last BENTRY is serviced",
                      t.t_op_int);
  return fmt::format("simulated - analytic = {:+.4g} us ({:+.2f} %): {}", simulated - analytic,
                     100 * (simulated / analytic - 1.0), why);
}

ScaleRow row_for(const Spec& s, const Timing& t, uint64_t nodes) {
  const Hierarchy h = hierarchy(nodes);
  ScaleRow r{s.function, s.type, 8 * s.elements, nodes, h.levels, 0, std::nullopt, ""};
  r.analytic_us = scale_analytic_us(s.f, s.dt, t, nodes, call_elements(s));
  const std::optional<uint64_t> sim = simulated_cycles(s, t, h);
  if (!sim) {
    r.note = kNeedsLevel2;
    return r;
  }
  r.simulated_us = t.us(*sim);
  r.note = difference_note(s, t, r.analytic_us, *r.simulated_us);
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
  const Hierarchy h = hierarchy(nodes);
  if (nodes < 2) throw std::invalid_argument("a collective needs at least 2 nodes");
  // Level 1 (of either system): the source's n1 - 1 fellow nodes in Table III's best-case load.
  const Load level1 = best_load(t, type, h.per_controller - 1);
  const OpCosts ops = OpCosts::hall(t, type);
  const uint64_t cycles = h.levels == 1 ? analytic_cycles(f, t, ops, level1, elements)
                                        : two_level_cycles(f, t, ops, level1, h, elements);
  return t.us(cycles);
}

std::vector<ScaleRow> scale(const Timing& t) {
  std::vector<ScaleRow> rows;
  for (const Spec& s : kSpecs)
    for (uint64_t nodes : scale_nodes()) rows.push_back(row_for(s, t, nodes));
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
    if (!r.note.empty() && r.note != kNeedsLevel2) {
      ++n;
      mark = fmt::format("[{}]", n);
      notes += fmt::format("[{}] {} {} {} B at {} nodes: {}\n", n, r.function, r.type, r.size, r.nodes, r.note);
    } else if (!r.note.empty()) {
      mark = "[2L]";
    }
    const std::string sim = r.simulated_us ? fmt::format("{:.4g}", *r.simulated_us) : "-";
    const std::string diff = r.difference() ? fmt::format("{:+.2f}%", 100 * *r.difference()) : "-";
    out += fmt::format("{:<12} {:<13} {:>7} {:>6} {:>6} {:>11.4g} {:>11} {:>8}  {}\n", r.function, r.type, r.size,
                       r.nodes, r.levels, r.analytic_us, sim, diff, mark);
  }
  return out + "\n" + notes + fmt::format("[2L] {}\n", kNeedsLevel2);
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
