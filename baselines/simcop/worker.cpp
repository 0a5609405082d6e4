// copbench-worker-simcop: the sim-cop backend's worker, started by `copbench run` as it
// is (launcher s4u). One SimGrid S4U simulation: the COP system of network.h, one
// actor per controller running the controller core (controller_actor.h) and one per
// node running the suite's worker (run_worker) on a SimCopBackend, so the benchmark or
// verification is the same code as on every backend and its clock is simulated time.
#include <fmt/format.h>
#include <xbt/log.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <stdexcept>

#include "copbench/pause.h"
#include "copbench/timing.h"
#include "copbench/worker.h"
#include "simcop/platform.h"
#include "simcop/simcop_backend.h"

namespace sg4 = simgrid::s4u;
using copbench::simcop::System;

namespace {

// Each controller and node on its host; a node that fails stops the simulation (the
// others would wait for it forever).
int simulate(System& sys, const copbench::WorkerArgs& args) {
  const auto& net = sys.net;
  // Controllers serve as long as a node runs (daemons: they end with the last node).
  auto controller = [&sys](const std::string& name, sg4::Host* host, int level1) {
    auto actor = std::make_shared<copbench::simcop::ControllerActor>(sys.net, sys.mail, level1, sys.timing);
    sg4::Actor::create(name, host, [actor] { (*actor)(); })->daemonize();
  };
  for (int k = 0; k < net.level1s; ++k) controller(fmt::format("cop-1-{}", k), net.level1_hosts[size_t(k)], k);
  if (net.two_levels()) controller("cop-2", net.level2_host, -1);
  std::vector<int> codes(size_t(net.nodes), 0);
  for (int i = 0; i < net.nodes; ++i)
    sg4::Actor::create(fmt::format("node-{}", i), net.node_hosts[size_t(i)], [&sys, &args, &codes, i] {
      try {
        copbench::simcop::SimCopBackend backend(sys, i);
        codes[size_t(i)] = copbench::run_worker(backend, args);
      } catch (const std::exception& e) {
        copbench::report_worker_error(args, e.what());
        codes[size_t(i)] = 2;
        sg4::Actor::kill_all();
      }
    });
  sg4::Engine::get_instance()->run();
  return *std::max_element(codes.begin(), codes.end());
}

}  // namespace

int main(int argc, char** argv) {
  xbt_log_control_set("root.thresh:warning");
  sg4::Engine engine(&argc, argv);
    // The suite times with the simulation's clock (before the arguments: they check it).
  copbench::simulated_clock() = {[] { return sg4::Engine::get_clock(); },
                                 "simgrid::s4u::Engine::get_clock (SimGrid S4U simulated time)"};
  copbench::simulated_pause() = [](double seconds) { sg4::this_actor::sleep_for(seconds); };
  // A message of N bytes takes the link's latency + N / bandwidth (no TCP factors), and
  // 4096 actors get stacks of 1 MiB rather than 8.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("contexts/stack-size:1024");
  copbench::WorkerArgs args;
  try {
    args = copbench::parse_worker_args(argc, argv);
    if (args.tasks_per_node != 1) throw std::invalid_argument("sim-cop: one task per node (a node is a channel)");
    // The COP of the platform (platform.h): its links and its controllers' timings.
    const auto hw = copbench::simcop::cop_hardware_of_file(copbench::simcop::installed_platform(args.platform));
    System sys;
    sys.timing = hw.timing;
    sys.net = copbench::simcop::build_network(args.nodes, hw);
    sys.mail = copbench::simcop::make_mailboxes(sys.net, sys.timing);
    sys.meeting = sg4::Barrier::create(unsigned(args.nodes));
    args.context.settings["network_model"] = "CM02";
    args.context.settings["cop_levels"] = sys.net.two_levels() ? "2" : "1";
    copbench::simcop::record_cop_hardware(args.context.settings, hw);
    return simulate(sys, args);
  } catch (const std::exception& e) {
    copbench::report_worker_error(args, e.what());
  }
  return 2;
}
