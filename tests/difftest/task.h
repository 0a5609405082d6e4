// cop_difftest's tasks (task.cpp) and what they tell the parent (main.cpp).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "program.h"

namespace difftest {

// Parent -> tasks: the tids of the run in task order. Task 0 -> parent: a fault to make
// (ints: fault, ms, node, step). Task -> parent: its report (see Tally::pack); the step it
// begins (one int), so that a hang names where each task stands.
constexpr int kStartTag = 7700, kFaultTag = 7701, kReportTag = 7702, kStepTag = 7703;
// PVM's reference calls use tag kRefTag + step (their own messages, never a libcop word).
constexpr int kRefTag = 20000;

// What one task saw, per kind of step; the fetch-and-add histories per counter.
struct Counter {
  std::vector<long> olds;  // the old values its successful increments fetched
  int failed = 0;          // increments that returned an error
  long final = -1;         // read by the owner at the end (-1: not read)
  bool read = false;
};
struct Tally {
  int ops[kKinds] = {}, errors[kKinds] = {}, wrong[kKinds] = {};
  int refdiff = 0;  // PVM's reference differs from the local computation (the tester's own check)
  bool killed = false;
  std::map<int, Counter> counters;  // key: owner * 1000 + word
  std::map<int, int> codes;         // error code -> count
  std::string lines;                // WRONG lines and the first errors
  void pack() const;
  void unpack(std::string& text);   // from the receive buffer
};

// A spawned task: argv = index job seed tasks nodes features steps stackdir
int task_main(int argc, char** argv);

}  // namespace difftest
