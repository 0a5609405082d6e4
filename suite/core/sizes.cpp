// Size lists as users type them: "0,8,1K,64K".
#include <charconv>
#include <stdexcept>
#include <string>

#include "copbench/bench.h"

namespace copbench {

std::vector<std::size_t> parse_sizes(const std::string& list) {
  std::vector<std::size_t> sizes;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(start, comma - start);
    std::size_t multiplier = 1;
    std::string digits = item;
    if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'k')) {
      multiplier = 1024;
      digits.pop_back();
    } else if (!digits.empty() && (digits.back() == 'M' || digits.back() == 'm')) {
      multiplier = 1024 * 1024;
      digits.pop_back();
    }
    std::size_t value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
      throw std::invalid_argument("unknown size '" + item + "' (sizes are bytes like 0,8,1K,64K)");
    if (value > (std::size_t{1} << 30) / multiplier)
      throw std::invalid_argument("size '" + item + "' is larger than 1G");
    sizes.push_back(value * multiplier);
    start = comma + 1;
  }
  return sizes;
}

std::string format_size(std::size_t bytes) {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0) return std::to_string(bytes >> 20) + "M";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

}  // namespace copbench
