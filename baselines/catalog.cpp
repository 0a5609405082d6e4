// The backends copbench knows, in the order `copbench list` shows them: read from
// baselines/backends.json, which baselines/CMakeLists.txt compiles in as a string
// (backends_json.h) and the tests read too, so what each backend offers is said once.
#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "backends_json.h"
#include "copbench/catalog.h"

namespace copbench {
namespace {

Op op_named(const std::string& name) {
  for (Op op : kAllOps)
    if (op_name(op) == name) return op;
  throw std::logic_error("baselines/backends.json: unknown operation '" + name + "'");
}

std::vector<std::string> strings(const nlohmann::json& entry, const char* key) {
  return entry.value(key, std::vector<std::string>{});
}

BackendSpec spec_of(const nlohmann::json& entry) {
  BackendSpec s;
  s.name = entry.at("name").get<std::string>();
  s.summary = entry.at("summary").get<std::string>();
  s.worker = entry.at("worker").get<std::string>();
  s.launcher = entry.at("launcher").get<std::string>();
  s.mpirun_args = strings(entry, "mpirun_args");
  const nlohmann::json from_ranks = entry.value("mpirun_args_from_ranks", nlohmann::json::object());
  for (const auto& [ranks, args] : from_ranks.items()) {
    std::size_t end = 0;
    const int from = std::stoi(ranks, &end);
    if (end != ranks.size() || from < 1)
      throw std::logic_error("baselines/backends.json: mpirun_args_from_ranks key '" + ranks + "' is not a rank count");
    s.mpirun_args_from_ranks.emplace_back(from, args.get<std::vector<std::string>>());
  }
  s.routes = strings(entry, "routes");
  s.encodings = strings(entry, "encodings");
  for (const std::string& op : strings(entry, "offered")) s.offered.push_back(op_named(op));
  s.report_order = entry.value("report_order", BackendSpec::kAfterTheOrdered);
  for (const std::string& trait : strings(entry, "traits")) {
    bool& flag = trait == "studied" ? s.studied : trait == "modelled" ? s.modelled : s.private_stack;
    if (trait != "studied" && trait != "modelled" && trait != "private stack")
      throw std::logic_error("baselines/backends.json: unknown trait '" + trait + "' of " + s.name);
    flag = true;
  }
  s.simulates = entry.value("simulates", "");
  return s;
}

}  // namespace

const std::vector<BackendSpec>& all_backend_specs() {
  static const std::vector<BackendSpec> specs = [] {
    std::vector<BackendSpec> list;
    const nlohmann::json catalog = nlohmann::json::parse(kBackendsJson);
    for (const nlohmann::json& entry : catalog.at("backends"))
      list.push_back(spec_of(entry));
    return list;
  }();
  return specs;
}

std::vector<std::string> BackendSpec::mpirun_args_at(int ranks) const {
  std::vector<std::string> args = mpirun_args;
  for (const auto& [from, more] : mpirun_args_from_ranks)
    if (ranks >= from) args.insert(args.end(), more.begin(), more.end());
  return args;
}

bool BackendSpec::offers(Op op) const {
  return std::find(offered.begin(), offered.end(), op) != offered.end();
}

const BackendSpec& studied_backend() {
  for (const BackendSpec& s : all_backend_specs())
    if (s.studied) return s;
  throw std::logic_error("baselines/backends.json: no backend is 'studied'");
}

const BackendSpec* find_backend_spec(std::string_view name) {
  for (const BackendSpec& s : all_backend_specs())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<Op> missing_ops(const Benchmark& bench, const BackendSpec& spec) {
  std::vector<Op> missing;
  for (Op op : bench.needs())
    if (!spec.offers(op)) missing.push_back(op);
  return missing;
}

}  // namespace copbench
