// Checks shared by `copbench run` and `copbench verify` (defined in run_cmd.cpp): each
// throws std::invalid_argument with the one-line message the user sees.
#pragma once

#include <string>

#include "copbench/bench.h"

namespace copbench::cli {

const BackendSpec& checked_backend(const std::string& name);
void check_nodes(const BackendSpec& spec, int nodes, int min_nodes, const std::string& hostfile);
void check_route(const BackendSpec& spec, const std::string& route, const std::string& encoding);

}  // namespace copbench::cli
