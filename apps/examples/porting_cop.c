/* The porting check's group part (porting.h): porting_pvm.c with PVM 3.4's group calls,
 * porting_cop.c with libcop's. `diff -u porting_pvm.c porting_cop.c` is the whole port. */
#include <cop/cop.h>
#include <pvm3.h>
#include <stdlib.h>

#include "porting.h"

#define CALL(call)                                                        \
  do {                                                                    \
    int rc_ = (call);                                                     \
    if (rc_ < 0) return port_failed(r, #call, rc_, cop_strerror(rc_));    \
  } while (0)

int port_run_task(const char *driver, int ntask, struct port_report *r) {
  char group[] = PORT_GROUP;
  if (!driver[0]) return port_failed(r, "COP_DRIVER_<node>", -1, "not set where the program started");
  setenv("COP_DRIVER", driver, 1);
  CALL(cop_mytid());
  CALL(r->inst = pvm_joingroup(group));
  CALL(cop_barrier(group, ntask, TAG_START));
  const int me = r->inst;
  int root;
  CALL(root = pvm_gettid(group, 0));

  /* Instance 0 broadcasts the parameters. */
  if (me == 0) port_root_params(r->iparam, r->dparam);
  const int mode = me == 0 ? COP_SEND : COP_RECV;
  CALL(cop_bcast(r->iparam, N_IPARAM, PVM_INT, group, TAG_PARAM_INT, mode, root));
  CALL(cop_bcast(r->dparam, N_DPARAM, PVM_DOUBLE, group, TAG_PARAM_DBL, mode, root));

  /* Everyone's share, reduced at instance 0. */
  struct port_share s;
  port_local_work(me, ntask, r->iparam, r->dparam, &s);
  int roots[] = {0}; /* group instances, like pvm_reduce's rootginst */
  CALL(cop_reduce(COP_SUM, s.isum, PVM_INT, N_RED, TAG_SUM_INT, group, roots, 1));
  CALL(cop_reduce(COP_MAX, s.imax, PVM_INT, N_RED, TAG_MAX_INT, group, roots, 1));
  CALL(cop_reduce(COP_MIN, s.imin, PVM_INT, N_RED, TAG_MIN_INT, group, roots, 1));
  CALL(cop_reduce(COP_SUM, s.dsum, PVM_DOUBLE, N_RED, TAG_SUM_DBL, group, roots, 1));
  CALL(cop_reduce(COP_MAX, s.dmax, PVM_DOUBLE, N_RED, TAG_MAX_DBL, group, roots, 1));
  CALL(cop_reduce(COP_MIN, s.dmin, PVM_DOUBLE, N_RED, TAG_MIN_DBL, group, roots, 1));
  if (me == 0) port_keep_reduced(r, &s);

  /* Instance 0 multicasts the results to the odd instances. */
  int odd[ntask / 2 + 1], nodd = 0;
  for (int i = 1; i < ntask; i += 2) CALL(odd[nodd++] = pvm_gettid(group, i));
  if (me == 0 || me % 2 == 1) {
    CALL(cop_mcast(r->imc, 3 * N_RED, PVM_INT, odd, nodd, TAG_MCAST_INT, mode, root));
    CALL(cop_mcast(r->dmc, 3 * N_RED, PVM_DOUBLE, odd, nodd, TAG_MCAST_DBL, mode, root));
    r->has_mcast = me % 2 == 1;
  }

  CALL(cop_barrier(group, ntask, TAG_END));
  CALL(pvm_lvgroup(group));
  CALL(cop_exit());
  return 0;
}
