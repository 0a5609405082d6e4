/* MPI collective across the cluster: every rank contributes rank + 1 to an
 * MPI_Allreduce sum; every rank checks n(n+1)/2. Rank 0 also checks that the
 * ranks ran on distinct hosts and prints them in rank order. Exit 0 when right. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, len = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  MPI_Get_processor_name(name, &len);

  long mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  long want = (long)size * (size + 1) / 2;
  int ok = sum == want, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);

  static char names[1024][MPI_MAX_PROCESSOR_NAME];
  if (size > 1024) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  int rc = 0;
  if (rank == 0) {
    int distinct = 1;
    printf("mpi allreduce: ranks %d sum %ld want %ld hosts", size, sum, want);
    for (int i = 0; i < size; i++) {
      printf(" %s", names[i]);
      for (int j = 0; j < i; j++)
        if (strcmp(names[i], names[j]) == 0) distinct = 0;
    }
    printf("\n");
    if (!all_ok) { printf("FAIL: wrong sum on some rank\n"); rc = 1; }
    if (!distinct) { printf("FAIL: two ranks on one host\n"); rc = 1; }
    if (!rc) printf("OK\n");
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
