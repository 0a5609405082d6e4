// The plan of a COP stack (plan.h); the seats from cop/layout.h.
#include "stack/plan.h"

#include <cop/layout.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace cop::stack {

namespace {

[[noreturn]] void refuse(const std::string& why) { throw std::invalid_argument(why); }

void check_range(const char* what, int v, int lo, int hi) {
  if (v < lo || v > hi) refuse(fmt::format("{} must be {}..{}, got {}", what, lo, hi, v));
}

// The nodes that get a copdrv: the request's, checked, or every host's.
std::vector<int> nodes_of(const Request& r) {
  const int n = int(r.hosts.size());
  if (r.nodes.empty()) {
    std::vector<int> all(size_t(n), 0);
    for (int k = 1; k <= n; ++k) all[size_t(k - 1)] = k;
    return all;
  }
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    check_range("a node", r.nodes[i], 1, n);
    if (i > 0 && r.nodes[i] <= r.nodes[i - 1]) refuse(fmt::format("nodes must be ascending, each once: {} after {}",
                                                                  r.nodes[i], r.nodes[i - 1]));
  }
  return r.nodes;
}

// Channels of each level-1 copd: K under a level 2; else --channels (at least the highest node) or the highest node.
int channels_of(const Request& r, int controllers, int highest) {
  if (controllers > 1) {
    if (r.channels != 0)
      refuse(fmt::format("--channels is for one controller; with --per-controller each level-1 copd has {}",
                         r.per_controller));
    return r.per_controller;
  }
  if (r.channels == 0) return highest;
  check_range("--channels", r.channels, 1, layout::kMaxChannels);
  if (r.channels < highest)
    refuse(fmt::format("--channels {} is too few for node{} (node k drives channel k)", r.channels, highest));
  return r.channels;
}

std::string level1_name(const Request& r, int cntno, bool shares_host) {
  if (r.naming == Naming::hosts) return shares_host ? fmt::format("copd{}", cntno) : "copd";
  return cntno == 0 ? "copd" : fmt::format("copd{}", cntno);
}

// How another daemon names this copd: ADDR:PORT, or @NAME while its port is chosen at start.
std::string reference(const Daemon& d) {
  return d.port ? fmt::format("{}:{}", d.host.address, d.port) : "@" + d.name;
}

Daemon make_copd(std::string name, const Host& host, Role role, int port, std::vector<std::string> args) {
  Daemon d{std::move(name), host, "copd", role, -1, 0, 0, port, {"--listen", fmt::format("{}:{}", host.address, port)}};
  d.args.insert(d.args.end(), args.begin(), args.end());
  return d;
}

// The level-1 copd (and the level 2 above them when there are several), in start order.
std::vector<Daemon> plan_controllers(const Request& r, int controllers, int channels) {
  const size_t nc = r.controllers.size();
  if (nc != 1 && int(nc) != controllers)
    refuse(fmt::format("{} controller hosts given for {} level-1 controllers (give one, or one per controller)", nc,
                       controllers));
  std::vector<Daemon> out;
  std::map<std::string, int> on_address, on_host;  // level-1 copd per address / per host name
  for (int c = 0; c < controllers; ++c) {
    const Host& h = r.controllers[nc == 1 ? 0 : size_t(c)];
    on_address[h.address]++;
    on_host[h.name]++;
  }
  if (controllers > 1) {
    const Host& h = r.level2.empty() ? r.controllers[0] : r.level2[0];
    out.push_back(make_copd(r.naming == Naming::stack ? "copl2" : "copd-l2", h, Role::level2, r.level2_port,
                            {"--level", "2", "--channels", std::to_string(controllers)}));
  }
  std::map<std::string, int> port_taken;  // the first level-1 copd on an address has --port
  for (int c = 0; c < controllers; ++c) {
    const Host& h = r.controllers[nc == 1 ? 0 : size_t(c)];
    const int port = port_taken[h.address]++ == 0 ? r.port : 0;
    std::vector<std::string> args = {"--channels", std::to_string(channels)};
    if (controllers > 1) args.insert(args.end(), {"--cntno", std::to_string(c), "--parent", reference(out[0])});
    Daemon d = make_copd(level1_name(r, c, on_host[h.name] > 1), h, Role::level1, port, args);
    d.cntno = c;
    d.chno = controllers > 1 ? c + 1 : 0;
    out.push_back(std::move(d));
  }
  return out;
}

