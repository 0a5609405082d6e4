// A platform calibrated on a campaign's measured points (simulate.h).
#include "report/simulate.h"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "copbench/stats.h"

namespace copbench::report {

namespace {

// An XML comment may not hold "--": a path or an option name could.
std::string comment_safe(std::string s) {
  for (size_t at = s.find("--"); at != std::string::npos; at = s.find("--", at)) s.replace(at, 2, "- -");
  return s;
}

}  // namespace

LinkFit fit_link(const std::vector<PointMedian>& medians, const std::string& backend) {
  std::vector<double> bytes, us;
  LinkFit fit;
  fit.backend = backend;
  std::set<double> sizes;
  for (const PointMedian& p : medians) {
    if (p.mode.backend != backend || p.nodes != 2 || p.tasks != 1 || !p.bytes || p.loop) continue;
    if (!traits_of(p).link_probe) continue;  // echo and bandwidth
    if (p.placement == "on-host") continue;  // the link is between hosts
    bytes.push_back(*p.bytes);
    us.push_back(p.median_us);
    sizes.insert(*p.bytes);
    fit.sources.push_back(fmt::format("{} ({}, {})", p.run_name, p.source, format_number(p.median_us)));
  }
  if (sizes.size() < 2)
    throw std::runtime_error(fmt::format("no {} echo or bandwidth points of 2 or more sizes at 2 nodes to fit", backend));
  const Line line = fit_line(bytes, us);
  if (!(line.intercept > 0) || !(line.slope > 0))
    throw std::runtime_error(fmt::format("the {} points give latency {} us and {} us per byte: no positive latency and "
                                         "bandwidth to simulate",
                                         backend, line.intercept, line.slope));
  fit.latency_us = line.intercept;
  fit.bandwidth_bytes_per_s = 1e6 / line.slope;
  double sum = 0;
  for (size_t i = 0; i < bytes.size(); ++i) sum += std::pow(us[i] - (line.intercept + line.slope * bytes[i]), 2);
  fit.rms_residual_us = std::sqrt(sum / double(bytes.size()));
  return fit;
}

std::string calibrated_platform_xml(const LinkFit& fit, const std::string& name, const std::string& origin, int hosts) {
  std::string points;
  for (const std::string& s : fit.sources) points += "       " + comment_safe(s) + "\n";
  const std::string comment = fmt::format(
      "{}: calibrated by `copbench simulate calibrate` on {} points measured by the {} backend\n"
      "     (campaign {}):\n{}"
      "     Their one-way times t(N) of N bytes, a least-squares line t = alpha + N / beta\n"
      "     (copbench::fit_line, suite/timing/stats.cpp): alpha {:.3f} us, beta {:.0f} bytes/s,\n"
      "     residual RMS {:.3f} us. Every host on a SPLITDUPLEX link of beta and alpha / 2 latency to\n"
      "     a FATPIPE switch of no latency, so a message between two hosts takes alpha + N / beta\n"
      "     under CM02 (the smpi backend's network model). Hosts node-0 .. node-{}; their speed\n"
      "     does not enter the times (smpi/simulate-computation:no).",
      name, fit.sources.size(), fit.backend, comment_safe(origin), points, fit.latency_us,
      fit.bandwidth_bytes_per_s, fit.rms_residual_us, hosts - 1);
  return fmt::format(
      "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<!-- {} -->\n"
      "<platform version=\"4.1\">\n  <zone id=\"world\" routing=\"Full\">\n"
      "    <cluster id=\"{}\" prefix=\"node-\" suffix=\"\" radical=\"0-{}\" speed=\"1Gf\"\n"
      "             bw=\"{:.0f}Bps\" lat=\"{:.4f}us\" sharing_policy=\"SPLITDUPLEX\"\n"
      "             bb_bw=\"{:.0f}Bps\" bb_lat=\"0us\" bb_sharing_policy=\"FATPIPE\"/>\n"
      "  </zone>\n</platform>\n",
      comment, name, hosts - 1, fit.bandwidth_bytes_per_s, fit.latency_us / 2, fit.bandwidth_bytes_per_s);
}

}  // namespace copbench::report
