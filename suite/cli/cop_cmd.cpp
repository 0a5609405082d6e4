// `copbench cop compare`: libcop beside libpvm on this machine (seed 000 Table IV's
// comparison: the same barrier and reduce through COP and through PVM). It runs
// copbench-cop-compare-run beside copbench, which starts a private pvmd and a loopback
// COP stack (copd + one copdrv per node), runs copbench-cop-compare
// (cop/bench/compare.cpp), prints its table and stops both by PID, also when the run
// fails.
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "copbench/launch.h"
#include "copbench/process.h"

namespace copbench::cli {


void add_cop_command(CLI::App& app) {
  auto* cop = app.add_subcommand("cop", "The COP stack on this machine");
  cop->require_subcommand(1);
  auto* cmp = cop->add_subcommand(
      "compare", "libcop vs libpvm: barrier and reduce on the same tasks, with the bare transport round trip and "
                 "the modelled COP time; starts and stops a private pvmd and a loopback COP stack");
  struct Opts {
    int nodes = 4, tasks = 1, iters = 2000, reps = 5, poll_us = 0, per_controller = 0;
    std::string access = "direct", json, groups = "static";
    bool bulk = false;
  };
  auto o = std::make_shared<Opts>();
  cmp->add_option("--nodes", o->nodes, "emulated compute nodes (one copdrv and channel each)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmp->add_option("--tasks", o->tasks, "tasks per node")->check(CLI::Range(1, 16))->capture_default_str();
  cmp->add_option("--access", o->access, "libcop access mode")
      ->check(CLI::IsMember({"direct", "normal"}))
      ->capture_default_str();
  cmp->add_option("--iters", o->iters, "operations per repetition (pvm: a tenth, at least 20)")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  cmp->add_option("--reps", o->reps, "repetitions (the median is reported)")->check(CLI::Range(1, 1000))->capture_default_str();
  cmp->add_option("--poll-us", o->poll_us,
                  "tasks and copd poll their socket this long before sleeping (COP_POLL_US; the bare round trip "
                  "waits the same way); 0: sleep at once")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmp->add_flag("--bulk", o->bulk,
                "arrays instead: a 16 KB cop_bcast and 8 KB int and double cop_reduce beside the bare transport "
                "moving the same bytes the same way (task -> controller process -> every node, plain UDP); one "
                "task a node");
  cmp->add_option("--groups", o->groups,
                  "how libcop finds the group's members: static (CopStaticGroups: fetched once), default "
                  "(libcop's default: kept, dropped when the group changes) or ask (the group server each call)")
      ->check(CLI::IsMember({"static", "default", "ask"}))
      ->capture_default_str();
  cmp->add_option("--json", o->json, "also write the figures as JSON here (atomically)");
  cmp->add_option("--per-controller", o->per_controller,
                  "also run the nodes over level-1 controllers of this many channels under a level-2 controller "
                  "(seed 000 ch. IV, Figure 5) and print both cop_barrier times and their ratio; 0: one controller")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  cmp->callback([o] {
    std::vector<std::string> argv = {executable_dir() + "/copbench-cop-compare-run",
                                     std::to_string(o->poll_us),
                                     std::to_string(o->nodes),
                                     "--tasks", std::to_string(o->tasks),
                                     "--access", o->access,
                                     "--iters", std::to_string(o->iters),
                                     "--reps", std::to_string(o->reps),
                                     "--groups", o->groups};
    if (o->per_controller > 0) {
      argv.push_back("--per-controller");
      argv.push_back(std::to_string(o->per_controller));
    }
    if (o->bulk) argv.push_back("--bulk");
    if (!o->json.empty()) {
      argv.push_back("--json");
      argv.push_back(std::filesystem::absolute(o->json).string());
    }
    if (run_process(argv).status() != 0) throw CLI::RuntimeError(1);
  });
}

}  // namespace copbench::cli
