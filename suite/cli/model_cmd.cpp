// `copbench model`: the COP cycle timing model of seed 000, ch. VI.
//   copbench model table3 [--csv] [--out FILE]   Table III and the derived figures
//   copbench model simulate --function F ...     one scenario, analytic beside simulated
//   copbench model scale [--csv] [--out FILE]    barrier, reduce, bcast from 2 to 4096 nodes
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "copbench/number_options.h"
#include "copbench/results.h"
#include "model/analytic.h"
#include "model/scale.h"
#include "model/scenario.h"
#include "model/table3.h"

namespace copbench::cli {
namespace {

using namespace cop::model;

struct ModelOptions {
  Timing timing;
  bool csv = false;
  std::string out;
  std::string function = "barrier_spmd";
  std::string type = "integer";
  std::string column = "best";
  uint64_t c_bar = 63;
  uint64_t elements = 1;
};

void add_timing_options(CLI::App* cmd, Timing& t) {
  // Bounds far beyond any hardware, low enough that cycles x messages x P_CLK cannot overflow.
  const CLI::Validator cycles = whole_number(0, 1000000);
  cmd->add_option("--p-clk-ns", t.p_clk_ns, "P_CLK, the controller clock period in ns")
      ->capture_default_str()
      ->check(positive_real(1e6));
  cmd->add_option("--t-cn-cop", t.t_cn_cop, "t_CN-COP cycles: node to controller")->capture_default_str()->check(cycles);
  cmd->add_option("--t-op-int", t.t_op_int, "t_OP cycles for integer, RAM and control commands")
      ->capture_default_str()
      ->check(cycles);
  cmd->add_option("--t-op-fp", t.t_op_fp, "t_OP cycles for floating-point commands")->capture_default_str()->check(cycles);
  cmd->add_option("--t-cop-cn", t.t_cop_cn, "t_COP-CN cycles: controller to node")->capture_default_str()->check(cycles);
  cmd->add_option("--max-op-messages", t.max_op_messages, "messages in the longest locked burst (t_MAX-OP)")
      ->capture_default_str()
      ->check(CLI::Range(1, 128));
}

// Standard output, or --out FILE written atomically.
void emit(const ModelOptions& o, const std::string& text) {
  if (o.out.empty())
    std::fputs(text.c_str(), stdout);
  else {
    const std::filesystem::path dest(o.out);
    if (dest.has_parent_path()) std::filesystem::create_directories(dest.parent_path());
    copbench::write_file_atomically(dest, text);
  }
}

void run_table3(const ModelOptions& o) {
  const auto rows = table3(o.timing);
  emit(o, o.csv ? table3_csv(rows) : table3_text(rows, o.timing));
}

void run_scale(const ModelOptions& o) {
  const auto rows = scale(o.timing);
  emit(o, o.csv ? scale_csv(rows) : scale_text(rows, o.timing));
}

void run_simulate(const ModelOptions& o) {
  static const std::map<std::string, Function> functions{
      {"write", Function::write},   {"read", Function::read},
      {"rmw", Function::rmw},       {"bcast", Function::bcast},
      {"reduce", Function::reduce}, {"barrier_spmd", Function::barrier_spmd},
      {"barrier_master_slave", Function::barrier_master_slave}};
  const Function f = functions.at(o.function);
  const DataType dt = o.type == "double" ? DataType::floating : DataType::integer;
  const Column col = o.column == "max" ? Column::max : Column::best;
  const Load load = col == Column::best ? best_load(o.timing, dt, o.c_bar) : max_load(o.timing, o.c_bar);
  const uint64_t a = analytic_cycles(f, o.timing, OpCosts::hall(o.timing, dt), load, o.elements);
  const SimulationResult s = simulate(f, dt, col, o.timing, o.c_bar, o.elements);
  fmt::print("{} {} {} load, C-bar = {}, {} element(s), t_OP-bar = {} cycles\n", function_name(f), o.type, o.column,
             o.c_bar, o.elements, load.t_op_bar);
  fmt::print("  analytic : {:>10} cycles  {:>10.3f} us\n", a, o.timing.us(a));
  fmt::print("  simulated: {:>10} cycles  {:>10.3f} us  ({} commands serviced, {} refused)\n", s.cycles,
             o.timing.us(s.cycles), s.serviced, s.nacks);
}

}  // namespace

void add_model_command(CLI::App& app) {
  auto opts = std::make_shared<ModelOptions>();
  CLI::App* model = app.add_subcommand("model", "COP cycle timing model (seed 000, ch. VI)");
  model->require_subcommand(1);

  CLI::App* t3 = model->add_subcommand("table3", "Table III and ch. VI's derived figures: published, analytic, simulated");
  t3->add_flag("--csv", opts->csv, "CSV: function,type,column,published_us,analytic_us,simulated_us,note");
  t3->add_option("--out", opts->out, "write to this file (atomically) instead of standard output");
  add_timing_options(t3, opts->timing);
  t3->callback([opts] { run_table3(*opts); });

  CLI::App* sc = model->add_subcommand(
      "scale", "barrier, reduce, bcast at 2..64 nodes (one level) and 128..4096 (two levels): analytic, simulated");
  sc->add_flag("--csv", opts->csv, "CSV: function,type,size,nodes,levels,analytic_us,simulated_us,note");
  sc->add_option("--out", opts->out, "write to this file (atomically) instead of standard output");
  add_timing_options(sc, opts->timing);
  sc->callback([opts] { run_scale(*opts); });

  CLI::App* sim = model->add_subcommand("simulate", "one libcop call through the controller core, beside its expression");
  sim->add_option("--function", opts->function, "libcop call")
      ->check(CLI::IsMember({"write", "read", "rmw", "bcast", "reduce", "barrier_spmd", "barrier_master_slave"}))
      ->capture_default_str();
  sim->add_option("--type", opts->type, "element type")->check(CLI::IsMember({"integer", "double"}))->capture_default_str();
  sim->add_option("--column", opts->column, "load: best (no locking) or max (every other channel locking)")
      ->check(CLI::IsMember({"best", "max"}))
      ->capture_default_str();
  sim->add_option("--c-bar", opts->c_bar, "other channels requesting service")->check(CLI::Range(0, 63))->capture_default_str();
  sim->add_option("--elements", opts->elements, "8-byte elements (M/N)")->check(CLI::Range(1, 8192))->capture_default_str();
  add_timing_options(sim, opts->timing);
  sim->callback([opts] { run_simulate(*opts); });
}

}  // namespace copbench::cli
