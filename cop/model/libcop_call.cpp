// One libcop call's cycles (libcop_call.h).
#include "model/libcop_call.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "model/analytic.h"

namespace cop::model {
namespace {

// What one call's commands cost: control and Data RAM moves at the integer t_OP, the
// element operation at the row's (Hall's classes, OpCosts::hall).
struct Costs {
  uint64_t ctl = 3;
  uint64_t elem = 3;
};

// A burst: `head` commands of `head_cost`, `n` of `body` each, one more of `tail_cost`.
struct Burst {
  uint64_t head = 0, head_cost = 0, n = 0, body = 0, tail_cost = 0;
  uint64_t size() const { return head + n + 1; }
  uint64_t work() const { return head * head_cost + n * body + tail_cost; }
};

// Cycles from a burst's first command being ready to its last one serviced, the
// commands arriving one wire time `w` apart: the latest, over the command j the
// controller waits for, of its arrival plus the service of j and all after it.
uint64_t paced(const Burst& b, uint64_t w) {
  uint64_t latest = 0;
  uint64_t after = b.work();  // service of command j and every later one
  for (uint64_t j = 0; j < b.size(); ++j) {
    latest = std::max(latest, j * w + after);
    after -= j < b.head ? b.head_cost : j < b.head + b.n ? b.body : b.tail_cost;
  }
  return latest;
}

// The answers of an m-command burst reach its node this long after its last command.
uint64_t answers(const Timing& t, const SerialLink& l, uint64_t m) {
  return l.answers_on_link ? t.t_cop_cn + (m - 1) * l.wire + l.flight : 0;
}

// A node's first command is at its controller this long after the node sends it.
uint64_t arrives(const Timing& t, const SerialLink& l) { return t.t_cn_cop + l.flight; }

// A reduction's burst (commands::reduction): LOCK, SETTC, SETBM, the elements, UNLOCK;
// `result` = the t_COP-CN each element's result adds when this channel's is the last.
Burst reduce_burst(const Costs& c, uint64_t n, uint64_t result) { return Burst{3, c.ctl, n, c.elem + result, c.ctl}; }

// Element counts of the bursts of an array call: 128 a burst (t_MAX-OP, seed 000 ch. VI).
std::vector<uint64_t> bursts_of(const Timing& t, uint64_t elements) {
  std::vector<uint64_t> out;
  for (uint64_t at = 0; at < std::max<uint64_t>(elements, 1); at += t.max_op_messages)
    out.push_back(std::min(t.max_op_messages, std::max<uint64_t>(elements, 1) - at));
  return out;
}

// One level, N channels each sending LOCK, SETTC, SETBM, BENTRY, UNLOCK together: the
// first served paced by the wire, the other N-2, then the last one's entry, the
// exit's broadcast, its UNLOCK and its answers.
uint64_t barrier_one_level(const Timing& t, const SerialLink& l, const Costs& c, uint64_t n) {
  const Burst b{4, c.ctl, 0, 0, c.ctl};
  const uint64_t exit = arrives(t, l) + paced(b, l.wire) + (n - 2) * b.work() + 4 * c.ctl + t.t_cop_cn;
  return std::max(exit + l.flight, exit + c.ctl + answers(t, l, b.size()));
}

// The time between the last channel's UNLOCKs of two successive bursts of an array
// reduction: the most of the controller's work for the burst (every channel's, and
// the results), the last channel's answers and next burst through the wire, and the
// root's results and next burst ahead of the last channel's.
uint64_t reduce_period(const Timing& t, const SerialLink& l, const Costs& c, uint64_t nodes, uint64_t prev,
                       uint64_t n) {
  const Burst plain = reduce_burst(c, n, 0), last = reduce_burst(c, n, t.t_cop_cn);
  const uint64_t work = nodes * plain.work() + n * t.t_cop_cn;
  const uint64_t last_chain = answers(t, l, prev + 4) + arrives(t, l) + paced(last, l.wire);
  // The root's results come down and its next burst goes up: a flight each way.
  const uint64_t root_chain = arrives(t, l) + l.flight - c.ctl + paced(plain, l.wire) + last.work();
  return std::max({work, last_chain, root_chain});
}

// One level: the first burst paced by the wire, N-2 whole, the last with its results.
uint64_t reduce_one_level(const Timing& t, const SerialLink& l, const Costs& c, uint64_t nodes, uint64_t elements) {
  const std::vector<uint64_t> bursts = bursts_of(t, elements);
  const uint64_t n1 = bursts.front();
  uint64_t unlock = arrives(t, l) + paced(reduce_burst(c, n1, 0), l.wire) + (nodes - 2) * reduce_burst(c, n1, 0).work() +
                    reduce_burst(c, n1, t.t_cop_cn).work();
  for (size_t k = 1; k < bursts.size(); ++k) unlock += reduce_period(t, l, c, nodes, bursts[k - 1], bursts[k]);
  return unlock + answers(t, l, bursts.back() + 4);
}

// The root alone sends: LOCK, SETBM, each element (BCAST, then onto the links), UNLOCK.
// Over the link it awaits each burst's answers before the next; the live stack's
// bursts follow each other with t_CN-COP once.
uint64_t bcast_one_level(const Timing& t, const SerialLink& l, const Costs& c, uint64_t elements) {
  uint64_t total = 0;
  const std::vector<uint64_t> bursts = bursts_of(t, elements);
  for (uint64_t n : bursts) {
    const Burst b{2, c.ctl, n, c.ctl + t.t_cop_cn, c.ctl};
    total += arrives(t, l) + paced(b, l.wire) + answers(t, l, b.size());
  }
  return l.answers_on_link ? total : total - (bursts.size() - 1) * t.t_cn_cop;
}

// Two levels (Figure 5): n1 nodes on a full level-1 controller, K level-1 controllers.
struct Levels {
  uint64_t n1 = 64, k = 2;
};

// What a level-1 forwards costs it: its t_OP, then writing it into the level 2 (t_CN-COP).
uint64_t forwarded(const Timing& t, const Costs& c) { return c.ctl + t.t_cn_cop; }

// The BENTRYs of a full level-1 (its first node also forwards the level-2 SETTC), the
// combined entry up, K entries at the level 2, the exit down and out; or the last
// node's answers.
uint64_t barrier_two_levels(const Timing& t, const SerialLink& l, const Costs& c, const Levels& v) {
  const Burst b{4, c.ctl, 0, 0, c.ctl};
  const uint64_t up = arrives(t, l) + paced(b, l.wire) + (v.n1 - 2) * b.work() + forwarded(t, c) + 4 * c.ctl + t.t_cn_cop;
  const uint64_t exit = up + l.flight + v.k * c.ctl + t.t_cop_cn + l.flight + c.ctl + t.t_cop_cn + l.flight;
  return std::max(exit, up + c.ctl + answers(t, l, b.size()));
}

// One burst of n elements of a reduction over two levels, from its first command to
// the root's last result (or the last node's answers): the root's level-1 (whose
// bursts carry the SETBM of the root, and whose first node forwards the level-2
// SETTC and SETBM) gets to its last channel's first element, which goes up; the level
// 2 combines and broadcasts it, the level-1 passes it on; the elements follow at the
// slower of the level 2 (the last contribution and a broadcast) and the root's level-1
// (each element up, each result down).
uint64_t reduce_two_level_burst(const Timing& t, const SerialLink& l, const Costs& c, const Levels& v, uint64_t n,
                                bool alone) {
  const Burst plain = reduce_burst(c, n, 0);
  const uint64_t first_up = arrives(t, l) + paced(plain, l.wire) + (v.n1 - 2) * plain.work() + 2 * forwarded(t, c) +
                            3 * c.ctl + c.elem + t.t_cn_cop;
  const uint64_t down = c.elem + t.t_cop_cn;  // a pass through a level, onto the links
  // The other level-1s (no SETBM in their bursts) are a t_OP a node ahead: at the level
  // 2 their entries are in before the root level-1's, which alone is left to combine.
  const uint64_t stream = (n - 1) * std::max(down, c.elem + t.t_cn_cop);
  const uint64_t ups = (n - 1) * (c.elem + t.t_cn_cop) + c.ctl;  // the last channel's elements and UNLOCK
  // Many level-1s: the level 2's work, K entries and a broadcast an element, from the
  // other level-1s' first element on, can take longer than that. In an array the next
  // burst's level-1 pass hides it (measured: 8 KB at 1024 nodes as at 128).
  // Each result crosses the level-1/level-2 link up and down and the node's link: three flights.
  const uint64_t level2 = alone ? first_up - v.n1 * c.ctl + v.k * n * c.elem + n * t.t_cop_cn + down + 3 * l.flight : 0;
  // The root level-1 passes the results on when it has written its elements up and the
  // first result is back (two flights).
  const uint64_t passes = first_up + std::max(ups, 2 * l.flight + down) + n * down + l.flight;
  const uint64_t result = std::max({first_up + 2 * down + stream + 3 * l.flight, passes, level2});
  return std::max(result, first_up + ups + answers(t, l, n + 4));
}

// A reduction's array over two levels: each further burst adds the root level-1's
// work for it (every node's burst, the masks its first node forwards, each combined
// element written up and each result passed down).
uint64_t reduce_two_levels(const Timing& t, const SerialLink& l, const Costs& c, const Levels& v, uint64_t elements) {
  const std::vector<uint64_t> bursts = bursts_of(t, elements);
  uint64_t total = reduce_two_level_burst(t, l, c, v, bursts.front(), bursts.size() == 1);
  for (size_t k = 1; k < bursts.size(); ++k) {
    const uint64_t n = bursts[k];
    total += v.n1 * reduce_burst(c, n, 0).work() + 2 * forwarded(t, c) + n * (t.t_cn_cop + c.elem + t.t_cop_cn);
  }
  return total;
}

// A broadcast over two levels, a burst at a time: the root's level-1 forwards the
// level-2 SETBM and each element (t_OP + t_CN-COP) and passes each element coming
// back down on to its nodes (t_OP + t_COP-CN); the level 2 reads the last element and
// acknowledges it down the link the element's data also takes (one more wire time),
// and the root gets its answers. Over links with a long flight (present) the results
// come back only after the level-1 has written the burst up, and it passes them on
// after (between the two cases the model takes the interleaved one).
uint64_t bcast_two_levels(const Timing& t, const SerialLink& l, const Costs& c, uint64_t elements) {
  uint64_t total = 0;
  for (uint64_t n : bursts_of(t, elements)) {
    // LOCK (the next command is a wire time behind it), SETBM X, SETBM, the first BCAST X.
    const uint64_t first_up = arrives(t, l) + std::max(c.ctl, l.wire) + forwarded(t, c) + c.ctl + forwarded(t, c);
    const uint64_t back = 2 * l.flight + c.ctl + t.t_cop_cn;  // an element up, read, and its result back
    const uint64_t pass = c.ctl + t.t_cop_cn;                  // the level-1 passing a result on
    if (back >= (n - 1) * forwarded(t, c)) {
      // The results come back once the level-1 has written every element up (a long
      // flight): it passes them on one after the other, the last one's answer with them.
      total += first_up + back + (n - 1) * pass + l.wire + answers(t, l, n + 4);
      continue;
    }
    const uint64_t last_up = first_up + (n - 1) * (forwarded(t, c) + pass);
    total += last_up + back + l.wire + answers(t, l, n + 4);
  }
  return total;
}

}  // namespace

SerialLink SerialLink::of(const CopHardware& hw) {
  const double cycles = kMessageBytes / hw.link_bytes_per_second * 1e9 / hw.timing.p_clk_ns;
  // Up to whole cycles; a quotient a rounding error above a whole number is that number.
  return SerialLink{uint64_t(std::ceil(cycles * (1 - 1e-9))), true, hw.flight};
}

uint64_t libcop_call_cycles(Function f, DataType type, const Timing& t, const SerialLink& link, uint64_t nodes,
                            uint64_t elements) {
  const Hierarchy h = hierarchy(nodes);
  if (nodes < 2) throw std::invalid_argument("libcop_call_cycles: a collective needs at least 2 nodes");
  const Costs c{t.t_op_int, type == DataType::floating ? t.t_op_fp : t.t_op_int};
  if (h.levels == 2) {
    const Levels v{h.per_controller, h.controllers};
    switch (f) {
      case Function::barrier_spmd: return barrier_two_levels(t, link, c, v);
      case Function::reduce: return reduce_two_levels(t, link, c, v, elements);
      case Function::bcast: return bcast_two_levels(t, link, c, elements);
      default: break;
    }
    throw std::invalid_argument("libcop_call_cycles: only barrier (SPMD), reduce and bcast");
  }
  switch (f) {
    case Function::barrier_spmd: return barrier_one_level(t, link, c, nodes);
    case Function::reduce: return reduce_one_level(t, link, c, nodes, elements);
    case Function::bcast: return bcast_one_level(t, link, c, elements);
    default: break;
  }
  throw std::invalid_argument("libcop_call_cycles: only barrier (SPMD), reduce and bcast");
}

double libcop_call_us(Function f, DataType type, const Timing& t, const SerialLink& link, uint64_t nodes,
                      uint64_t elements) {
  return t.us(libcop_call_cycles(f, type, t, link, nodes, elements));
}

}  // namespace cop::model
