// Medians of two result sets side by side with a verdict (see compare.h).
#include "copbench/compare.h"

#include <array>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace copbench::compare {
namespace fs = std::filesystem;

namespace {

double to_us(double value, const std::string& unit) {
  if (unit == "us") return value;
  if (unit == "ns") return value / 1e3;
  if (unit == "ms") return value * 1e3;
  if (unit == "s") return value * 1e6;
  throw std::runtime_error("unknown time_unit '" + unit + "'");
}

// Adds the medians of one result file under `prefix`; false when the file is JSON but
// not a benchmark result (a manifest, a verify record), which a directory skips.
bool add_file(const fs::path& file, const std::string& prefix, std::map<std::string, double>& out) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(file.string() + " is not JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("benchmarks") || !j["benchmarks"].is_array()) return false;
  for (const auto& e : j["benchmarks"]) {
    if (e.value("run_type", "") != "aggregate" || e.value("aggregate_name", "") != "median") continue;
    if (!e.contains("run_name") || !e.contains("real_time"))
      throw std::runtime_error(file.string() + ": a median entry without run_name or real_time");
    out[prefix + e["run_name"].get<std::string>()] =
        to_us(e["real_time"].get<double>(), e.value("time_unit", std::string("ns")));
  }
  return true;
}

}  // namespace

std::map<std::string, double> load_medians(const fs::path& path) {
  std::map<std::string, double> out;
  if (!fs::exists(path)) throw std::runtime_error(path.string() + " does not exist");
  if (!fs::is_directory(path)) {
    if (!add_file(path, "", out)) throw std::runtime_error(path.string() + " is not a copbench result file");
    return out;
  }
  const fs::path raw = fs::is_directory(path / "raw") ? path / "raw" : path;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(raw))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  for (const fs::path& f : files) add_file(f, f.stem().string() + ": ", out);
  return out;
}

// Indexed by Verdict, in its order (compare.h).
constexpr std::array<const char*, 5> kVerdictNames = {"faster", "slower", "same", "missing in old", "missing in new"};
static_assert(static_cast<std::size_t>(Verdict::missing_new) + 1 == kVerdictNames.size(), "one name per verdict");

const char* verdict_name(Verdict v) {
  const auto i = static_cast<std::size_t>(v);
  return i < kVerdictNames.size() ? kVerdictNames[i] : "?";
}

Verdict verdict_of(double old_us, double new_us, double tolerance) {
  if (new_us > old_us * (1.0 + tolerance)) return Verdict::slower;
  if (new_us < old_us * (1.0 - tolerance)) return Verdict::faster;
  return Verdict::same;
}

std::vector<Row> compare(const std::map<std::string, double>& old_set, const std::map<std::string, double>& new_set,
                         double tolerance) {
  std::vector<Row> rows;
  auto o = old_set.begin();
  auto n = new_set.begin();
  while (o != old_set.end() || n != new_set.end()) {
    Row r;
    if (n == new_set.end() || (o != old_set.end() && o->first < n->first)) {
      r.point = o->first;
      r.old_us = o->second;
      r.verdict = Verdict::missing_new;
      ++o;
    } else if (o == old_set.end() || n->first < o->first) {
      r.point = n->first;
      r.new_us = n->second;
      r.verdict = Verdict::missing_old;
      ++n;
    } else {
      r.point = o->first;
      r.old_us = o->second;
      r.new_us = n->second;
      r.ratio = o->second > 0 ? n->second / o->second : 0.0;
      r.verdict = verdict_of(o->second, n->second, tolerance);
      ++o;
      ++n;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

double parse_tolerance(const std::string& text) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v) || v < 0)
    throw std::invalid_argument("tolerance '" + text + "' is not a non-negative number or percentage (10% or 0.1)");
  return percent ? v / 100.0 : v;
}

std::string render(const std::vector<Row>& rows, double tolerance) {
  std::size_t width = 5;
  for (const Row& r : rows) width = std::max(width, r.point.size());
  std::string out = fmt::format("{:<{}} {:>12} {:>12} {:>8}  {}\n", "point", width, "old us", "new us", "new/old",
                                fmt::format("verdict (tolerance {:g} %)", tolerance * 100));
  auto us = [](const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : std::string("-"); };
  for (const Row& r : rows)
    out += fmt::format("{:<{}} {:>12} {:>12} {:>8}  {}\n", r.point, width, us(r.old_us), us(r.new_us),
                       r.ratio > 0 ? fmt::format("{:.3f}", r.ratio) : std::string("-"), verdict_name(r.verdict));
  return out + summary(rows) + "\n";
}

std::string summary(const std::vector<Row>& rows) {
  std::map<Verdict, int> count;
  for (const Row& r : rows) ++count[r.verdict];
  return fmt::format("{} points: {} faster, {} slower, {} same within tolerance, {} missing in old, {} missing in new",
                     rows.size(), count[Verdict::faster], count[Verdict::slower], count[Verdict::same],
                     count[Verdict::missing_old], count[Verdict::missing_new]);
}

}  // namespace copbench::compare
