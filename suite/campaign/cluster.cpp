// The cluster a campaign runs on (--cluster): this machine, or an Ansible inventory
// (ansible/README.md) with its compute hosts, link profile and COP controllers.
#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "copbench/bench.h"
#include "copbench/campaign.h"
#include "copbench/launch.h"
#include "campaign/source_data.h"

namespace copbench::campaign {
namespace fs = std::filesystem;

std::vector<std::string> known_profiles() {
  std::vector<std::string> out;
  std::stringstream f(source_data::kClusterProfilesSh);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("CLUSTER_PROFILES=", 0) == 0) {
      std::string v = line.substr(17);
      v.erase(std::remove(v.begin(), v.end(), '"'), v.end());
      std::stringstream ss(v);
      std::string p;
      while (ss >> p) out.push_back(p);
    }
  if (out.empty()) out = {"native", "ethernet10"};
  return out;
}

Cluster describe_cluster(const std::string& spec, bool need_hostfile) {
  Cluster c;
  if (spec.empty() || spec == "local") {
    c.name = "local";
    c.size = max_local_nodes();
    c.profile = "native";
    c.hosts = {host_name()};
    c.emulated = true;
    return c;
  }
  c.name = spec;
  YAML::Node inv;
  try {
    inv = YAML::LoadFile(spec);
  } catch (const YAML::BadFile&) {
    throw CampaignError(fmt::format("--cluster {}: cannot read the inventory (give `local` or an Ansible inventory file)", spec));
  } catch (const YAML::Exception& e) {
    throw CampaignError(fmt::format("{}:{}: not a YAML inventory: {}", spec, e.mark.line + 1, e.msg));
  }
  YAML::Node compute = inv["all"]["children"]["compute"]["hosts"];
  if (!compute || !compute.IsMap() || compute.size() == 0)
    throw CampaignError(fmt::format("--cluster {}: the inventory has no hosts in all.children.compute", spec));
  for (const auto& kv : compute) c.hosts.push_back(kv.first.as<std::string>());
  c.size = static_cast<int>(c.hosts.size());
  YAML::Node profile = inv["all"]["vars"]["copbench_link_profile"];
  c.profile = profile && profile.IsScalar() ? profile.as<std::string>() : "native";
  YAML::Node emulated = inv["all"]["vars"]["copbench_emulated"];
  c.emulated = emulated && emulated.IsScalar() && emulated.as<bool>(false);
  c.per_controller = inv["all"]["vars"]["copbench_cop_per_controller"].as<int>(64);
  const char* hostfile = std::getenv("COPBENCH_HOSTFILE");
  const char* home = std::getenv("HOME");
  c.hostfile = hostfile && *hostfile ? hostfile : (home ? std::string(home) : std::string("/root")) + "/.copbench/mpi-hostfile";
  if (!fs::exists(c.hostfile)) {
    if (need_hostfile)
      throw CampaignError(fmt::format("--cluster {}: no MPI hostfile {} (run site.yml, and run the campaign on the head node)",
                                      spec, c.hostfile));
    c.hostfile.clear();
  }
  return c;
}

}  // namespace copbench::campaign
