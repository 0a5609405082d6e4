#include "model/analytic.h"

#include <algorithm>
#include <stdexcept>

namespace cop::model {

std::string_view function_name(Function f) {
  switch (f) {
    case Function::write: return "cop_write";
    case Function::read: return "cop_read";
    case Function::rmw: return "cop_rmw";
    case Function::bcast: return "cop_bcast/cop_mcast";
    case Function::reduce: return "cop_reduce";
    case Function::barrier_spmd: return "cop_barrier (SPMD)";
    case Function::barrier_master_slave: return "cop_barrier (master-slave)";
  }
  return "?";
}

Load best_load(const Timing& t, DataType type, uint64_t c_bar) {
  return Load{c_bar, type == DataType::floating ? t.t_op_fp : t.t_op_int};
}

Load max_load(const Timing& t, uint64_t c_bar) {
  return Load{c_bar, 4 * t.t_op_int + t.t_max_op(t.t_op_fp)};
}

uint64_t analytic_cycles(Function f, const Timing& t, const OpCosts& ops, const Load& load, uint64_t n) {
  // (t_CN-COP + C̄ x t̄OP + t_OP): through the link, past the C̄ others, LOCK serviced.
  const uint64_t first = t.t_cn_cop + load.c_bar * load.t_op_bar + ops.ctl;
  // One SETTC/SETBM covers at most 1024 entries (its 10-bit count).
  const uint64_t masks = (n + 1023) / 1024;
  switch (f) {
    case Function::write:  // LOCK, M/N x WSRAM, UNLOCK
      return first + n * ops.ram + ops.ctl;
    case Function::read:  // LOCK, M/N x (RSRAM + answer), UNLOCK
      return first + n * (ops.ram + t.t_cop_cn) + ops.ctl;
    case Function::rmw:  // LOCK, M/N x (RMW + answer), UNLOCK
      return first + n * (ops.alu + t.t_cop_cn) + ops.ctl;
    case Function::bcast:  // LOCK, SETBM, M/N x (BCAST + broadcast), UNLOCK
      return first + masks * ops.ctl + n * (ops.ram + t.t_cop_cn) + ops.ctl;
    case Function::reduce: {
      // t_init: LOCK, SETTC, SETBM, M/N x WSRAM (own contribution), UNLOCK.
      const uint64_t init = first + 2 * masks * ops.ctl + n * ops.ram + ops.ctl;
      // t_contrib: per element, C̄-1 channels' visits, the last contribution, the broadcast.
      const uint64_t others = load.c_bar > 0 ? (load.c_bar - 1) * load.t_op_bar : 0;
      const uint64_t contrib = load.c_bar > 0 ? n * (others + ops.alu + t.t_cop_cn) : n * t.t_cop_cn;
      return init + contrib;
    }
    case Function::barrier_spmd:
    case Function::barrier_master_slave: {
      // t_init: LOCK, SETTC, SETBM, BENTRY, UNLOCK.
      const uint64_t init = first + 4 * ops.ctl;
      // Each other channel: LOCK, SETTC (finds the mask set), BENTRY, UNLOCK in
      // SPMD; a slave of a master-slave program only sends BENTRY.
      const uint64_t per_channel = f == Function::barrier_spmd ? 4 * ops.ctl : ops.ctl;
      return init + load.c_bar * per_channel + t.t_cop_cn;
    }
  }
  return 0;
}

Hierarchy hierarchy(uint64_t nodes) {
  if (nodes < 1 || nodes > 64 * 64) throw std::invalid_argument("a two-level COP system has 1..4096 nodes");
  Hierarchy h;
  h.nodes = nodes;
  h.levels = nodes > 64 ? 2 : 1;
  h.per_controller = nodes < 64 ? nodes : 64;
  h.controllers = (nodes + 63) / 64;
  h.last_controller = nodes - 64 * (h.controllers - 1);
  return h;
}

uint64_t two_level_cycles(Function f, const Timing& t, const OpCosts& ops, const Load& level1, const Hierarchy& h,
                          uint64_t n) {
  if (h.levels != 2) throw std::invalid_argument("two_level_cycles: not a two-level system");
  if (n < 1) throw std::invalid_argument("two_level_cycles: at least one element");
  const uint64_t c1 = h.per_controller - 1;  // C̄1: the source's fellow nodes
  const uint64_t k = h.controllers;          // K: channels of the level-2 controller
  // Contributions the level 2 combines once the full level-1s' come: a last,
  // smaller level-1 finishes its nodes' part sooner and its contribution is in.
  const uint64_t full = k - (h.last_controller < h.per_controller ? 1 : 0);
  const uint64_t first = t.t_cn_cop + c1 * level1.t_op_bar + ops.ctl;
  const uint64_t masks = (n + 1023) / 1024;
  switch (f) {
    case Function::barrier_spmd:
    case Function::barrier_master_slave: {
      const uint64_t per_channel = f == Function::barrier_spmd ? 4 * ops.ctl : ops.ctl;
      const uint64_t level1_in = first + 4 * ops.ctl + c1 * per_channel;
      return level1_in + t.t_cn_cop + full * ops.ctl + t.t_cop_cn + ops.ctl + t.t_cop_cn;
    }
    case Function::reduce: {
      const uint64_t init = first + 2 * masks * ops.ctl + n * ops.alu + ops.ctl;
      const uint64_t round = (c1 > 0 ? (c1 - 1) * level1.t_op_bar : 0) + ops.alu;
      // Per element the level-1 services the round, sends the combined
      // contribution up and passes an earlier element's result out; the level 2
      // combines K contributions and sends the result down. The slower paces
      // the stream; the last element's level-2 pass and pass out end it.
      const uint64_t level1_element = round + t.t_cn_cop + ops.alu + t.t_cop_cn;
      const uint64_t level2_element = full * ops.alu + t.t_cop_cn;
      return init + n * std::max(level1_element, level2_element) + level2_element;
    }
    case Function::bcast: {
      const uint64_t start = first + masks * ops.ctl;  // LOCK, SETBM at the source's controller
      const uint64_t level2 = (k - 1) * level1.t_op_bar + ops.ram;
      // One element: three passes through a level. The level 2 then passes an
      // element every t_OP + t_COP-CN; the source's level-1 controller both
      // forwards each element up and passes it out to its fellow nodes when it
      // comes back down (ch. IV: controller 0 broadcasts to its own nodes too).
      const uint64_t one = start + ops.ram + t.t_cn_cop + level2 + t.t_cop_cn + ops.ram + t.t_cop_cn;
      const uint64_t level2_stream = one + (n - 1) * (ops.ram + t.t_cop_cn);
      const uint64_t source_controller = start + n * (2 * ops.ram + t.t_cn_cop + t.t_cop_cn);
      return std::max(level2_stream, source_controller);
    }
    default: break;
  }
  throw std::invalid_argument("two_level_cycles: only barrier, reduce and bcast span the hierarchy");
}

}  // namespace cop::model
