// copplan: the plan of a COP stack (stack/plan.h), one line per daemon; what
// `copbench-daemon plan` runs. Exit 0 with the plan on stdout; 2 and one line on stderr
// for a request no stack fits.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

#include "stack/plan.h"

namespace {

using cop::stack::Request;

std::vector<cop::stack::Host> hosts_of(const std::vector<std::string>& items) {
  std::vector<cop::stack::Host> out;
  for (const std::string& s : items) out.push_back(cop::stack::parse_host(s));
  return out;
}

struct Texts {
  std::vector<std::string> hosts, controllers = {"127.0.0.1"}, level2;
  std::string naming = "stack";
  bool json = false;
};

void add_options(CLI::App& app, Request& r, Texts& t) {
  app.add_option("--hosts", t.hosts, "node k's host is the k-th (NAME or NAME=ADDR), comma-separated")
      ->required()
      ->delimiter(',');
  app.add_option("--nodes", r.nodes, "the nodes that get a copdrv, ascending (default: all)")->delimiter(',');
  app.add_option("--per-controller", r.per_controller, "K: channels per level-1 controller (1..64)")
      ->capture_default_str();
  app.add_option("--controllers", t.controllers,
                 "the copd host (every copd there), or one per level-1 copd in CNTNO order (NAME or NAME=ADDR)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--level2", t.level2, "the level-2 copd's host (default: the first controller host)");
  app.add_option("--port", r.port, "a level-1 copd's port, the first on each address (0: any free)")
      ->capture_default_str();
  app.add_option("--level2-port", r.level2_port, "the level-2 copd's port (0: any free)")->capture_default_str();
  app.add_option("--channels", r.channels, "one controller's channels (default: the highest node)");
  app.add_option("--names", t.naming, "stack: one state directory (copl2, copd, copd1, node<k>); "
                                      "hosts: one per host (copd-l2, copd or copd<c>, copdrv)")
      ->check(CLI::IsMember({"stack", "hosts"}))
      ->capture_default_str();
  app.add_flag("--json", t.json, "a JSON array instead of tab-separated lines");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"copplan: the daemons of a COP stack, one line each: name, host, address, program (copd, copdrv), role "
               "(level2, level1, driver), CNTNO, channel, node, then the layout arguments, tab-separated. An "
               "address written @NAME is that daemon's, once it is up (its port is chosen at start)."};
  Request r;
  Texts t;
  add_options(app, r, t);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    r.hosts = hosts_of(t.hosts);
    r.controllers = hosts_of(t.controllers);
    r.level2 = hosts_of(t.level2);
    r.naming = t.naming == "hosts" ? cop::stack::Naming::hosts : cop::stack::Naming::stack;
    const auto plan = cop::stack::make_plan(r);
    std::fputs((t.json ? cop::stack::to_json(plan) : cop::stack::to_tsv(plan)).c_str(), stdout);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "copplan: %s\n", e.what());
    return 2;
  }
  return 0;
}
