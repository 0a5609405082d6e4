/* The porting check's shared part: the parent spawns NODES x TASKS_PER_NODE tasks on the
 * virtual machine, each told its node (for libcop: its node's driver, COP_DRIVER_<k> from
 * scripts/cop-stack), collects what each task saw, prints it by group instance and checks it
 * against a local computation. Identical output from porting_pvm and porting_cop is the
 * port's proof (porting_check.sh).
 *
 *   porting_pvm|porting_cop [--nodes N] [--tasks-per-node T] [--timeout S]
 */
#include <errno.h>
#include <limits.h>
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "porting.h"

void port_root_params(int iparam[N_IPARAM], double dparam[N_DPARAM]) {
  iparam[0] = 1000; /* terms 1..1000, split in blocks over the tasks */
  iparam[1] = 3;    /* scale */
  iparam[2] = 5;    /* shift */
  dparam[0] = 0.125;
  dparam[1] = 0.75;
}

void port_local_work(int inst, int ntask, const int iparam[N_IPARAM], const double dparam[N_DPARAM],
                     struct port_share *share) {
  int *isum = share->isum, *imax = share->imax, *imin = share->imin;
  double *dsum = share->dsum, *dmax = share->dmax, *dmin = share->dmin;
  const int n = iparam[0], scale = iparam[1], shift = iparam[2];
  const int lo = inst * n / ntask + 1, hi = (inst + 1) * n / ntask;
  const double h = dparam[0], w = dparam[1];
  isum[0] = 0;
  isum[1] = 0;
  for (int x = lo; x <= hi; ++x) {
    isum[0] += x;
    isum[1] += (x * x) % 1000;
  }
  imax[0] = scale * inst + shift;
  imax[1] = hi;
  imin[0] = -scale * inst;
  imin[1] = lo;
  dsum[0] = h * (hi - lo + 1);
  dsum[1] = w * inst;
  dmax[0] = h * inst;
  dmax[1] = -w * inst - h; /* never -0.0: a sign of zero is not an answer */
  dmin[0] = h * inst - w;
  dmin[1] = h * lo;
}

void port_keep_reduced(struct port_report *r, const struct port_share *reduced) {
  const int *isum = reduced->isum, *imax = reduced->imax, *imin = reduced->imin;
  const double *dsum = reduced->dsum, *dmax = reduced->dmax, *dmin = reduced->dmin;
  r->has_reduce = 1;
  memcpy(r->isum, isum, sizeof r->isum);
  memcpy(r->imax, imax, sizeof r->imax);
  memcpy(r->imin, imin, sizeof r->imin);
  memcpy(r->dsum, dsum, sizeof r->dsum);
  memcpy(r->dmax, dmax, sizeof r->dmax);
  memcpy(r->dmin, dmin, sizeof r->dmin);
  for (int i = 0; i < N_RED; ++i) {
    r->imc[i] = isum[i], r->imc[N_RED + i] = imax[i], r->imc[2 * N_RED + i] = imin[i];
    r->dmc[i] = dsum[i], r->dmc[N_RED + i] = dmax[i], r->dmc[2 * N_RED + i] = dmin[i];
  }
}

int port_failed(struct port_report *r, const char *call, int rc, const char *why) {
  snprintf(r->error, sizeof r->error, "%s failed: %s (code %d)", call, why, rc);
  return rc;
}

/* ---- a spawned task ---- */

/* Each returns 0 or the first PVM error (the report is one message: a half-packed or
   half-read one is refused, never used). */
