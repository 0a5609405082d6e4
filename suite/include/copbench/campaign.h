// Campaigns: a declarative YAML file (what to run, on which backends and modes, node
// counts, sizes, repetitions, link profiles, which seed tables to compare against)
// expanded into points, run one by one with every finished point written at once, and
// resumable without redoing a finished point. See suite/campaigns/README.md.
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "copbench/worker.h"

namespace copbench::campaign {

// A refused campaign file: what() is "FILE:LINE: reason", one line.
class CampaignError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Backends a campaign may name: the catalog's (baselines/backends.json), in its order.
const std::vector<std::string>& campaign_backend_names();

// A link profile "simulated:NAME" is no cluster's: its points are the simulated backends'
// (smpi, sim-cop) on platform NAME (results/platforms/NAME.xml), run on this machine up to
// kPlatformHosts nodes; a simulated backend runs under such profiles only. The platform
// of a profile, "" when it is not one.
inline constexpr const char* kSimulatedProfile = "simulated:";
inline std::string simulated_platform(const std::string& profile) {
  const std::string prefix = kSimulatedProfile;
  return profile.rfind(prefix, 0) == 0 ? profile.substr(prefix.size()) : std::string();
}

// Where campaigns run. `local`: ranks on loopback on this machine; otherwise an Ansible
// inventory whose `compute` hosts are the nodes (the runner then runs on its head node).
struct Cluster {
  std::string name = "local";  // "local" or the inventory path
  int size = 0;                // nodes a point may use
  std::string profile;         // link profile of the cluster (local: native, unshaped loopback)
  std::string hostfile;        // mpirun hostfile on the head node ("" locally)
  std::vector<std::string> hosts;
  // The hosts are this machine's (local ranks, or the emulated cluster's namespaces:
  // inventory copbench_emulated): they share its cores, which the report says.
  bool emulated = false;
  // Channels per level-1 COP controller of the cluster's running copdrv (inventory
  // copbench_cop_per_controller, scripts/cluster up --per-controller; default 64, one
  // controller); 0 locally, where each cop point starts a private stack of its own.
  int per_controller = 0;
};
// `local` or an inventory path; throws CampaignError naming what is wrong with it.
// need_hostfile false (--launcher slurm: Slurm names the hosts): an inventory without
// the MPI hostfile is fine, hostfile stays empty (a cluster user without root has no
// ~/.copbench/mpi-hostfile: role common writes it for ansible_user only).
Cluster describe_cluster(const std::string& spec, bool need_hostfile = true);
// The link profiles scripts/lib/cluster-profiles.sh names (built in: source_data.h).
std::vector<std::string> known_profiles();

struct Timing {
  int reps = 3;
  int max_reps = 0;  // 0: default_max_reps(reps) (worker.h)
  int iters = 10;
  int warmup = 2;
  int timeout = 120;  // seconds per point
  std::string methods;  // `methods:`, parse_methods's text ("window,sync"); "": every method
};

// One invocation of a benchmark: one backend, mode, node count, tasks per node and profile; every size
// of the run at once (the worker loops over them).
struct Point {
  std::string id;  // file name stem of its result, e.g. echo.pvm-direct-raw.n2.native (.t2 with 2 tasks per node)
  std::string benchmark;
  std::string backend;
  std::string route;
  std::string encoding;
  int nodes = 0;
  int tasks_per_node = 1;  // ranks per node (run --tasks-per-node); > 1 adds .tT to the id
  std::string sizes;  // "0,8,1K" or "" for the benchmark's default / none
  std::string profile;
  Timing timing;
  std::map<std::string, std::string> params;  // an application's --param KEY=VALUE (apps/)
  // cop: channels per level-1 controller (`per_controller:`; seed 000 ch. IV, two levels
  // when below the node count); 0: one controller. Set, it adds .kK to the id.
  int per_controller = 0;
  // Variables set for the point's worker and exported to the tasks PVM spawns (`env:`,
  // e.g. COPBENCH_COP_GROUPS=ask); each adds .NAME=VALUE to the id.
  std::map<std::string, std::string> env;
  int line = 0;  // the campaign file line it came from
};

struct Campaign {
  std::string name;
  std::string description;
  std::filesystem::path file;
  std::vector<std::string> profiles;
  std::vector<std::string> compare;  // results/reference/<name>.csv
  std::string main_table;            // the table scripts/bench prints ("" = summary)
  // A previous campaign results directory to compare every point with (`reference:`,
  // resolved against the campaign file's directory; "" = none), and the tolerance of the
  // verdicts (`tolerance:`, "10%" or "0.1"; default 10 %), as `copbench compare` takes it.
  std::filesystem::path reference;
  std::string tolerance = "10%";
  std::vector<Point> points;
};

// Parses and validates `file` against the cluster; throws CampaignError("FILE:LINE: ...").
// `reference_dir` holds the seed tables `compare` may name.
Campaign load_campaign(const std::filesystem::path& file, const Cluster& cluster,
                       const std::filesystem::path& reference_dir);

// The results directory's layout.
inline constexpr const char* kManifest = "manifest.json";
inline constexpr const char* kCampaignCopy = "campaign.yml";
inline constexpr const char* kRawDir = "raw";
inline constexpr const char* kStatusDir = "status";
inline constexpr const char* kLog = "campaign.log";
inline constexpr const char* kReferenceCopy = "reference";
// The manifest keys a run writes for `reference:` (absolute path) and `tolerance:`.
inline constexpr const char* kManifestReference = "reference_campaign";
inline constexpr const char* kManifestTolerance = "tolerance";

struct RunOptions {
  std::filesystem::path file;
  std::string cluster = "local";
  std::filesystem::path resume;        // empty: a new directory
  std::filesystem::path results_root;  // where <name>-<timestamp>/ is made
  std::filesystem::path reference_dir;
  std::string launcher;  // "" (the cluster's own: ssh with a hostfile, local otherwise), local, ssh or slurm (launch.h)
  bool quiet = false;
};
struct RunSummary {
  std::filesystem::path dir;
  int total = 0, already_done = 0, ran = 0, not_offered = 0, skipped = 0, failed = 0;
};
RunSummary run_campaign(const RunOptions& options);

// What the worker of point `p` is told (the launch adds its files and deadline).
WorkerArgs point_worker_args(const Point& p);

}  // namespace copbench::campaign
