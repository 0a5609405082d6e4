/* ARMCI collective across the cluster (ARMCI-MPI): every process does an
 * ARMCI_Rmw fetch-and-add of rank + 1 on one counter on process 0, then a global
 * sum (armci_msg_lgop) of the same values. Both must equal n(n+1)/2, and the
 * fetched old values must be distinct. Exit 0 when right. */
#include <armci.h>
#include <message.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  ARMCI_Init();
  int rank = armci_msg_me(), size = armci_msg_nproc();
  void **base = malloc((size_t)size * sizeof *base);
  if (!base || ARMCI_Malloc(base, sizeof(long)) != 0) {
    fprintf(stderr, "ARMCI_Malloc failed\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long *counter = base[rank];
  ARMCI_Access_begin(counter);
  *counter = 0;
  ARMCI_Access_end(counter);
  ARMCI_Barrier();

  long old = -1;
  ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, base[0], rank + 1, 0);
  ARMCI_Barrier();

  long final = 0;
  ARMCI_Get(base[0], &final, sizeof final, 0);
  long gsum = rank + 1;
  armci_msg_lgop(&gsum, 1, "+");

  /* Each fetch saw a distinct counter value: gather the olds to rank 0. */
  long *olds = rank == 0 ? calloc((size_t)size, sizeof *olds) : NULL;
  MPI_Gather(&old, 1, MPI_LONG, olds, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  long want = (long)size * (size + 1) / 2;
  int rc = 0;
  if (rank == 0) {
    int distinct = 1;
    for (int i = 0; i < size; i++)
      for (int j = 0; j < i; j++)
        if (olds[i] == olds[j]) distinct = 0;
    printf("armci rmw: processes %d counter %ld global sum %ld want %ld\n", size, final, gsum, want);
    if (final != want) { printf("FAIL: fetch-and-add counter\n"); rc = 1; }
    if (gsum != want) { printf("FAIL: global sum\n"); rc = 1; }
    if (!distinct) { printf("FAIL: two fetch-and-adds saw the same value\n"); rc = 1; }
    if (!rc) printf("OK\n");
    free(olds);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  ARMCI_Free(base[rank]);
  free(base);
  ARMCI_Finalize();
  MPI_Finalize();
  return rc;
}
