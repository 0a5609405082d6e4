// Hall's hardware timings for the COP system (seed 000, ch. VI), in clock cycles.
// Every value can be overridden (copbench model --t-op ... etc.).
// The lowest layer of the COP stack beside cop/wire: the controller core charges these
// cycles as it services commands, and the analytic model (cop/model) computes with them.
#pragma once

#include <cstdint>

namespace cop::hardware {

struct Timing {
  double p_clk_ns = 10.0;  // P_CLK: clock period
  uint64_t t_cn_cop = 11;  // compute node writes a command word + 64-bit data and the link carries it
  uint64_t t_op_int = 3;   // t_OP: controller service of an integer, Data RAM or control command
  uint64_t t_op_fp = 7;    // t_OP: controller service of a floating-point command
  uint64_t t_cop_cn = 17;  // t_COP-CN: result onto the links and read by the receiving node
  uint64_t max_op_messages = 128;  // messages in the longest locked burst (1024 bytes / 8)

  // t_MAX-OP = 128 x (t_OP + t_COP-CN): a channel locked for a 1 KB broadcast or read.
  uint64_t t_max_op(uint64_t t_op) const { return max_op_messages * (t_op + t_cop_cn); }
  double us(uint64_t cycles) const { return static_cast<double>(cycles) * p_clk_ns / 1000.0; }
};

}  // namespace cop::hardware
