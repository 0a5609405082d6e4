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

}  // namespace cop::model
