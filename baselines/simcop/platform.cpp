// The COP side of a platform file (platform.h).
#include "simcop/platform.h"

#include "model/libcop_call.h"

#include <fmt/format.h>
#include <xbt/parse_units.hpp>

#include <cctype>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace copbench::simcop {

namespace fs = std::filesystem;

namespace {

// The value of attribute `name` in a tag's attributes `attrs` ("" when absent).
std::string attribute(const std::string& attrs, const std::string& name) {
  for (size_t at = attrs.find(name); at != std::string::npos; at = attrs.find(name, at + 1)) {
    if (at > 0 && !std::isspace(static_cast<unsigned char>(attrs[at - 1]))) continue;
    size_t i = attrs.find_first_not_of(" \t\r\n", at + name.size());
    if (i == std::string::npos || attrs[i] != '=') continue;
    i = attrs.find_first_not_of(" \t\r\n", i + 1);
    if (i == std::string::npos || (attrs[i] != '"' && attrs[i] != '\'')) continue;
    const size_t close = attrs.find(attrs[i], i + 1);
    if (close == std::string::npos) return "";
    return attrs.substr(i + 1, close - i - 1);
  }
  return "";
}

// The cop:* props of the file's text (comments left out), by name. Scanned by hand:
// std::regex recurses per character and failed on a long comment.
std::map<std::string, std::string> cop_props(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("sim-cop: cannot read the platform file {}", path));
  std::stringstream text;
  text << in.rdbuf();
  const std::string raw = text.str();
  std::string xml;
  for (size_t at = 0; at < raw.size();) {
    const size_t open = raw.find("<!--", at);
    xml += raw.substr(at, open == std::string::npos ? std::string::npos : open - at);
    if (open == std::string::npos) break;
    const size_t close = raw.find("-->", open + 4);
    if (close == std::string::npos) throw std::invalid_argument(fmt::format("sim-cop: {}: a comment is not closed", path));
    at = close + 3;
  }
  std::map<std::string, std::string> props;
  for (size_t at = xml.find("<prop"); at != std::string::npos; at = xml.find("<prop", at + 1)) {
    const size_t end = xml.find('>', at);
    if (end == std::string::npos) break;
    if (!std::isspace(static_cast<unsigned char>(xml[at + 5]))) continue;  // <property...> is another tag
    const std::string attrs = xml.substr(at + 5, end - at - 5);
    const std::string id = attribute(attrs, "id");
    if (id.rfind("cop:", 0) != 0) continue;
    if (attrs.find("value") == std::string::npos)
      throw std::invalid_argument(fmt::format("sim-cop: {}: prop {} has no value", path, id));
    if (!props.emplace(id, attribute(attrs, "value")).second)
      throw std::invalid_argument(fmt::format("sim-cop: {}: prop {} given twice", path, id));
  }
  return props;
}

}  // namespace

