// `copbench list`: every benchmark x backend pair, "not offered" where a backend lacks
// an operation the benchmark needs.
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.h"
#include "copbench/bench.h"

namespace copbench::cli {

void add_list_command(CLI::App& app) {
  CLI::App* list = app.add_subcommand("list", "list benchmarks and which backends offer them");
  list->callback([] {
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