// Two daemons of a plan that would share a name on one host, or a port on one address.
void check_unique(const std::vector<Daemon>& plan) {
  std::map<std::pair<std::string, std::string>, int> names, ports;
  for (const Daemon& d : plan) {
    if (names[{d.host.name, d.name}]++)
      refuse(fmt::format("two daemons named {} on host {} (with --names hosts, one node per host)", d.name,
                         d.host.name));
    if (d.port && ports[{d.host.address, std::to_string(d.port)}]++)
      refuse(fmt::format("two copd on {}:{} (give the level 2 another port)", d.host.address, d.port));
  }
}

}  // namespace

Host parse_host(const std::string& text) {
  const size_t eq = text.find('=');
  Host h{text.substr(0, eq), eq == std::string::npos ? text : text.substr(eq + 1)};
  if (h.name.empty() || h.address.empty() || text.find_first_of(" \t\n,=", eq == std::string::npos ? 0 : eq + 1) != std::string::npos ||
      h.name.find_first_of(" \t\n,") != std::string::npos)
    refuse(fmt::format("not a host: '{}' (NAME or NAME=ADDR, no blanks)", text));
  return h;
}

const char* role_name(Role r) {
  switch (r) {
    case Role::level2: return "level2";
    case Role::level1: return "level1";
    case Role::driver: return "driver";
  }
  return "?";
}

std::vector<Daemon> make_plan(const Request& r) {
  if (r.hosts.empty()) refuse("no hosts: a stack needs at least one node");
  check_range("the number of hosts", int(r.hosts.size()), 1, layout::kMaxNodes);
  check_range("--per-controller", r.per_controller, 1, layout::kMaxChannels);
  check_range("--port", r.port, 0, 65535);
  check_range("--level2-port", r.level2_port, 0, 65535);
  if (r.controllers.empty()) refuse("no controller host");
  if (r.level2.size() > 1) refuse("one level-2 host at most");
  const std::vector<int> nodes = nodes_of(r);
  const int highest = nodes.back(), controllers = layout::controllers_for(highest, r.per_controller);
  if (controllers > layout::kMaxControllers)
    refuse(fmt::format("node{} needs more than {} level-1 controllers of {} channels", highest,
                       layout::kMaxControllers, r.per_controller));
  std::vector<Daemon> plan = plan_controllers(r, controllers, channels_of(r, controllers, highest));
  std::vector<std::string> reference_of(static_cast<size_t>(controllers));
  for (const Daemon& d : plan)
    if (d.role == Role::level1) reference_of[size_t(d.cntno)] = reference(d);
  for (int k : nodes) {
    const layout::Seat seat = layout::seat_of(k, r.per_controller);
    Daemon d{r.naming == Naming::stack ? fmt::format("node{}", k) : "copdrv", r.hosts[size_t(k - 1)], "copdrv",
             Role::driver, seat.cntno, seat.chno, k, 0,
             {"--channel", std::to_string(seat.chno), "--controller", reference_of[size_t(seat.cntno)]}};
    plan.push_back(std::move(d));
  }
  check_unique(plan);
  return plan;
}

std::string to_tsv(const std::vector<Daemon>& plan) {
  std::string out;
  for (const Daemon& d : plan) {
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}", d.name, d.host.name, d.host.address, d.program,
                       role_name(d.role), d.cntno, d.chno, d.node);
    for (const std::string& a : d.args) out += "\t" + a;
    out += "\n";
  }
  return out;
}

std::string to_json(const std::vector<Daemon>& plan) {
  nlohmann::json all = nlohmann::json::array();
  for (const Daemon& d : plan)
    all.push_back({{"name", d.name}, {"host", d.host.name}, {"address", d.host.address}, {"program", d.program},
                   {"role", role_name(d.role)}, {"cntno", d.cntno}, {"chno", d.chno}, {"node", d.node},
                   {"port", d.port}, {"args", d.args}});
  return all.dump(1) + "\n";
}

}  // namespace cop::stack
