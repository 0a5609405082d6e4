// The table of every point against the campaign's `reference:` campaign, with copbench
// compare's verdicts. The report is not a gate: `copbench compare REF DIR` is (its exit code).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "copbench/campaign.h"
#include "copbench/compare.h"
#include "report/report_parts.h"

namespace copbench::report {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The campaign's `reference:` and `tolerance:`: from the manifest (a run writes the
// resolved directory there), else from the campaign file's copy, a relative directory
// resolved against where the campaign file was (the manifest's `file`).
std::optional<std::pair<fs::path, std::string>> reference_of(const json& m, const fs::path& dir, std::string& problem) {
  if (m.contains(campaign::kManifestReference) && m[campaign::kManifestReference].is_string()) {
    fs::path p = m[campaign::kManifestReference].get<std::string>();
    std::string tol = m.contains(campaign::kManifestTolerance) && m[campaign::kManifestTolerance].is_string()
                          ? m[campaign::kManifestTolerance].get<std::string>()
                          : "10%";
    return std::make_pair(p.is_relative() ? dir / p : p, tol);
  }
  fs::path copy = dir / campaign::kCampaignCopy;
  if (!fs::exists(copy)) return std::nullopt;
  try {
    YAML::Node root = YAML::LoadFile(copy.string());
    if (!root.IsMap() || !root["reference"]) return std::nullopt;
    fs::path p = root["reference"].as<std::string>();
    std::string tol = root["tolerance"] ? root["tolerance"].as<std::string>() : "10%";
    if (p.is_relative()) {
      fs::path base = m.contains("file") && m["file"].is_string() ? fs::path(m["file"].get<std::string>()).parent_path() : dir;
      p = base / p;
    }
    return std::make_pair(p, tol);
  } catch (const YAML::Exception& e) {
    problem = fmt::format("{}: {}: no comparison with a reference campaign", copy.string(), e.what());
    return std::nullopt;
  }
}

std::string campaign_name_in(const fs::path& dir) {
  try {
    return json::parse(read_text(dir / campaign::kManifest)).value("campaign", "");
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

std::optional<ReportTable> reference_campaign_table(const json& manifest, const fs::path& campaign_dir,
                                                    ReportOutput& result) {
  std::string problem;
  auto ref = reference_of(manifest, campaign_dir, problem);
  if (!ref) {
    result.reference_problem = problem;
    return std::nullopt;
  }
  const fs::path dir = ref->first.lexically_normal();
  // Shown relative to this campaign directory, so a report does not depend on where the two live.
  const std::string shown =
      fs::weakly_canonical(dir).lexically_proximate(fs::weakly_canonical(campaign_dir)).generic_string();
  std::vector<compare::Row> rows;
  double tolerance = 0;
  try {
    tolerance = compare::parse_tolerance(ref->second);
    if (!fs::is_directory(dir)) throw std::runtime_error(dir.string() + ": no such directory");
    rows = compare::compare(compare::load_medians(dir), compare::load_medians(campaign_dir), tolerance);
  } catch (const std::exception& e) {
    result.reference_problem = fmt::format("reference campaign {}: {}: no comparison table", shown, e.what());
    return std::nullopt;
  }
  const std::string ref_name = campaign_name_in(dir);
  ReportTable t;
  t.title = "every point against the reference campaign" + (ref_name.empty() ? "" : " " + ref_name);
  t.source = "reference campaign directory " + shown + " (relative to this campaign directory)";
  const std::string tol = fmt::format("{:g} %", tolerance * 100);
  t.description = fmt::format(
      "Each point's median µs in the reference campaign and in this one, this ÷ reference, and a verdict with a "
      "tolerance of {}: slower or faster beyond the tolerance, same within it, or missing on one side (in old: not in "
      "the reference; in new: not in this campaign). The report is not a gate; `copbench compare {} . --tolerance {}`, "
      "run in this campaign directory, is: it exits 3 when a point got slower beyond the tolerance.",
      tol, shown, ref->second);
  t.header = {"point", "reference µs", "this campaign µs", "this ÷ reference", "verdict"};
  for (const auto& r : rows)
    t.rows.push_back({r.point, r.old_us ? format_number(*r.old_us) : "—", r.new_us ? format_number(*r.new_us) : "—",
                      r.ratio > 0 ? fmt::format("{:.3f}", r.ratio) : "—", compare::verdict_name(r.verdict)});
  t.notes = {compare::summary(rows) + fmt::format(" (tolerance {}).", tol)};
  result.reference_summary =
      fmt::format("against the reference campaign {} (tolerance {}): {}", shown, tol, compare::summary(rows));
  return t;
}

}  // namespace copbench::report
