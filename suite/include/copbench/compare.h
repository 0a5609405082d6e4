// `copbench compare OLD NEW`: every point's median in two result sets side by side, with
// a verdict against a tolerance, for people and for CI (non-zero exit when a point got
// slower beyond the tolerance). A result set is one result file (copbench run --out) or a
// directory of them (a campaign directory: its raw/ files).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace copbench::compare {

// Median time per point, in microseconds. Keys: the point's run_name for a file;
// "<file stem>: <run_name>" for a directory (a campaign's point id, then the point).
// Throws std::runtime_error naming the file when something is not a result.
std::map<std::string, double> load_medians(const std::filesystem::path& path);

enum class Verdict { faster, slower, same, missing_old, missing_new };
const char* verdict_name(Verdict v);  // "faster", "slower", "same", "missing in old", "missing in new"

struct Row {
  std::string point;
  std::optional<double> old_us, new_us;
  double ratio = 0;  // new / old; 0 where either is missing or old is 0
  Verdict verdict = Verdict::same;
};

// Verdict of one pair: slower when new > old x (1 + tolerance), faster when
// new < old x (1 - tolerance), same otherwise.
Verdict verdict_of(double old_us, double new_us, double tolerance);
// Every point of either set, in key order.
std::vector<Row> compare(const std::map<std::string, double>& old_set, const std::map<std::string, double>& new_set,
                         double tolerance);
// "10%" or "0.1" -> 0.1; throws std::invalid_argument on anything else or a negative value.
double parse_tolerance(const std::string& text);
// The table printed by the command, with a last line counting each verdict.
std::string render(const std::vector<Row>& rows, double tolerance);
// That last line: "N points: a faster, b slower, c same within tolerance, d missing in old, e missing in new".
std::string summary(const std::vector<Row>& rows);

}  // namespace copbench::compare
