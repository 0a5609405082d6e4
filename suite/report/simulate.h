// The simulation's side of a campaign's results (`copbench simulate`, the report's
// validation): a SimGrid platform calibrated on measured points, and the simulated,
// modelled and measured times of a collective set side by side.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/report_parts.h"

namespace copbench::report {

// A message of N bytes one way takes latency + N / bandwidth (the platforms' CM02 model).
struct LinkFit {
  double latency_us = 0;
  double bandwidth_bytes_per_s = 0;
  double rms_residual_us = 0;
  std::vector<std::string> sources;  // the points fitted ("echo/size:8 (mpi, 2 nodes)")
  std::string backend;
};

// The least-squares line (copbench::fit_line) through the one-way times of `backend`'s
// echo and bandwidth points at 2 nodes (both a ping-pong's time per message of N bytes;
// echo's on-host placement left out). Throws std::runtime_error when there are fewer
// than 2 sizes, or the line gives no positive latency and bandwidth.
LinkFit fit_link(const std::vector<PointMedian>& medians, const std::string& backend);

// A platform of `hosts` hosts node-0 ..: each on a SPLITDUPLEX link of the fitted
// bandwidth and half the latency, to a FATPIPE switch, so a message between two hosts
// takes the fitted line. Its comment says where the numbers come from (`origin`).
std::string calibrated_platform_xml(const LinkFit& fit, const std::string& name, const std::string& origin, int hosts);

}  // namespace copbench::report
