// The analytic timing expressions of seed 000, ch. VI ("Performance Analysis of
// Libcop Functions"), in controller clock cycles.
//
// Every expression starts with the channel's first command getting through:
// t_CN-COP + C̄ x t̄OP + t_OP (the link, the C̄ channels serviced ahead of it,
// then the LOCK). The other terms count the commands each libcop call sends.
// Each term is charged by what the command is (OpCosts): control commands
// (LOCK, UNLOCK, SETTC, SETBM, BENTRY) and Data RAM moves (WSRAM, RSRAM, BCAST)
// at Hall's t_OP for integer and RAM operations, the element operation
// (reduction, RMW add) at the integer or floating-point t_OP. The thesis itself
// substitutes one t_OP for every term of a row (OpCosts::uniform), which is
// why its double rows come out higher: Table III's notes say where.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/hardware.h"

namespace cop::model {

enum class DataType { integer, floating };
enum class Function { write, read, rmw, bcast, reduce, barrier_spmd, barrier_master_slave };

std::string_view function_name(Function f);

struct OpCosts {
  uint64_t ctl = 3;  // LOCK, UNLOCK, SETTC, SETBM, BENTRY
  uint64_t ram = 3;  // WSRAM, RSRAM, BCAST: Data RAM moves
  uint64_t alu = 3;  // the element operation: reduction step or RMW add

  // Hall's classes: only the element operation of a floating-point call uses the FP unit.
  static OpCosts hall(const Timing& t, DataType type) {
    return OpCosts{t.t_op_int, t.t_op_int, type == DataType::floating ? t.t_op_fp : t.t_op_int};
  }
  // The thesis's substitution: one t_OP for every command of the call.
  static OpCosts uniform(uint64_t t_op) { return OpCosts{t_op, t_op, t_op}; }
};

// What the other channels do: C̄ of them request service, each visit costing t̄OP.
struct Load {
  uint64_t c_bar = 63;
  uint64_t t_op_bar = 3;
};

// Best case: every other channel sends one unlocked command of the row's type.
Load best_load(const Timing& t, DataType type, uint64_t c_bar = 63);
// Upper bound: every other channel holds the lock for a 128-element
// floating-point operation whose every element is broadcast (t_MAX-OP), plus
// the LOCK, SETTC, SETBM and UNLOCK that frame it.
Load max_load(const Timing& t, uint64_t c_bar = 63);

// Cycles for one libcop call on `elements` 8-byte elements (M/N).
uint64_t analytic_cycles(Function f, const Timing& t, const OpCosts& ops, const Load& load, uint64_t elements);

// Figure 5 (seed 000 ch. IV): 64 compute nodes per level-1 controller, up to
// 64 level-1 controllers under one level-2 controller, 4096 nodes in all. Each
// level-1 controller reaches the level-2 one over its extra serial channel
// (ch. IV: "one extra serial channel in addition to those used to connect to
// 64 compute nodes or to lower level cops"), so all 64 node channels stay nodes.
struct Hierarchy {
  uint64_t nodes = 0;
  int levels = 1;
  uint64_t per_controller = 0;   // n1 = min(N, 64): nodes on a full level-1 controller
  uint64_t controllers = 1;      // K = ceil(N / 64): level-1 controllers (channels of the level-2 one)
  uint64_t last_controller = 0;  // nodes on the last level-1 controller (n1 or fewer)
};
// N = 1..64: one level; 65..4096: two. Throws std::invalid_argument outside.
Hierarchy hierarchy(uint64_t nodes);

// A call of the two-level system, cycles from the source node's first command
// to the last node holding the result, with `level1` the load on a full
// level-1 controller (C̄1 = n1 - 1 others, t̄OP). Three passes through a cop
// level (ch. IV): level 1 in, level 2, level 1 out, joined by the links
// up (t_CN-COP: a level-1 controller writes to the level-2 one as a node
// writes to its controller) and down (t_COP-CN: the level-2 broadcast).
// A level-2 pass is ch. VI's service term with C̄2 = K - 1: the other level-1
// controllers each request service once, as the other nodes do at level 1.
// The slowest level-1 controller, a full one, gates the level-2 pass: the
// level 2 then combines the full level-1s' contributions (K, or K - 1 when the
// last level-1 has fewer nodes: its contribution came sooner). The
// level-2 masks (SETTC/SETBM with X) belong to the X-bit partition, set when
// it is set up, not per call; every command with X that a level-1 passes on
// costs it t_OP and the link up, every result it passes out t_OP and t_COP-CN
// (the element operation's t_OP for a reduction result: the level-1 services
// it as that operation). Checked against the real cores by
// scenario_two_level.h (`copbench model scale`).
//
// barrier (BENTRY forwarded with the X bit):
//   [t_CN-COP + C̄1 t̄OP + t_OP] + 4 t_OP + C̄1 x per-channel   level 1 in: t_init and
//        the others' entries (4 t_OP SPMD, t_OP master-slave), as one level,
//        but the exit broadcast t_COP-CN is replaced by
//   + t_CN-COP                  the full terminal count forwarded up,
//   + K x t_OP                  level 2: K forwarded BENTRYs, round robin (full ones),
//   + t_COP-CN                  the exit broadcast to the K level-1 controllers,
//   + t_OP + t_COP-CN           level 1 out: each services the exit and broadcasts it.
// reduce: t_init at the source's controller, its own elements carrying X as
// the element operation (t_OP(element op); a level-1 cannot start an X
// operation with WSRAM: all contributions carry X or none, ch. V), then the
// elements pipelined: while the level 2 combines element e the level-1 runs
// the round of e + 1. Per element the level-1 services the round
// (C̄1 - 1) t̄OP + t_OP, sends the combined contribution up (t_CN-COP) and
// passes an earlier element's result out (t_OP + t_COP-CN); the level 2
// combines K contributions and sends the result down (K t_OP + t_COP-CN). The
// slower of the two paces the stream, the last element's level-2 pass ends it:
//   t_init + (M/N) max(level 1, level 2) + K t_OP + t_COP-CN
// (one element: the round, up, level 2, down, out, as three passes).
// bcast: LOCK and SETBM at the source's controller, then each element goes
// up, through the level 2 and back down to every level-1, the source's own
// included (ch. IV: "controller 0 sends the value to the Level 2 controller
// ... each of the level1 controllers broadcasts the value to its 64 compute
// nodes"). One element is three passes:
//   one = [t_CN-COP + C̄1 t̄OP + t_OP] + t_OP                  LOCK, SETBM
//         + t_OP + t_CN-COP                                   level 1 in, link up
//         + C̄2 t̄OP + t_OP + t_COP-CN                         level 2, link down
//         + t_OP + t_COP-CN                                   level 1 out
// An array streams at the slower of the level 2 (t_OP + t_COP-CN an element)
// and the source's controller, which forwards each element up and passes it
// out again (2 t_OP + t_CN-COP + t_COP-CN an element):
//   max(one + (M/N - 1)(t_OP + t_COP-CN), LOCK + SETBM + (M/N)(2 t_OP + t_CN-COP + t_COP-CN))
// (the source's UNLOCK overlaps the stream's travel and ends nothing).
// Other functions are not collectives of the hierarchy: std::invalid_argument.
uint64_t two_level_cycles(Function f, const Timing& t, const OpCosts& ops, const Load& level1, const Hierarchy& h,
                          uint64_t elements);

}  // namespace cop::model
