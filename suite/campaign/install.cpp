// How the suite got onto a cluster's hosts, and that every host runs the same one.
// The ansible role suite (copbench_suite_install: shared, copy or build) writes on
// every host, beside the build, copbench-install.json: {"mode", "commit", "source"},
// the commit being the build's own stamp (cmake/source_commit.cmake). A campaign on
// a cluster (--cluster INVENTORY) reads it on every compute and COP controller host
// of the inventory, over ssh, before its first point: a host whose commit is not the
// one of the copbench running the campaign (or that has no record) is an error that
// names it; the records go into the manifest ("install"). In mode shared every host runs
// this build itself: nothing is read over ssh. A build with no record
// beside it (not put there by site.yml: e.g. a user's own build) checks nothing and
// says so in the manifest.
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "campaign/internal.h"
#include "copbench/campaign.h"
#include "copbench/files.h"
#include "copbench/launch.h"
#include "copbench/process.h"
#include "copbench/results.h"

namespace copbench::campaign {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The inventory's hosts that run copbench programs: compute, then COP controllers.
std::vector<std::string> suite_hosts(const Cluster& cluster) {
  std::vector<std::string> hosts = cluster.hosts;
  std::set<std::string> seen(hosts.begin(), hosts.end());
  YAML::Node ctl = YAML::LoadFile(cluster.name)["all"]["children"]["cop_controller"]["hosts"];
  if (ctl && ctl.IsMap())
    for (const auto& kv : ctl)
      if (seen.insert(kv.first.as<std::string>()).second) hosts.push_back(kv.first.as<std::string>());
  return hosts;
}

json parse_record(const std::string& text, const std::string& where) {
  try {
    json r = json::parse(text);
    if (r.is_object() && r.contains("mode") && r["mode"].is_string() && r.contains("commit") && r["commit"].is_string())
      return r;
  } catch (const json::exception&) {
  }
  throw CampaignError(fmt::format("{}: not an install record (run site.yml again)", where));
}

}  // namespace

fs::path install_record_path() { return fs::path(executable_dir()).parent_path() / kInstallRecord; }

json check_install(const Cluster& cluster) {
  if (cluster.name == "local") return nullptr;
  const fs::path path = install_record_path();
  if (!fs::exists(path))
    return {{"mode", "unrecorded"}, {"note", fmt::format("no {} beside this build (not put there by site.yml): "
                                                         "the hosts' commits were not checked", kInstallRecord)}};
  const json head = parse_record(read_file(path), path.string());
  const std::string commit = source_commit();
  // shared: the hosts run this very build from the shared filesystem (role suite checks it
  // there once), so there is no other copy whose commit could differ, also after a rebuild.
  if (head["mode"] == "shared")
    return {{"mode", "shared"}, {"record", path.string()}, {"commit", commit},
            {"note", "one build on a shared filesystem: every host runs this one"}};
  if (head["commit"] != commit)
    throw CampaignError(fmt::format("{} says commit {}, but this copbench was built from {}: run site.yml again "
                                    "so that every host has this build", path.string(),
                                    head["commit"].get<std::string>(), commit));
  if (path.string().find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-") !=
      std::string::npos)
    throw CampaignError(fmt::format("{}: the hosts' install records cannot be read over ssh at a path with "
                                    "spaces or shell characters; build the suite at a plain path", path.string()));
  json install = {{"mode", head["mode"]}, {"record", path.string()}, {"commit", commit}, {"hosts", json::object()}};
  for (const std::string& host : suite_hosts(cluster)) {
    ProcessOptions o;
    o.capture = true;
    o.timeout_s = 30;
    const ProcessResult r =
        run_process({"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", host, "cat " + path.string()}, o);
    if (r.status() != 0)
      throw CampaignError(fmt::format("host {}: cannot read its install record {} (ssh exit {}: {}): provision it "
                                      "with site.yml", host, path.string(), r.status(), r.output));
    const json rec = parse_record(r.output, fmt::format("host {}: {}", host, path.string()));
    if (rec["commit"] != commit || rec["mode"] != head["mode"])
      throw CampaignError(fmt::format("host {} runs copbench {} ({}), this head node {} ({}): every host must run "
                                      "the same build; run site.yml again",
                                      host, rec["commit"].get<std::string>(), rec["mode"].get<std::string>(), commit,
                                      head["mode"].get<std::string>()));
    install["hosts"][host] = {{"mode", rec["mode"]}, {"commit", rec["commit"]}};
  }
  return install;
}

}  // namespace copbench::campaign
