/* The porting check's group part (porting.h): porting_pvm.c with PVM 3.4's group calls,
 * porting_cop.c with libcop's. `diff -u porting_pvm.c porting_cop.c` is the whole port. */
#include <pvm3.h>

#include "porting.h"

#define CALL(call)                                                        \
  do {                                                                    \
    int rc_ = (call);                                                     \
    if (rc_ < 0) return port_failed(r, #call, rc_, "PVM error");          \
  } while (0)

int port_run_task(const char *driver, int ntask, struct port_report *r) {
  char group[] = PORT_GROUP;
  (void)driver;
  CALL(r->inst = pvm_joingroup(group));
  CALL(pvm_barrier(group, ntask));
  const int me = r->inst, root = pvm_gettid(group, 0);

  /* Instance 0 broadcasts the parameters. */
  if (me == 0) port_root_params(r->iparam, r->dparam);
  if (me == 0) {
    pvm_initsend(PvmDataDefault);
    pvm_pkint(r->iparam, N_IPARAM, 1);
    CALL(pvm_bcast(group, TAG_PARAM_INT));
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(r->dparam, N_DPARAM, 1);
    CALL(pvm_bcast(group, TAG_PARAM_DBL));
  } else {
    CALL(pvm_recv(root, TAG_PARAM_INT));
    pvm_upkint(r->iparam, N_IPARAM, 1);
    CALL(pvm_recv(root, TAG_PARAM_DBL));
    pvm_upkdouble(r->dparam, N_DPARAM, 1);
  }

  /* Everyone's share, reduced at instance 0. */
  int isum[N_RED], imax[N_RED], imin[N_RED];
  double dsum[N_RED], dmax[N_RED], dmin[N_RED];
  port_local_work(me, ntask, r->iparam, r->dparam, isum, imax, imin, dsum, dmax, dmin);
  CALL(pvm_reduce(PvmSum, isum, N_RED, PVM_INT, TAG_SUM_INT, group, 0));
  CALL(pvm_reduce(PvmMax, imax, N_RED, PVM_INT, TAG_MAX_INT, group, 0));
  CALL(pvm_reduce(PvmMin, imin, N_RED, PVM_INT, TAG_MIN_INT, group, 0));
  CALL(pvm_reduce(PvmSum, dsum, N_RED, PVM_DOUBLE, TAG_SUM_DBL, group, 0));
  CALL(pvm_reduce(PvmMax, dmax, N_RED, PVM_DOUBLE, TAG_MAX_DBL, group, 0));
  CALL(pvm_reduce(PvmMin, dmin, N_RED, PVM_DOUBLE, TAG_MIN_DBL, group, 0));
  if (me == 0) port_keep_reduced(r, isum, imax, imin, dsum, dmax, dmin);

  /* Instance 0 multicasts the results to the odd instances. */
  int odd[ntask / 2 + 1], nodd = 0;
  for (int i = 1; i < ntask; i += 2) odd[nodd++] = pvm_gettid(group, i);
  if (me == 0) {
    pvm_initsend(PvmDataDefault);
    pvm_pkint(r->imc, 3 * N_RED, 1);
    CALL(pvm_mcast(odd, nodd, TAG_MCAST_INT));
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(r->dmc, 3 * N_RED, 1);
    CALL(pvm_mcast(odd, nodd, TAG_MCAST_DBL));
  } else if (me % 2 == 1) {
    CALL(pvm_recv(root, TAG_MCAST_INT));
    pvm_upkint(r->imc, 3 * N_RED, 1);
    CALL(pvm_recv(root, TAG_MCAST_DBL));
    pvm_upkdouble(r->dmc, 3 * N_RED, 1);
    r->has_mcast = 1;
  }

  CALL(pvm_barrier(group, ntask));
  CALL(pvm_lvgroup(group));
  return 0;
}
