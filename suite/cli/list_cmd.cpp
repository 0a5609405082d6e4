// `copbench list`: every benchmark x backend pair, "not offered" where a backend lacks
// an operation the benchmark needs. `--json`: the same for programs, the one list the run
// tests (tests/workload_tests.cmake) and the cluster's every-microbenchmark campaign are
// generated from.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "copbench/catalog.h"

namespace copbench::cli {

namespace {

std::vector<std::string> op_names(const std::vector<Op>& ops) {
  std::vector<std::string> names;
  for (Op op : ops) names.emplace_back(op_name(op));
  return names;
}

// {"backends": [...], "workloads": [{name, kind, needs, smoke: {sizes, params}, offered_by, ...}]}
nlohmann::json list_json() {
  nlohmann::json backends = nlohmann::json::array(), workloads = nlohmann::json::array();
  for (const BackendSpec& b : all_backend_specs())
    backends.push_back({{"name", b.name}, {"summary", b.summary}, {"worker", b.worker}, {"routes", b.routes},
                        {"encodings", b.encodings}, {"offered", op_names(b.offered)}});
  for (const Benchmark* w : all_benchmarks()) {
    std::vector<std::string> offered_by;
    for (const BackendSpec& b : all_backend_specs())
      if (missing_ops(*w, b).empty()) offered_by.push_back(b.name);
    workloads.push_back({{"name", w->name()},
                         {"kind", kind_name(kind_of(*w))},
                         {"description", w->description()},
                         {"needs", op_names(w->needs())},
                         {"optional", op_names(w->optional_ops())},
                         {"default_sizes", w->default_sizes()},
                         {"min_ranks", w->min_ranks()},
                         {"params", w->option_names()},
                         {"smoke", {{"sizes", w->smoke_sizes()}, {"params", w->smoke_params()}}},
                         {"offered_by", offered_by}});
  }
  return {{"backends", backends}, {"workloads", workloads}};
}

}  // namespace

void add_list_command(CLI::App& app) {
  CLI::App* list = app.add_subcommand("list", "list benchmarks and which backends offer them");
  static bool json = false;
  list->add_flag("--json", json, "the workloads and backends as JSON (what the generated tests read)");
  list->callback([] {
    if (json) {
      std::puts(list_json().dump(1).c_str());
      return;
    }
    const auto& backends = all_backend_specs();
    std::string header = fmt::format("{:<12}", "benchmark");
    for (const auto& b : backends) header += fmt::format(" {:<28}", b.name);
    std::puts(header.c_str());
    for (const Benchmark* bench : all_benchmarks()) {
      std::string row = fmt::format("{:<12}", bench->name());
      for (const auto& b : backends) {
        std::vector<Op> missing = missing_ops(*bench, b);
        std::string cell = "offered";
        std::vector<std::string_view> without;
        for (Op op : bench->optional_ops())
          if (!b.offers(op)) without.push_back(op_name(op));
        if (!without.empty()) cell = fmt::format("offered, no {}", fmt::join(without, ", "));
        if (!missing.empty()) {
          std::vector<std::string_view> names;
          for (Op op : missing) names.push_back(op_name(op));
          cell = fmt::format("not offered (no {})", fmt::join(names, ", "));
        }
        row += fmt::format(" {:<28}", cell);
      }
      std::puts(row.c_str());
    }
    std::puts("");
    for (const Benchmark* bench : all_benchmarks())
      std::printf("%-12s %s\n", std::string(bench->name()).c_str(), std::string(bench->description()).c_str());
    std::puts("");
    for (const auto& b : backends) {
      std::string extra;
      if (!b.routes.empty()) extra += fmt::format("; routes: {}", fmt::join(b.routes, ", "));
      if (!b.encodings.empty()) extra += fmt::format("; encodings: {}", fmt::join(b.encodings, ", "));
      std::printf("%-12s %s%s\n", b.name.c_str(), b.summary.c_str(), extra.c_str());
    }
  });
}

}  // namespace copbench::cli