cop::model::CopHardware cop_hardware_of_file(const std::string& path) {
  std::map<std::string, std::string> props = cop_props(path);
  if (props.empty())
    throw std::invalid_argument(fmt::format(
        "sim-cop: the platform {} has no COP (no cop:* prop; thesis and present have one: results/platforms/)", path));
  auto take = [&](const char* name) {
    auto it = props.find(name);
    if (it == props.end()) throw std::invalid_argument(fmt::format("sim-cop: {}: no prop {}", path, name));
    std::string v = it->second;
    props.erase(it);
    return v;
  };
  auto parsed = [&](const char* name, auto parse, bool zero_ok = false) {
    const std::string text = take(name);
    try {
      const double v = parse(path, 0, text, name);
      if (!(v > 0 || (zero_ok && v == 0)) || !std::isfinite(v)) throw std::invalid_argument("not positive");
      return v;
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("sim-cop: {}: prop {} '{}': {}", path, name, text, e.what()));
    }
  };
  cop::model::CopHardware hw;
  hw.timing.p_clk_ns = parsed("cop:clock_period", xbt_parse_get_time) * 1e9;
  // A time in whole cycles of the clock (the controller core counts cycles).
  auto cycles = [&](const char* name, bool zero_ok) -> uint64_t {
    const std::string text = props.count(name) ? props.at(name) : "";
    const double seconds = parsed(name, xbt_parse_get_time, zero_ok);
    const double c = seconds * 1e9 / hw.timing.p_clk_ns;
    if (std::abs(c - std::round(c)) > 1e-6 * std::max(1.0, c))
      throw std::invalid_argument(fmt::format("sim-cop: {}: prop {} '{}' is not whole cycles of P_CLK {} ns", path,
                                              name, text, hw.timing.p_clk_ns));
    return uint64_t(std::llround(c));
  };
  auto count = [&](const char* name) -> uint64_t {
    const std::string text = take(name);
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || std::stoull(text) == 0)
      throw std::invalid_argument(fmt::format("sim-cop: {}: prop {} '{}': a number of cycles, at least 1", path, name, text));
    return std::stoull(text);
  };
  hw.link_bytes_per_second = parsed("cop:link_bw", xbt_parse_get_bandwidth);
  hw.timing.t_cn_cop = cycles("cop:t_cn_cop", false);
  hw.timing.t_cop_cn = cycles("cop:t_cop_cn", false);
  hw.flight = cycles("cop:link_lat", true);
  hw.timing.t_op_int = count("cop:t_op_int");
  hw.timing.t_op_fp = count("cop:t_op_fp");
  const std::string sharing = take("cop:link_sharing");
  if (sharing != "SHARED" && sharing != "SPLITDUPLEX")
    throw std::invalid_argument(
        fmt::format("sim-cop: {}: prop cop:link_sharing '{}': SHARED or SPLITDUPLEX", path, sharing));
  hw.full_duplex = sharing == "SPLITDUPLEX";
  if (!props.empty())
    throw std::invalid_argument(fmt::format("sim-cop: {}: unknown prop {} (platform.h lists them)", path, props.begin()->first));
  // A message's first word is on its link within t_CN-COP / t_COP-CN (network.h).
  const uint64_t wire = cop::model::SerialLink::of(hw).wire;
  if (wire > std::min(hw.timing.t_cn_cop, hw.timing.t_cop_cn))
    throw std::invalid_argument(fmt::format(
        "sim-cop: {}: a message takes {} cycles on a link of cop:link_bw, more than t_CN-COP or t_COP-CN", path, wire));
  return hw;
}

std::string installed_platform(const std::string& name) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path dir = ec ? fs::path(".") : self.parent_path();
  return (dir / ".." / "share" / "copbench" / "platforms" / (name + ".xml")).lexically_normal().string();
}

}  // namespace copbench::simcop

namespace copbench::simcop {

void record_cop_hardware(std::map<std::string, std::string>& settings, const cop::model::CopHardware& hw) {
  const cop::model::Timing& t = hw.timing;
  const uint64_t wire = cop::model::SerialLink::of(hw).wire;
  settings["cop_links"] = fmt::format(
      "serial {:g} MB/s a channel (and level-1/level-2) link, {:g} B a message ({} cycles on the wire), t_CN-COP {} and "
      "t_COP-CN {} cycles and a flight of {} cycles each way, {} duplex, t_OP {} / {} cycles (integer / floating "
      "point), P_CLK {:g} ns (the platform's cop:* props)",
      hw.link_bytes_per_second / 1e6, cop::model::kMessageBytes, wire, t.t_cn_cop, t.t_cop_cn, hw.flight,
      hw.full_duplex ? "full" : "half", t.t_op_int, t.t_op_fp, t.p_clk_ns);
  settings["cop_clock_ns"] = fmt::format("{:g}", t.p_clk_ns);
  settings["cop_link_bytes_per_s"] = fmt::format("{:g}", hw.link_bytes_per_second);
  settings["cop_wire_cycles"] = std::to_string(wire);
  settings["cop_flight_cycles"] = std::to_string(hw.flight);
  settings["cop_t_cn_cop"] = std::to_string(t.t_cn_cop);
  settings["cop_t_cop_cn"] = std::to_string(t.t_cop_cn);
  settings["cop_t_op_int"] = std::to_string(t.t_op_int);
  settings["cop_t_op_fp"] = std::to_string(t.t_op_fp);
  settings["cop_full_duplex"] = hw.full_duplex ? "true" : "false";
}

uint64_t lock_hand_over_cycles(const cop::model::Timing& t, const cop::model::SerialLink& link, int nodes) {
  const uint64_t one_level = t.t_cn_cop + 2 * t.t_op_int + 3 * t.t_cop_cn + link.wire + 2 * link.flight;
  const uint64_t crossing = t.t_cn_cop + 2 * t.t_op_int + t.t_cop_cn + 2 * link.flight;
  return nodes > 64 ? one_level + 2 * crossing : one_level;
}

}  // namespace copbench::simcop
