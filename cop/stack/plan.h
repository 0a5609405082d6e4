// The plan of a COP stack: which daemons run where, with which layout arguments (seed
// 000 ch. IV, Figure 5; ch. V: one controller node, one channel driver per node). The one
// producer of the stack's description: scripts/cop-stack (lib/stack.sh), the Slurm job
// (suite/launch/templates/cop-in-allocation.sh) and the emulated cluster's Ansible
// inventory (scripts/lib/cluster-config.sh) read it from `copbench-daemon plan`
// (copplan.cpp), and the seats come from cop/layout.h, which libcop's direct mapping uses.
//
// A plan lists the daemons in start order: the level-2 copd (when there is more than one
// level-1 controller), the level-1 copd by CNTNO, then one copdrv per node. Each has its
// layout arguments only (--listen, --level, --channels, --cntno, --parent; --channel,
// --controller); the caller adds the rest (keys, directories, logs). An address a
// daemon connects to whose port is chosen at start (port 0: copd's ready file names it)
// is written @NAME: the caller puts in that daemon's address once it is up.
#pragma once

#include <string>
#include <vector>

namespace cop::stack {

// A host: the name the caller runs a daemon on (a host name, node<k>, an address) and
// the address a copd there listens on (NAME=ADDR; NAME alone: both the same).
struct Host {
  std::string name;
  std::string address;
};
// NAME or NAME=ADDR; throws std::invalid_argument on an empty part.
Host parse_host(const std::string& text);

// How daemons are named.
//   stack: one state directory holds the whole stack (scripts/cop-stack): copl2, copd
//          (CNTNO 0), copd1, copd2, ..., node<k> for node k's copdrv;
//   hosts: each host its own (the Slurm job, Ansible): copd-l2, copd (copd<CNTNO> where
//          several level-1 copd share a host), copdrv (one per host).
enum class Naming { stack, hosts };

struct Request {
  std::vector<Host> hosts;         // node k runs on hosts[k-1]
  std::vector<int> nodes;          // the nodes that get a copdrv, ascending (empty: all)
  int per_controller = 64;         // K: channels per level-1 controller, 1..64
  std::vector<Host> controllers;   // one host for every copd, or one per level-1 copd (CNTNO order)
  std::vector<Host> level2;        // the level-2 copd's host (empty: controllers[0])
  int port = 0;                    // a level-1 copd's port: the first on each address (0: any free)
  int level2_port = 0;             // the level-2 copd's port (0: any free)
  int channels = 0;                // one controller's channels (0: the highest node's number)
  Naming naming = Naming::stack;
};

enum class Role { level2, level1, driver };
const char* role_name(Role r);

struct Daemon {
  std::string name;
  Host host;
  std::string program;             // copd or copdrv
  Role role = Role::driver;
  int cntno = -1;                  // level1: its CNTNO; driver: its controller's; level2: -1
  int chno = 0;                    // driver: its channel; level1 under a level 2: its channel there
  int node = 0;                    // driver: its node number
  int port = 0;                    // copd: its listen port (0: any free)
  std::vector<std::string> args;   // the layout arguments
};

// The daemons of the stack in start order; throws std::invalid_argument (what the
// request gets wrong, in one line) for a request no stack fits.
std::vector<Daemon> make_plan(const Request& r);

// One line per daemon, fields separated by tabs: name, host, address, program, role,
// cntno, chno, node, then each argument its own field.
std::string to_tsv(const std::vector<Daemon>& plan);
// A JSON array of objects with the same fields (args an array).
std::string to_json(const std::vector<Daemon>& plan);

}  // namespace cop::stack
