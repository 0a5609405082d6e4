// The COP projection of an application point (seed 000 ch. VI, "Effect of Global
// Operation Speedup on Overall Execution Time", Table V), computed here from what the
// application recorded: each part's fraction of the run and its seconds summed over tasks
// (frac_<part>, seconds_<part>, frac_computation) and its calls by size
// (calls_<part>_<bytes>, apps/common.h Breakdown::call_counters). Each call is priced with
// the analytic model (cop/model/analytic.h: Hall's timings, C̄ = ranks - 1 channels ahead
// in the poll, t̄OP = t_OP, the thesis's assumption for EGO, whose multicasts are
// serialised by barriers).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/report_parts.h"

namespace copbench::report {

// Modelled seconds of one call on the COP hardware with `ranks` channels taking part:
// a multicast or point-to-point of `bytes` (cop_bcast; cop_write + cop_read), a
// reduction of `bytes` of doubles (cop_reduce), a barrier (SPMD cop_barrier). nullopt for
// a part the model has no call for.
std::optional<double> cop_call_seconds(const std::string& part, int ranks, std::size_t bytes);

struct CopProjection {
  std::map<std::string, double> speedup;  // per part: measured seconds ÷ modelled COP seconds
  double frac_total = 0;                  // computation + Σ fraction ÷ speedup (COP normalized total)
  double speedup_total = 0;               // 1 ÷ frac_total: the projected COP speedup
};

// The projection of point `m` over `parts` (counter names: "multicast", ...); nullopt when
// its counters lack a part's fraction or seconds, or the computation fraction.
std::optional<CopProjection> cop_projection(const PointMedian& m, const std::vector<std::string>& parts);

}  // namespace copbench::report