static int pack_report(const struct port_report *r) {
  int rc = pvm_initsend(PvmDataDefault);
  if (rc >= 0) rc = pvm_pkint((int *)&r->inst, 1, 1);
  if (rc >= 0) rc = pvm_pkint((int *)r->iparam, N_IPARAM, 1);
  if (rc >= 0) rc = pvm_pkdouble((double *)r->dparam, N_DPARAM, 1);
  if (rc >= 0) rc = pvm_pkint((int *)&r->has_reduce, 1, 1);
  if (rc >= 0) rc = pvm_pkint((int *)r->isum, N_RED, 1);
  if (rc >= 0) rc = pvm_pkint((int *)r->imax, N_RED, 1);
  if (rc >= 0) rc = pvm_pkint((int *)r->imin, N_RED, 1);
  if (rc >= 0) rc = pvm_pkdouble((double *)r->dsum, N_RED, 1);
  if (rc >= 0) rc = pvm_pkdouble((double *)r->dmax, N_RED, 1);
  if (rc >= 0) rc = pvm_pkdouble((double *)r->dmin, N_RED, 1);
  if (rc >= 0) rc = pvm_pkint((int *)&r->has_mcast, 1, 1);
  if (rc >= 0) rc = pvm_pkint((int *)r->imc, 3 * N_RED, 1);
  if (rc >= 0) rc = pvm_pkdouble((double *)r->dmc, 3 * N_RED, 1);
  if (rc >= 0) rc = pvm_pkstr((char *)r->error);
  return rc < 0 ? rc : 0;
}

static int unpack_report(struct port_report *r) {
  int rc = pvm_upkint(&r->inst, 1, 1);
  if (rc >= 0) rc = pvm_upkint(r->iparam, N_IPARAM, 1);
  if (rc >= 0) rc = pvm_upkdouble(r->dparam, N_DPARAM, 1);
  if (rc >= 0) rc = pvm_upkint(&r->has_reduce, 1, 1);
  if (rc >= 0) rc = pvm_upkint(r->isum, N_RED, 1);
  if (rc >= 0) rc = pvm_upkint(r->imax, N_RED, 1);
  if (rc >= 0) rc = pvm_upkint(r->imin, N_RED, 1);
  if (rc >= 0) rc = pvm_upkdouble(r->dsum, N_RED, 1);
  if (rc >= 0) rc = pvm_upkdouble(r->dmax, N_RED, 1);
  if (rc >= 0) rc = pvm_upkdouble(r->dmin, N_RED, 1);
  if (rc >= 0) rc = pvm_upkint(&r->has_mcast, 1, 1);
  if (rc >= 0) rc = pvm_upkint(r->imc, 3 * N_RED, 1);
  if (rc >= 0) rc = pvm_upkdouble(r->dmc, 3 * N_RED, 1);
  if (rc >= 0) rc = pvm_upkstr(r->error);
  return rc < 0 ? rc : 0;
}

static int task_main(int argc, char **argv) {
  /* argv: --task NTASK NODE DRIVER */
  struct port_report r;
  memset(&r, 0, sizeof r);
  r.inst = -1;
  if (pvm_mytid() < 0 || argc < 5) return 1;
  int rc = port_run_task(argv[4], atoi(argv[2]), &r);
  int sent = pack_report(&r);
  if (sent >= 0) sent = pvm_send(pvm_parent(), TAG_REPORT);
  if (sent < 0) fprintf(stderr, "porting task: cannot send its report to the parent (PVM error %d)\n", sent);
  pvm_exit();
  return rc < 0 || sent < 0 ? 1 : 0;
}

/* ---- the parent ---- */

static int parse_count(const char *opt, const char *value, int max) {
  char *end = NULL;
  errno = 0;
  long v = value ? strtol(value, &end, 10) : 0;
  if (!value || *end != '\0' || errno != 0 || v < 1 || v > max) {
    fprintf(stderr, "porting: %s must be a number 1..%d, got '%s'\n", opt, max, value ? value : "");
    exit(2);
  }
  return (int)v;
}

static void print_report(const struct port_report *r) {
  printf("task %d: bcast %d %d %d %.17g %.17g", r->inst, r->iparam[0], r->iparam[1], r->iparam[2],
         r->dparam[0], r->dparam[1]);
  if (r->has_reduce)
    printf("; reduce int sum %d %d max %d %d min %d %d, double sum %.17g %.17g max %.17g %.17g min %.17g %.17g",
           r->isum[0], r->isum[1], r->imax[0], r->imax[1], r->imin[0], r->imin[1], r->dsum[0],
           r->dsum[1], r->dmax[0], r->dmax[1], r->dmin[0], r->dmin[1]);
  if (r->has_mcast) {
    printf("; mcast int");
    for (int i = 0; i < 3 * N_RED; ++i) printf(" %d", r->imc[i]);
    printf(", double");
    for (int i = 0; i < 3 * N_RED; ++i) printf(" %.17g", r->dmc[i]);
  }
  printf("\n");
}

