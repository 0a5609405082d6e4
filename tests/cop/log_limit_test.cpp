// The daemons' log limiter (cop/link/daemon.h) on a clock the test advances: lines per cause
// and second, the summary of what was held back, causes apart, the cause of a line; and the
// format of the lines copd and copdrv write (time, daemon name, level, message).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "link/daemon.h"

using cop::link::LogLimiter;

namespace {

struct Fixture {
  int64_t now = 5000;
  LogLimiter limiter{10, [this] { return now; }};
  std::vector<std::string> written;
  void log(const std::string& line) {
    for (auto& s : limiter.admit(LogLimiter::cause_of(line), line)) written.push_back(s);
  }
};

}  // namespace

TEST(LogLimiter, TenLinesOfOneCausePerSecondThenOneSummary) {
  Fixture f;
  for (int i = 0; i < 1000; ++i) f.log("malformed frame from 127.0.0.1:" + std::to_string(40000 + i) + " (12 bytes): bad magic");
  ASSERT_EQ(f.written.size(), 10u);
  EXPECT_EQ(f.written[0], "malformed frame from 127.0.0.1:40000 (12 bytes): bad magic");
  EXPECT_EQ(f.written[9], "malformed frame from 127.0.0.1:40009 (12 bytes): bad magic");
  EXPECT_EQ(f.limiter.suppressed_total(), 990u);

  f.now += 999;  // still the same window
  f.log("malformed frame from 127.0.0.1:1 (12 bytes): bad magic");
  EXPECT_EQ(f.written.size(), 10u);

  f.now += 1;  // a new window: the summary, then the line
  f.log("malformed frame from 127.0.0.1:2 (12 bytes): bad magic");
  ASSERT_EQ(f.written.size(), 12u);
  EXPECT_EQ(f.written[10], "... 991 similar lines suppressed (like: malformed frame from #.#.#.#:# (# bytes): bad magic)");
  EXPECT_EQ(f.written[11], "malformed frame from 127.0.0.1:2 (12 bytes): bad magic");
  f.log("malformed frame from 127.0.0.1:3 (12 bytes): bad magic");
  EXPECT_EQ(f.written.size(), 13u);  // no second summary: nothing held back since
}

TEST(LogLimiter, CausesAreLimitedApart) {
  Fixture f;
  for (int i = 0; i < 50; ++i) f.log("CRC-32 mismatch from port " + std::to_string(i));
  f.log("channel 3 registered by 127.0.0.1:7041");
  f.log("channel 4 down (lease ran out)");
  ASSERT_EQ(f.written.size(), 12u);
  EXPECT_EQ(f.written[10], "channel 3 registered by 127.0.0.1:7041");
  EXPECT_EQ(f.written[11], "channel 4 down (lease ran out)");
  // An explicit cause groups lines whose text differs in more than numbers.
  for (int i = 0; i < 20; ++i) f.limiter.admit("send failed", "send to host" + std::string(size_t(i), 'x') + " failed");
  EXPECT_EQ(f.limiter.suppressed_total(), 40u + 10u);
}

TEST(LogLimiter, QuietCauseIsSummarisedWithTheNextLineOfAnyCause) {
  Fixture f;
  for (int i = 0; i < 15; ++i) f.log("unknown frame type " + std::to_string(100 + i));
  ASSERT_EQ(f.written.size(), 10u);
  f.now += 1500;
  f.log("channel 1 registered by 127.0.0.1:9");
  ASSERT_EQ(f.written.size(), 12u);
  EXPECT_EQ(f.written[10], "... 5 similar lines suppressed (like: unknown frame type #)");
  EXPECT_EQ(f.written[11], "channel 1 registered by 127.0.0.1:9");
}

TEST(LogLimiter, FlushReportsWhatIsStillHeldBack) {
  Fixture f;
  for (int i = 0; i < 11; ++i) f.log("link version 7 (expected 1)");
  auto rest = f.limiter.flush();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0], "... 1 similar line suppressed (like: link version # (expected #))");
  EXPECT_TRUE(f.limiter.flush().empty());
}

TEST(LogLimiter, ZeroMeansNoLimit) {
  Fixture f;
  f.limiter.set_limit(0);
  for (int i = 0; i < 100; ++i) f.log("same line");
  EXPECT_EQ(f.written.size(), 100u);
}

TEST(LogLimiter, ManyCausesShareOneBeyondTheCap) {
  Fixture f;
  // Lines that differ in letters are different causes; past the cap they count as one.
  for (size_t i = 0; i < LogLimiter::kMaxCauses + 100; ++i) {
    std::string word;
    for (size_t k = i; ; k /= 26) { word += char('a' + k % 26); if (k < 26) break; }
    f.log("detail " + word);
  }
  EXPECT_EQ(f.written.size(), LogLimiter::kMaxCauses + 10);
  EXPECT_EQ(f.limiter.suppressed_total(), 90u);
}

TEST(LogLimiter, CauseOfRemovesNumbersAndAddresses) {
  EXPECT_EQ(LogLimiter::cause_of("from 10.0.0.7:7040 tid 0x40012 seq 17"), "from #.#.#.#:# tid # seq #");
  EXPECT_EQ(LogLimiter::cause_of("no numbers here"), "no numbers here");
  EXPECT_EQ(LogLimiter::cause_of("CRC-32 mismatch"), "CRC-# mismatch");
  EXPECT_EQ(LogLimiter::cause_of("12bytes 0xffzz"), "#bytes #zz");
}

// What copd and copdrv write on stderr: one line each, "HH:MM:SS.mmm NAME LEVEL: message".
TEST(DaemonLog, LinesCarryTimeNameLevelAndMessage) {
  using cop::link::LogLevel;
  testing::internal::CaptureStderr();
  cop::link::log_line("copd", LogLevel::info, "channel 3 registered by 127.0.0.1:7041 (session 9)");
  cop::link::log_line("copdrv[3]", LogLevel::warn, "copd silent for 1200 ms: channel 3 down");
  cop::link::log_line("copd", LogLevel::error, "--listen: bad address");
  const std::string out = testing::internal::GetCapturedStderr();
  const std::regex expected(
      "[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} copd info: channel 3 registered by 127\\.0\\.0\\.1:7041 \\(session 9\\)\n"
      "[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} copdrv\\[3\\] warning: copd silent for 1200 ms: channel 3 down\n"
      "[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} copd error: --listen: bad address\n");
  EXPECT_TRUE(std::regex_match(out, expected)) << out;
}
