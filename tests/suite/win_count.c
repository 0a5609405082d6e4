/* A PMPI wrapper, preloaded into the mpi worker by win_count_test.sh: counts the RMA
 * windows each rank creates (MPI_Win_allocate, MPI_Win_create, MPI_Win_allocate_shared,
 * MPI_Win_create_dynamic) and at MPI_Finalize appends "windows N" to the file named by
 * COPBENCH_WIN_COUNT_FILE. The real calls are found with dlsym, so the library loads
 * harmlessly into processes that never call MPI (copbench, mpirun). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int windows = 0;

static void* real(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "win_count: %s not found\n", name);
    abort();
  }
  return f;
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  ++windows;
  return ((int (*)(MPI_Aint, int, MPI_Info, MPI_Comm, void*, MPI_Win*))real("PMPI_Win_allocate"))(size, disp_unit, info,
                                                                                                 comm, baseptr, win);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  ++windows;
  return ((int (*)(MPI_Aint, int, MPI_Info, MPI_Comm, void*, MPI_Win*))real("PMPI_Win_allocate_shared"))(
      size, disp_unit, info, comm, baseptr, win);
}

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  ++windows;
  return ((int (*)(void*, MPI_Aint, int, MPI_Info, MPI_Comm, MPI_Win*))real("PMPI_Win_create"))(base, size, disp_unit,
                                                                                               info, comm, win);
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  ++windows;
  return ((int (*)(MPI_Info, MPI_Comm, MPI_Win*))real("PMPI_Win_create_dynamic"))(info, comm, win);
}

int MPI_Finalize(void) {
  const char* path = getenv("COPBENCH_WIN_COUNT_FILE");
  if (path) {
    FILE* f = fopen(path, "a");
    if (f) {
      fprintf(f, "windows %d\n", windows);
      fclose(f);
    }
  }
  return ((int (*)(void))real("PMPI_Finalize"))();
}
