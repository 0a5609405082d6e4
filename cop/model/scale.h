// How the modelled COP hardware scales (seed 000 ch. VI timing, Hall's
// figures): barrier, reduce and broadcast from 2 to 64 nodes on one level and
// from 128 to 4096 on Figure 5's two levels (ch. IV), analytic and simulated
// side by side. One level: ch. VI's expressions with C̄ = N - 1 other channels
// in the best-case (unlocked) load of Table III, and the real controller core
// driven through the same scenario (scenario.h). Two levels: the expressions
// of analytic.h's two_level_cycles, and the K level-1 cores and the level-2
// core running the same call (scenario_two_level.h). Every difference has a
// note saying why, given only where the difference is exactly what it explains.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/analytic.h"
#include "model/hardware.h"

namespace cop::model {

struct ScaleRow {
  std::string function;  // cop_barrier, cop_reduce, cop_bcast
  std::string type;      // master-slave, spmd (barrier); integer, double
  uint64_t size = 0;     // bytes of data (8 per element); 0 for a barrier
  uint64_t nodes = 0;
  int levels = 1;
  double analytic_us = 0;
  std::optional<double> simulated_us;  // the cores' time for the same call
  std::string note;

  // simulated / analytic - 1, where there is a simulation.
  std::optional<double> difference() const;
};

// Node counts of the table: one level, then two.
const std::vector<uint64_t>& scale_nodes();

// The modelled time of one call at `nodes` nodes (1..4096), analytic only.
double scale_analytic_us(Function f, DataType type, const Timing& t, uint64_t nodes, uint64_t elements);

std::vector<ScaleRow> scale(const Timing& t);

std::string scale_text(const std::vector<ScaleRow>& rows, const Timing& t);
// CSV with the header function,type,size,nodes,levels,analytic_us,simulated_us,note
std::string scale_csv(const std::vector<ScaleRow>& rows);

}  // namespace cop::model
