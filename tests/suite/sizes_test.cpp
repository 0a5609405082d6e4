#include <gtest/gtest.h>

#include "copbench/bench.h"

namespace copbench {
namespace {

TEST(Sizes, ParsesBytesAndSuffixes) {
  EXPECT_EQ(parse_sizes("0,8,1K,64k,1M"),
            (std::vector<std::size_t>{0, 8, 1024, 65536, 1024 * 1024}));
}

TEST(Sizes, RejectsWhatIsNotASize) {
  for (const char* bad : {"", "8,", "abc", "-1", "8,x", "1.5K", "2G", "5000M"})
    EXPECT_THROW(parse_sizes(bad), std::invalid_argument) << bad;
}

TEST(Sizes, ErrorNamesTheBadItem) {
  try {
    parse_sizes("8,abc,16");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'abc'"), std::string::npos);
  }
}

TEST(Sizes, Formats) {
  EXPECT_EQ(format_size(0), "0");
  EXPECT_EQ(format_size(1024), "1K");
  EXPECT_EQ(format_size(1536), "1536");
  EXPECT_EQ(format_size(1 << 20), "1M");
}

}  // namespace
}  // namespace copbench
