#include "model/analytic.h"

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

}  // namespace cop::model
