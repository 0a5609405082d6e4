// The COP side of a platform file (baselines/simcop/platform.h): thesis states Hall's
// COP exactly as cop/hardware/timing.h has it, present its own, calibrated none (a
// clear refusal), and a bad or incomplete COP side is refused with the prop named.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "model/libcop_call.h"
#include "simcop/platform.h"

namespace {

namespace fs = std::filesystem;
using copbench::simcop::cop_hardware_of_file;

std::string shipped(const std::string& name) { return std::string(COPBENCH_PLATFORMS) + "/" + name + ".xml"; }

// A platform whose zone carries `props`, in a file removed with the fixture.
class PlatformFile : public ::testing::Test {
 protected:
  fs::path path_ = fs::temp_directory_path() / ("simcop_platform_test." + std::to_string(::getpid()) + ".xml");
  void TearDown() override { fs::remove(path_); }
  std::string write(const std::string& props) {
    std::ofstream(path_) << "<?xml version='1.0'?>\n<platform version=\"4.1\">\n  <zone id=\"world\" routing=\"Full\">\n"
                         << props << "  </zone>\n</platform>\n";
    return path_.string();
  }
  // The error message of reading `props`, "" when it reads.
  std::string refusal(const std::string& props) {
    try {
      cop_hardware_of_file(write(props));
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }
};

const std::string kPresentLike =
    "<prop id=\"cop:clock_period\" value=\"1ns\"/><prop id=\"cop:link_bw\" value=\"100Gbps\"/>"
    "<prop id=\"cop:t_cn_cop\" value=\"2ns\"/><prop id=\"cop:t_cop_cn\" value=\"2ns\"/>"
    "<prop id=\"cop:link_lat\" value=\"0.5us\"/><prop id=\"cop:t_op_int\" value=\"3\"/>"
    "<prop id=\"cop:t_op_fp\" value=\"7\"/><prop id=\"cop:link_sharing\" value=\"SPLITDUPLEX\"/>\n";

TEST(SimCopPlatform, ThesisIsHallsCopUnchanged) {
  const cop::model::CopHardware hw = cop_hardware_of_file(shipped("thesis"));
  const cop::model::CopHardware hall;  // cop/hardware/timing.h, the thesis's link
  EXPECT_EQ(hw.timing.p_clk_ns, hall.timing.p_clk_ns);
  EXPECT_EQ(hw.timing.t_cn_cop, hall.timing.t_cn_cop);
  EXPECT_EQ(hw.timing.t_cop_cn, hall.timing.t_cop_cn);
  EXPECT_EQ(hw.timing.t_op_int, hall.timing.t_op_int);
  EXPECT_EQ(hw.timing.t_op_fp, hall.timing.t_op_fp);
  EXPECT_EQ(hw.timing.max_op_messages, hall.timing.max_op_messages);
  EXPECT_EQ(hw.link_bytes_per_second, 400e6);
  EXPECT_EQ(hw.flight, 0u);
  EXPECT_EQ(cop::model::SerialLink::of(hw).wire, 4u);
  EXPECT_FALSE(hw.full_duplex);  // ch. IV's half-duplex serial link
}

TEST(SimCopPlatform, PresentIsItsNetworksLinksAtAOneGigahertzClock) {
  const cop::model::CopHardware hw = cop_hardware_of_file(shipped("present"));
  EXPECT_EQ(hw.timing.p_clk_ns, 1.0);
  EXPECT_EQ(hw.link_bytes_per_second, 12.5e9);  // 100 Gbit/s, as present's host links
  EXPECT_EQ(hw.flight, 500u);                    // 0.5 us each way, as present's host links
  EXPECT_EQ(hw.timing.t_cn_cop, 2u);
  EXPECT_EQ(hw.timing.t_cop_cn, 2u);
  EXPECT_EQ(cop::model::SerialLink::of(hw).wire, 2u);  // 16 B in 1.28 ns: 2 cycles
  EXPECT_TRUE(hw.full_duplex);                           // present's SPLITDUPLEX host links
}

TEST(SimCopPlatform, CalibratedHasNoCopAndIsRefused) {
  try {
    cop_hardware_of_file(shipped("calibrated"));
    FAIL() << "calibrated read as a COP";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has no COP"), std::string::npos) << e.what();
  }
}

TEST_F(PlatformFile, ACompleteCopSideReads) { EXPECT_EQ(refusal(kPresentLike), ""); }

TEST_F(PlatformFile, EveryBadCopSideIsRefusedNamingTheProp) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string s = kPresentLike;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_NE(refusal(with("<prop id=\"cop:t_op_fp\" value=\"7\"/>", "")).find("no prop cop:t_op_fp"), std::string::npos);
  EXPECT_NE(refusal(with("value=\"2ns\"/><prop id=\"cop:t_cop_cn\"", "value=\"2.5ns\"/><prop id=\"cop:t_cop_cn\""))
                .find("not whole cycles"),
            std::string::npos);
  EXPECT_NE(refusal(with("100Gbps", "fast")).find("cop:link_bw"), std::string::npos);
  EXPECT_NE(refusal(with("SPLITDUPLEX", "FATPIPE")).find("cop:link_sharing"), std::string::npos);
  EXPECT_NE(refusal(with("value=\"3\"", "value=\"0\"")).find("cop:t_op_int"), std::string::npos);
  EXPECT_NE(refusal(kPresentLike + "<prop id=\"cop:clock\" value=\"1ns\"/>").find("unknown prop cop:clock"),
            std::string::npos);
  // A message longer on the wire than t_CN-COP: the link could not carry it in that time.
  EXPECT_NE(refusal(with("100Gbps", "1Gbps")).find("more than t_CN-COP"), std::string::npos);
  // A cop:* prop in a comment is no prop.
  EXPECT_NE(refusal("<!-- <prop id=\"cop:link_bw\" value=\"1Gbps\"/> -->\n").find("has no COP"), std::string::npos);
}

}  // namespace
