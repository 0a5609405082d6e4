// The simulations set beside what they simulate (`copbench report` of a campaign with
// simulated points, profile simulated:NAME, e.g. suite/campaigns/simulate.yml):
//  - sim-cop against the libcop-call model (cop/model/libcop_call.h: seed 000 ch. VI's
//    expressions plus what libcop sends and sim-cop's serial links carry, two levels
//    above 64 nodes), ch. VI's own expression beside it; a note says why a point is
//    more than 1 % off;
//  - smpi on the calibrated platform against mpi measured on the cluster it was
//    calibrated on (echo, barrier, reduce 8 B, broadcast 1 KB at 2, 3, 4 nodes);
// each with its relative error (simulated / reference - 1); and one plot per operation
// and platform against nodes: simulated smpi, simulated cop, both cop models and the
// measured points where there are any, each labelled so.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/report_parts.h"

namespace copbench::report {

// The modelled time of a cop collective's point (barrier, reduce, broadcast at its
// nodes and elements), or nullopt for another benchmark: ch. VI's expression
// (cop/model/scale.h, C̄ = nodes - 1 in the best-case load), and the call as libcop
// issues it on the COP the point simulated (its context's cop_* settings, the thesis's
// when it has none; cop/model/libcop_call.h).
std::optional<double> cop_model_us(const PointMedian& m);
std::optional<double> cop_libcop_call_us(const PointMedian& m);

// `measured`: the campaign directory holding the measured points (the same as
// `simulated` when they were run together). nullopt when there is no simulated point.
std::optional<ReportTable> validation_table(const CampaignResults& simulated, const CampaignResults& measured);
std::vector<PlotSpec> validation_plots(const CampaignResults& simulated, const CampaignResults& measured,
                                       const std::string& campaign);

}  // namespace copbench::report
