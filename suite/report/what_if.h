// COP on today's network beside Open MPI's algorithms on the same network (issue 29,
// suite/campaigns/what-if.yml): for every simulated platform on which both sim-cop and
// smpi ran an operation at a node count, the two simulated times and their ratio
// (smpi ÷ sim-cop: above 1 the COP is faster); per platform and operation where the
// ratio crosses 1 (the crossover); and, as reference rows, published latencies of
// today's in-network collectives (results/reference/in-network-collectives.csv, each
// with its source). Nothing here depends on which numbers come: the COP side is
// whatever sim-cop reports on that platform.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "report/report_parts.h"

namespace copbench::report {

inline constexpr const char* kInNetworkFile = "in-network-collectives.csv";

// A published latency of an in-network collective: one line of kInNetworkFile.
struct InNetworkRow {
  std::string system, network, operation, source;
  int nodes = 0;
  double in_network_us = 0;
  std::optional<double> host_based_us;  // the same operation in software, where the source gives it
};
// Throws std::runtime_error "FILE:LINE: reason" on a malformed line.
std::vector<InNetworkRow> load_in_network_rows(const std::filesystem::path& file);

// nullopt without a platform on which both sim-cop and smpi ran the same operation.
std::optional<ReportTable> what_if_table(const CampaignResults& results, const std::vector<InNetworkRow>& published);
std::optional<ReportTable> what_if_crossover_table(const CampaignResults& results);
// Per platform: a plot of the two times against nodes for each operation, and one of
// smpi ÷ sim-cop against nodes with a curve per operation.
std::vector<PlotSpec> what_if_plots(const CampaignResults& results, const std::string& campaign);

}  // namespace copbench::report
