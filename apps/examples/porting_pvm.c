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
  const int me = r->inst;
  int root;
  CALL(root = pvm_gettid(group, 0));

  /* Instance 0 broadcasts the parameters. */
  if (me == 0) port_root_params(r->iparam, r->dparam);
  if (me == 0) {
    CALL(pvm_initsend(PvmDataDefault));
    CALL(pvm_pkint(r->iparam, N_IPARAM, 1));
    CALL(pvm_bcast(group, TAG_PARAM_INT));
    CALL(pvm_initsend(PvmDataDefault));
    CALL(pvm_pkdouble(r->dparam, N_DPARAM, 1));
    CALL(pvm_bcast(group, TAG_PARAM_DBL));
  } else {
    CALL(pvm_recv(root, TAG_PARAM_INT));
    CALL(pvm_upkint(r->iparam, N_IPARAM, 1));
    CALL(pvm_recv(root, TAG_PARAM_DBL));
    CALL(pvm_upkdouble(r->dparam, N_DPARAM, 1));
  }

  /* Everyone's share, reduced at instance 0. */
  struct port_share s;
  port_local_work(me, ntask, r->iparam, r->dparam, &s);
  CALL(pvm_reduce(PvmSum, s.isum, N_RED, PVM_INT, TAG_SUM_INT, group, 0));
  CALL(pvm_reduce(PvmMax, s.imax, N_RED, PVM_INT, TAG_MAX_INT, group, 0));
  CALL(pvm_reduce(PvmMin, s.imin, N_RED, PVM_INT, TAG_MIN_INT, group, 0));
  CALL(pvm_reduce(PvmSum, s.dsum, N_RED, PVM_DOUBLE, TAG_SUM_DBL, group, 0));
  CALL(pvm_reduce(PvmMax, s.dmax, N_RED, PVM_DOUBLE, TAG_MAX_DBL, group, 0));
  CALL(pvm_reduce(PvmMin, s.dmin, N_RED, PVM_DOUBLE, TAG_MIN_DBL, group, 0));
  if (me == 0) port_keep_reduced(r, &s);

  /* Instance 0 multicasts the results to the odd instances. */
  int odd[ntask / 2 + 1], nodd = 0;
  for (int i = 1; i < ntask; i += 2) CALL(odd[nodd++] = pvm_gettid(group, i));
  if (me == 0) {
    CALL(pvm_initsend(PvmDataDefault));
    CALL(pvm_pkint(r->imc, 3 * N_RED, 1));
    CALL(pvm_mcast(odd, nodd, TAG_MCAST_INT));
    CALL(pvm_initsend(PvmDataDefault));
    CALL(pvm_pkdouble(r->dmc, 3 * N_RED, 1));
    CALL(pvm_mcast(odd, nodd, TAG_MCAST_DBL));
  } else if (me % 2 == 1) {
    CALL(pvm_recv(root, TAG_MCAST_INT));
    CALL(pvm_upkint(r->imc, 3 * N_RED, 1));
    CALL(pvm_recv(root, TAG_MCAST_DBL));
    CALL(pvm_upkdouble(r->dmc, 3 * N_RED, 1));
    r->has_mcast = 1;
  }

  CALL(pvm_barrier(group, ntask));
  CALL(pvm_lvgroup(group));
  return 0;
}
