// cop_difftest's programs: a random libcop program drawn from a seed (issue 34, part 6).
// The same seed, feature list and shape always give the same program, step for step: every
// task draws it itself, the parent prints it (--print), and a failure names its seed and
// step. Membership (joins, leaves, kills) is part of the program, so every task knows each
// group's members at every step without asking anybody.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace difftest {

// The feature classes (--features): what the generator may draw.
//   barrier reduce bcast mcast short types gather faa   calls
//   groups (joins and leaves by libcop)  pvmgroups (by plain libgpvm3)
//   kill (a task killed -9 inside a reduction)  stop (copd SIGSTOP 0.5-3 s)
//   partition (a node's copdrv SIGSTOP 0.5-3 s)  restart (copd killed and started again)
//   jobs, jobs-default: two jobs at once (difftest.sh; the program itself is the same)
const std::vector<std::string>& feature_names();
// The classes of a run without --features.
const char* default_features();

enum class Kind { barrier, reduce, bcast, mcast, gather, scatter, faa, join, leave, kill, fault };
enum class Fault { stop, partition, restart };
const char* kind_name(Kind k);
const char* fault_name(Fault f);
constexpr int kKinds = int(Kind::fault) + 1;

struct Step {
  Kind kind = Kind::barrier;
  int group = 0;            // index into Program::groups
  int tag = 0;              // GAS word in the group's window (faa: TAS word of the owner)
  int count = 1;            // elements the sender/contributors pass
  int recv_count = 0;       // bcast/mcast: elements a receiver asks for (short: fewer)
  int type = 0;             // PVM_INT, PVM_LONG, PVM_FLOAT, PVM_DOUBLE
  int recv_type = 0;        // bcast: a receiver's datatype (types: another one)
  int func = 0;             // COP_SUM ... COP_EXOR
  std::vector<int> roots;   // task indices: reduce roots; gather/scatter root, bcast sender = roots[0]
  std::vector<int> targets; // mcast: the receiving tasks
  bool any_source = false;  // bcast/mcast receivers pass srctid -1
  int task = -1;            // join/leave/kill: the task; faa: the counter's owner
  bool raw = false;         // join/leave by libgpvm3 itself (dlsym RTLD_NEXT), not libcop's
  Fault fault = Fault::stop;
  int ms = 0;               // fault: how long; kill: delay inside the call
  int node = 0;             // partition: the node whose copdrv stops
  int reps = 1;             // faa: increments each task makes
  // PVM's barrier of every live task first: this broadcast's words were last used by
  // another sender's broadcast whose receivers passed srctid -1. Without it the program
  // would race in PVM too (a receive from any source may take the later sender's data).
  bool sync_before = false;
};

struct Program {
  uint64_t seed = 0;
  int tasks = 8, nodes = 4;
  std::set<std::string> features;
  std::vector<std::string> groups;              // names (group 0 holds every task)
  std::vector<std::set<int>> initial;           // members at the start
  std::vector<Step> steps;
};

// Parses "a,b,c" ("all": every class); false with `why` on an unknown name.
bool parse_features(const std::string& list, std::set<std::string>& out, std::string& why);
Program generate(uint64_t seed, int tasks, int nodes, const std::set<std::string>& features, int steps);
std::string describe(const Program& p, const Step& s);
std::string print(const Program& p);

// Membership as the program goes: apply a join, leave or kill step.
struct Members {
  std::vector<std::set<int>> of;  // per group
  std::set<int> alive;
  explicit Members(const Program& p);
  void apply(const Step& s);
};

// The value task `task` contributes at element i of step `step` (job: the second job's offset).
double value(int job, int step, int task, int i, int type);

}  // namespace difftest
