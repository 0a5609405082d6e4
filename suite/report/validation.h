// The simulations set beside what they simulate (`copbench report` of a campaign with
// simulated points, profile simulated:NAME, e.g. suite/campaigns/simulate.yml):
//  - sim-cop against the COP's analytic model (cop/model: seed 000 ch. VI's
//    expressions, two levels above 64 nodes);
//  - smpi on the calibrated platform against mpi measured on the cluster it was
//    calibrated on (echo, barrier, reduce 8 B, broadcast 1 KB at 2, 3, 4 nodes);
// each with its relative error (simulated / reference - 1); and one plot per operation
// and platform against nodes: simulated smpi, simulated cop, the cop model and the
// measured points where there are any, each labelled so.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/report_parts.h"

namespace copbench::report {

// The modelled time of a cop collective's point (barrier, reduce, broadcast at its
// nodes and elements), or nullopt for another benchmark.
std::optional<double> cop_model_us(const PointMedian& m);

// `measured`: the campaign directory holding the measured points (the same as
// `simulated` when they were run together). nullopt when there is no simulated point.
std::optional<ReportTable> validation_table(const CampaignResults& simulated, const CampaignResults& measured);
std::vector<PlotSpec> validation_plots(const CampaignResults& simulated, const CampaignResults& measured,
                                       const std::string& campaign);

}  // namespace copbench::report
