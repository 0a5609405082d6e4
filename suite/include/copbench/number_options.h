// Range checks for numeric command-line options, shared by the copbench CLI and the worker's
// command line (suite/worker/args.cpp). CLI11 runs a validator on the text before converting
// it, so a value out of range and a value too large for its type get the same one-line
// message naming the bounds ("--iters: '-5' is not a whole number from 1 to 2147483647"),
// instead of CLI11's PositiveNumber text (a 309-digit bound) or "Could not convert".
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace copbench {

// A whole number in [min, max]; max defaults to the largest int (most options are ints).
inline CLI::Validator whole_number(long long min, long long max = std::numeric_limits<int>::max()) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        long long v = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, v);
        if (ec == std::errc() && stop == end && v >= min && v <= max) return {};
        return fmt::format("'{}' is not a whole number from {} to {}", text, min, max);
      },
      fmt::format("INT in [{} - {}]", min, max));
}

// A finite real number greater than zero and at most max.
inline CLI::Validator positive_real(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        char* stop = nullptr;
        const double v = text.empty() ? 0.0 : std::strtod(text.c_str(), &stop);
        if (!text.empty() && stop == text.c_str() + text.size() && std::isfinite(v) && v > 0 && v <= max) return {};
        return fmt::format("'{}' is not a number greater than 0 and at most {}", text, max);
      },
      fmt::format("NUMBER in (0 - {}]", max));
}

}  // namespace copbench