/* What every task should have seen; the number of disagreements (each named on stderr). */
static int check(const struct port_report *reports, int ntask) {
  struct port_report want;
  memset(&want, 0, sizeof want);
  port_root_params(want.iparam, want.dparam);
  for (int i = 0; i < N_RED; ++i) {
    want.imax[i] = want.imin[i] = 0;
    want.dmax[i] = want.dmin[i] = 0.0;
  }
  for (int inst = 0; inst < ntask; ++inst) {
    struct port_share share;
    port_local_work(inst, ntask, want.iparam, want.dparam, &share);
    const int *isum = share.isum, *imax = share.imax, *imin = share.imin;
    const double *dsum = share.dsum, *dmax = share.dmax, *dmin = share.dmin;
    for (int i = 0; i < N_RED; ++i) {
      want.isum[i] += isum[i];
      want.dsum[i] += dsum[i];
      want.imax[i] = inst == 0 || imax[i] > want.imax[i] ? imax[i] : want.imax[i];
      want.imin[i] = inst == 0 || imin[i] < want.imin[i] ? imin[i] : want.imin[i];
      want.dmax[i] = inst == 0 || dmax[i] > want.dmax[i] ? dmax[i] : want.dmax[i];
      want.dmin[i] = inst == 0 || dmin[i] < want.dmin[i] ? dmin[i] : want.dmin[i];
    }
  }
  for (int i = 0; i < N_RED; ++i) {
    want.imc[i] = want.isum[i];
    want.imc[N_RED + i] = want.imax[i];
    want.imc[2 * N_RED + i] = want.imin[i];
    want.dmc[i] = want.dsum[i];
    want.dmc[N_RED + i] = want.dmax[i];
    want.dmc[2 * N_RED + i] = want.dmin[i];
  }
  int bad = 0;
#define EXPECT(cond, ...)                                                                       \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      fprintf(stderr, __VA_ARGS__);                                                             \
      ++bad;                                                                                    \
    }                                                                                           \
  } while (0)
  for (int inst = 0; inst < ntask; ++inst) {
    const struct port_report *r = &reports[inst];
    EXPECT(memcmp(r->iparam, want.iparam, sizeof want.iparam) == 0 &&
               memcmp(r->dparam, want.dparam, sizeof want.dparam) == 0,
           "task %d: broadcast parameters differ from the root's\n", inst);
    EXPECT(r->has_reduce == (inst == 0), "task %d: %s reduction results\n", inst,
           inst == 0 ? "the root has no" : "a non-root reports");
    if (inst == 0 && r->has_reduce) {
      EXPECT(memcmp(r->isum, want.isum, sizeof want.isum) == 0, "task 0: integer sum is wrong (want %d %d)\n",
             want.isum[0], want.isum[1]);
      EXPECT(memcmp(r->imax, want.imax, sizeof want.imax) == 0, "task 0: integer max is wrong (want %d %d)\n",
             want.imax[0], want.imax[1]);
      EXPECT(memcmp(r->imin, want.imin, sizeof want.imin) == 0, "task 0: integer min is wrong (want %d %d)\n",
             want.imin[0], want.imin[1]);
      EXPECT(memcmp(r->dsum, want.dsum, sizeof want.dsum) == 0,
             "task 0: double sum is wrong (want %.17g %.17g)\n", want.dsum[0], want.dsum[1]);
      EXPECT(memcmp(r->dmax, want.dmax, sizeof want.dmax) == 0,
             "task 0: double max is wrong (want %.17g %.17g)\n", want.dmax[0], want.dmax[1]);
      EXPECT(memcmp(r->dmin, want.dmin, sizeof want.dmin) == 0,
             "task 0: double min is wrong (want %.17g %.17g)\n", want.dmin[0], want.dmin[1]);
    }
    EXPECT(r->has_mcast == (inst % 2 == 1), "task %d: %s\n", inst,
           inst % 2 ? "did not receive the multicast" : "received a multicast not sent to it");
    if (inst % 2 == 1 && r->has_mcast)
      EXPECT(memcmp(r->imc, want.imc, sizeof want.imc) == 0 && memcmp(r->dmc, want.dmc, sizeof want.dmc) == 0,
             "task %d: multicast results differ from the reductions'\n", inst);
  }
