// The manifest of a campaign's results directory: what ran where (machine, commit,
// cluster, the Debian packages' versions), and the sessions that ran it.
#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <sstream>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "campaign/internal.h"
#include "campaign/source_data.h"
#include "copbench/files.h"
#include "copbench/process.h"
#include "copbench/results.h"

namespace copbench::campaign {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

// The machine as Google Benchmark's context sees it (SystemInfo, CPUInfo), with the
// kernel, the memory and the distribution, which that context does not give.
json machine_description() {
  json m;
  m["host"] = benchmark::SystemInfo::Get().name;
  utsname u{};
  if (uname(&u) == 0) m["kernel"] = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  m["cpus"] = benchmark::CPUInfo::Get().num_cpus;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size >= 1024) m["memory"] = fmt::format("{} kB", pages * (page_size / 1024));
  std::istringstream os(fs::exists("/etc/os-release") ? read_file("/etc/os-release") : "");
  std::string line;
  while (std::getline(os, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      m["os"] = v;
    }
  return m;
}

// Versions of the Debian packages the build and the runs use (scripts/lib/packages.txt,
// built in: source_data.h).
json package_versions() {
  json out = json::object();
  std::vector<std::string> argv = {"dpkg-query", "-W", "-f=${Package} ${Version}\n"};
  std::istringstream list(source_data::kPackagesTxt);
  std::string line;
  while (std::getline(list, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (!line.empty() && line[0] != '#') argv.push_back(line);
  }
  if (argv.size() == 3) return out;
  ProcessOptions o;
  o.capture = true;
  o.capture_stderr = false;  // dpkg-query names the packages it does not know there
  o.timeout_s = 60;
  std::istringstream ss(run_process(argv, o).output);
  std::string pkg, version;
  while (ss >> pkg >> version) out[pkg] = version;
  return out;
}

}  // namespace

std::string now_string(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

json new_manifest(const Campaign& c, const Cluster& cluster, const RunOptions& o, const fs::path& dir) {
  json manifest;
  manifest["campaign"] = c.name;
  manifest["description"] = c.description;
  manifest["created"] = now_string("%Y-%m-%dT%H:%M:%S%z");
  manifest["file"] = fs::absolute(o.file).string();
  manifest["machine"] = machine_description();
  manifest["commit"] = source_commit();
  manifest["cluster"] = {{"name", cluster.name}, {"size", cluster.size}, {"hosts", cluster.hosts}, {"hostfile", cluster.hostfile},
                         {"emulated", cluster.emulated}};
  manifest["profiles"] = c.profiles;
  manifest["compare"] = c.compare;
  manifest["main_table"] = c.main_table;
  if (!c.reference.empty()) {
    manifest[kManifestReference] = fs::absolute(c.reference).string();
    manifest[kManifestTolerance] = c.tolerance;
  }
  manifest["packages"] = package_versions();
  manifest["sessions"] = json::array();
  write_file_atomically(dir / kCampaignCopy, read_file(o.file));
  // The seed tables as they were, so `report` on this directory later gives the same tables.
  fs::create_directories(dir / kReferenceCopy);
  for (const auto& t : c.compare)
    write_file_atomically(dir / kReferenceCopy / (t + ".csv"), read_file(o.reference_dir / (t + ".csv")));
  return manifest;
}

json resumed_manifest(const fs::path& dir, const std::string& name) {
  const fs::path m = dir / kManifest;
  if (!fs::exists(m)) throw CampaignError(fmt::format("--resume {}: no {} there (not a campaign directory)", dir.string(), kManifest));
  json manifest;
  try {
    manifest = json::parse(read_file(m));
  } catch (const std::exception&) {
    throw CampaignError(fmt::format("--resume {}: {} is not valid JSON", dir.string(), kManifest));
  }
  if (manifest.value("campaign", "") != name)
    throw CampaignError(fmt::format("--resume {}: that directory holds campaign '{}', not '{}'", dir.string(),
                                    manifest.value("campaign", "?"), name));
  return manifest;
}

}  // namespace copbench::campaign
