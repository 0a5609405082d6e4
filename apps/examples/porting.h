/* The porting check (seed 000 ch. V: an existing PVM application uses the COP system by
 * calling the COP library in place of PVM's global operations): one PVM program whose
 * group calls are ported to libcop. porting_main.c is shared: it spawns the tasks, does their local arithmetic and
 * collects and checks what they report. The group calls live in porting_pvm.c (PVM) and
 * porting_cop.c (libcop); `diff porting_pvm.c porting_cop.c` is the whole port. */
#ifndef COPBENCH_PORTING_H
#define COPBENCH_PORTING_H

#define PORT_GROUP "porting"

/* Message tags; for libcop also the first global-address-space (GAS) word of each
 * operation, so they are spaced wider than the longest array (6 words). */
enum {
  TAG_START = 1,   /* barrier after everyone joined */
  TAG_END = 2,     /* barrier before leaving */
  TAG_PARAM_INT = 10,
  TAG_PARAM_DBL = 20,
  TAG_SUM_INT = 30,
  TAG_MAX_INT = 40,
  TAG_MIN_INT = 50,
  TAG_SUM_DBL = 60,
  TAG_MAX_DBL = 70,
  TAG_MIN_DBL = 80,
  TAG_MCAST_INT = 90,
  TAG_MCAST_DBL = 100,
  TAG_REPORT = 200, /* task -> parent (plain PVM messages in both versions) */
  TAG_EXIT = 201    /* pvm_notify(PvmTaskExit) */
};

#define N_IPARAM 3 /* terms, scale, shift */
#define N_DPARAM 2 /* h, w: binary fractions, so every sum is exact in any order */
#define N_RED 2    /* elements per reduction */

/* What one task saw; the parent prints it and checks it. */
struct port_report {
  int inst;                    /* group instance */
  int iparam[N_IPARAM];        /* received by broadcast */
  double dparam[N_DPARAM];
  int has_reduce;              /* the root: the reductions' results */
  int isum[N_RED], imax[N_RED], imin[N_RED];
  double dsum[N_RED], dmax[N_RED], dmin[N_RED];
  int has_mcast;               /* odd instances: the results, multicast by the root */
  int imc[3 * N_RED];
  double dmc[3 * N_RED];
  char error[200];             /* empty when all went well */
};

/* The root's parameters (instance 0 broadcasts them). */
void port_root_params(int iparam[N_IPARAM], double dparam[N_DPARAM]);

/* One task's operands of the six reductions (sum, max, min of ints and of doubles); at
 * the root after the reductions, their results. */
struct port_share {
  int isum[N_RED], imax[N_RED], imin[N_RED];
  double dsum[N_RED], dmax[N_RED], dmin[N_RED];
};

/* Task 'inst' of 'ntask': its contributions to the six reductions. */
void port_local_work(int inst, int ntask, const int iparam[N_IPARAM], const double dparam[N_DPARAM],
                     struct port_share *share);

/* The root: keeps the six reductions' results in 'r' and lays them out for the
 * multicast (imc, dmc). Not a group call, so shared by both versions. */
void port_keep_reduced(struct port_report *r, const struct port_share *reduced);

/* The group part of a task, one per version (porting_pvm.c, porting_cop.c). 'driver' is
 * its node's COP driver directory ("" when none was given). Fills 'r'; negative on error,
 * with r->error saying which call failed. */
int port_run_task(const char *driver, int ntask, struct port_report *r);

/* Records a failed call in r->error; returns rc. */
int port_failed(struct port_report *r, const char *call, int rc, const char *why);

#endif
