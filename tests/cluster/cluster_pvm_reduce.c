/* PVM collective across the virtual machine. Started with the compute hosts'
 * names in COP channel order, it spawns one copy of itself on each, by name.
 * The copies join a group, meet at pvm_barrier and pvm_reduce (PvmSum) their
 * PVM host numbers (the TID's H field) to group instance 0, which sends the sum
 * back. The parent checks that the copy on the k-th host has host number k (PVM
 * hosts added in channel order) and that the sum is n(n+1)/2. Exit 0 when right. */
#include <pvm3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define GROUP "copbench-cluster-test"
enum { TAG_HOST = 1, TAG_SUM = 2, TAG_REDUCE = 3, TIMEOUT_S = 30 };

static int host_number(int tid) { return (tid >> 18) & 0xfff; }

static int child(void) {
  int parent = pvm_parent(), me = pvm_mytid(), n = 0;
  pvm_recv(parent, TAG_HOST); /* the group size */
  pvm_upkint(&n, 1, 1);
  int inst = pvm_joingroup(GROUP);
  if (inst < 0) {
    pvm_perror("pvm_joingroup");
    return 1;
  }
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  int h = host_number(me);
  pvm_initsend(PvmDataDefault);
  pvm_pkstr(host);
  pvm_pkint(&h, 1, 1);
  pvm_send(parent, TAG_HOST);

  pvm_barrier(GROUP, n);
  int value = h;
  int rc = pvm_reduce(PvmSum, &value, 1, PVM_INT, TAG_REDUCE, GROUP, 0);
  if (rc < 0) pvm_perror("pvm_reduce");
  if (inst == 0) {
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&value, 1, 1);
    pvm_send(parent, TAG_SUM);
  }
  pvm_barrier(GROUP, n);
  pvm_lvgroup(GROUP);
  pvm_exit();
  return rc < 0;
}

int main(int argc, char **argv) {
  if (pvm_parent() != PvmNoParent) return child();
  if (argc < 2) {
    fprintf(stderr, "usage: %s HOST... (compute hosts in COP channel order)\n", argv[0]);
    return 2;
  }
  int n = argc - 1, rc = 0;
  if (pvm_mytid() < 0) {
    pvm_perror("pvm_mytid (is the virtual machine up?)");
    return 1;
  }
  const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  int tids[64];
  if (n > 64) return 2;
  for (int k = 0; k < n; k++) {
    if (pvm_spawn((char *)name, NULL, PvmTaskHost, argv[k + 1], 1, &tids[k]) != 1) {
      fprintf(stderr, "FAIL: pvm_spawn of %s on %s: error %d\n", name, argv[k + 1], tids[k]);
      pvm_exit();
      return 1;
    }
  }
  pvm_initsend(PvmDataDefault);
  pvm_pkint(&n, 1, 1);
  pvm_mcast(tids, n, TAG_HOST);

  struct timeval tmo = {TIMEOUT_S, 0};
  for (int k = 0; k < n; k++) {
    char host[256] = {0};
    int h = 0;
    if (pvm_trecv(tids[k], TAG_HOST, &tmo) <= 0) {
      fprintf(stderr, "FAIL: no answer from the task on %s\n", argv[k + 1]);
      rc = 1;
      continue;
    }
    pvm_upkstr(host);
    pvm_upkint(&h, 1, 1);
    printf("pvm task on %s: tid %x host number %d\n", host, tids[k], h);
    if (strcmp(host, argv[k + 1]) != 0 || h != k + 1) {
      printf("FAIL: want host %s with host number %d\n", argv[k + 1], k + 1);
      rc = 1;
    }
  }
  int sum = -1, want = n * (n + 1) / 2;
  if (pvm_trecv(-1, TAG_SUM, &tmo) <= 0) {
    printf("FAIL: no reduction result\n");
    rc = 1;
  } else {
    pvm_upkint(&sum, 1, 1);
  }
  printf("pvm reduce: tasks %d sum %d want %d\n", n, sum, want);
  if (sum != want) rc = 1;
  if (!rc) printf("OK\n");
  pvm_exit();
  return rc;
}
