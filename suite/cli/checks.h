// Checks shared by `copbench run` and `copbench verify` (defined in run_cmd.cpp): each
// throws std::invalid_argument with the one-line message the user sees.
#pragma once

#include <string>

#include "copbench/catalog.h"
#include "copbench/launch.h"

namespace copbench::cli {

const BackendSpec& checked_backend(const std::string& name);
// --tasks-per-node's value: a whole number, at least 1.
int parse_tasks_per_node(const std::string& text);
// nodes x tasks_per_node ranks: at least min_ranks, and no more than this machine (ranks on
// loopback) or the hostfile's cluster offers.
void check_nodes(const BackendSpec& spec, int nodes, int tasks_per_node, int min_ranks, const std::string& hostfile);
void check_route(const BackendSpec& spec, const std::string& route, const std::string& encoding);

// Where a command-line run goes: the options `copbench run` and `copbench verify` share.
struct Placement {
  std::string backend;
  int nodes = 2;
  std::string tasks_per_node = "1";
  std::string route, encoding, hostfile;
  std::string platform;  // smpi: results/platforms/NAME.xml (required there, refused elsewhere)
  int timeout = 600;  // seconds before the run is killed
};
// --platform NAME: required by a simulated backend (smpi), whose platform file must be
// installed; refused by every other backend.
void check_platform(const BackendSpec& spec, const std::string& platform);
// Checks the route, nodes x tasks per node (at least min_ranks) and the backend's
// runtime, then makes the launch request (the worker's route and encoding set).
LaunchRequest checked_request(const BackendSpec& spec, const Placement& where, int min_ranks);

}  // namespace copbench::cli