#undef EXPECT
  return bad;
}

/* The parent's run: its options and what it collects. */
struct porting_run {
  int nodes, per_node, timeout_s, ntask;
  int *tids;                   /* by spawn order */
  struct port_report *reports; /* by group instance */
  int *reported;               /* by spawn order */
  int *seen;                   /* by group instance */
  int spawned;                 /* tasks to kill when the run ends early */
};

/* --nodes, --tasks-per-node, --timeout; 0, or 2 after one line on a bad argument. */
static int parse_options(int argc, char **argv, struct porting_run *run) {
  run->nodes = 4, run->per_node = 2, run->timeout_s = 60;
  for (int i = 1; i < argc; ++i) {
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--nodes") == 0) {
      run->nodes = parse_count("--nodes", value, 64);
    } else if (strcmp(argv[i], "--tasks-per-node") == 0) {
      run->per_node = parse_count("--tasks-per-node", value, 64);
    } else if (strcmp(argv[i], "--timeout") == 0) {
      run->timeout_s = parse_count("--timeout", value, 3600);
    } else {
      fprintf(stderr, "porting: unknown argument '%s' (usage: %s [--nodes N] [--tasks-per-node T] [--timeout S])\n",
              argv[i], argv[0]);
      return 2;
    }
    ++i;
  }
  run->ntask = run->nodes * run->per_node;
  return 0;
}

/* Task j runs on node 1 + j / per_node and uses that node's channel driver; the parent
 * hears of every task's exit (TAG_EXIT). 0, or 1 after one line. */
static int spawn_tasks(const char *self, struct porting_run *run) {
  for (; run->spawned < run->ntask; ++run->spawned) {
    char count[16], node[16], var[32];
    const int k = 1 + run->spawned / run->per_node;
    snprintf(count, sizeof count, "%d", run->ntask);
    snprintf(node, sizeof node, "%d", k);
    snprintf(var, sizeof var, "COP_DRIVER_%d", k);
    const char *driver = getenv(var) ? getenv(var) : "";
    char *args[] = {"--task", count, node, (char *)driver, NULL};
    int got = pvm_spawn((char *)self, args, PvmTaskDefault, "", 1, &run->tids[run->spawned]);
    if (got != 1) {
      fprintf(stderr, "porting: pvm_spawn of task %d failed (code %d)\n", run->spawned, run->tids[run->spawned]);
      return 1;
    }
  }
  const int rc = pvm_notify(PvmTaskExit, TAG_EXIT, run->ntask, run->tids);
  if (rc < 0) fprintf(stderr, "porting: pvm_notify(PvmTaskExit) failed (PVM error %d)\n", rc);
  return rc < 0 ? 1 : 0;
}

/* Spawn-order index of tid, or ntask. */
static int task_index(const struct porting_run *run, int tid) {
  int j = 0;
  while (j < run->ntask && run->tids[j] != tid) ++j;
  return j;
}

/* Files the report just received from src by its group instance. 0, or 1 after one line
 * when the task failed or its instance is out of range or taken. */
static int take_report(struct porting_run *run, int src) {
  struct port_report r;
  memset(&r, 0, sizeof r);
  const int rc = unpack_report(&r);
  if (rc < 0) {
    fprintf(stderr, "porting: task t%x sent a report that cannot be read (PVM error %d)\n", src, rc);
    return 1;
  }
  if (r.error[0]) {
    fprintf(stderr, "porting: task t%x (group instance %d): %s\n", src, r.inst, r.error);
    return 1;
  }
  if (r.inst < 0 || r.inst >= run->ntask || run->seen[r.inst]++) {
    fprintf(stderr, "porting: task t%x reports group instance %d twice or out of 0..%d\n", src, r.inst,
            run->ntask - 1);
    return 1;
  }
  run->reports[r.inst] = r;
  return 0;
}

/* Each task reports once; a task that exits without a report gets a short grace for its
 * message, then the run fails naming it. 0, or 1 after one line. */
static int collect_reports(struct porting_run *run) {
  int nreports = 0, exited_silent = 0;
  struct timeval start;
  gettimeofday(&start, NULL);
  while (nreports < run->ntask) {
    struct timeval now, left;
    gettimeofday(&now, NULL);
    long waited = now.tv_sec - start.tv_sec;
    left.tv_sec = exited_silent ? 2 : (waited < run->timeout_s ? run->timeout_s - waited : 0);
    left.tv_usec = 0;
    int buf = pvm_trecv(-1, -1, &left);
    if (buf <= 0) {
      fprintf(stderr, "porting: %s; tasks without a report:", exited_silent ? "a task exited without a report"
                                                                              : "timed out waiting for the tasks");
      for (int j = 0; j < run->ntask; ++j)
        if (!run->reported[j]) fprintf(stderr, " t%x", run->tids[j]);
      fprintf(stderr, "\n");
      return 1;
    }
    int bytes, tag, src;
    if (pvm_bufinfo(buf, &bytes, &tag, &src) < 0) {
      fprintf(stderr, "porting: pvm_bufinfo failed on a received message\n");
      return 1;
    }
    if (tag == TAG_EXIT) {
      int who = 0;
      if (pvm_upkint(&who, 1, 1) < 0) {
        fprintf(stderr, "porting: an exit notify message cannot be read\n");
        return 1;
      }
      int j = task_index(run, who);
      if (j < run->ntask && !run->reported[j]) exited_silent = 1;
      continue;
    }
    if (tag != TAG_REPORT) continue;
    int j = task_index(run, src);
    if (j == run->ntask || run->reported[j]) continue;
    run->reported[j] = 1;
    ++nreports;
    if (take_report(run, src)) return 1;
  }
  run->spawned = 0; /* every task has finished: nothing to kill */
  return 0;
}

/* Prints every report by group instance and checks them. 0, or 1 after one line. */
static int print_and_check(const struct porting_run *run) {
  printf("porting check: %d tasks (%d nodes x %d)\n", run->ntask, run->nodes, run->per_node);
  for (int inst = 0; inst < run->ntask; ++inst) print_report(&run->reports[inst]);
  int bad = check(run->reports, run->ntask);
  if (bad) {
    fprintf(stderr, "porting: %d result(s) disagree with a local computation\n", bad);
    return 1;
  }
  printf("all results agree with a local computation\n");
  fflush(stdout);
  return 0;
}

static int parent_main(int argc, char **argv) {
  struct porting_run run = {0};
  if (parse_options(argc, argv, &run)) return 2;
  pvm_setopt(PvmAutoErr, 0);
  if (pvm_mytid() < 0) {
    fprintf(stderr, "porting: no pvmd is running (start one: copbench-pvmd-local start, then its exports)\n");
    return 1;
  }
  char self[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) {
    fprintf(stderr, "porting: cannot read /proc/self/exe\n");
    pvm_exit();
    return 1;
  }
  self[len] = '\0';

  run.tids = calloc((size_t)run.ntask, sizeof *run.tids);
  run.reports = calloc((size_t)run.ntask, sizeof *run.reports);
  run.reported = calloc((size_t)run.ntask, sizeof *run.reported);
  run.seen = calloc((size_t)run.ntask, sizeof *run.seen);
  int status = 1;
  if (run.tids && run.reports && run.reported && run.seen && !spawn_tasks(self, &run) && !collect_reports(&run))
    status = print_and_check(&run);
  for (int j = 0; j < run.spawned; ++j) pvm_kill(run.tids[j]);
  free(run.tids);
  free(run.reports);
  free(run.reported);
  free(run.seen);
  pvm_exit();
  return status;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--task") == 0) return task_main(argc, argv);
  return parent_main(argc, argv);
}
