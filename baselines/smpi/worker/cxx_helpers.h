// Force-included after smpicxx's own smpi/smpi_helpers.h (worker/CMakeLists.txt).
// smpi_helpers.h defines `exit(x)` as a function-like macro so that a C rank's exit()
// ends only that rank; in C++ it also rewrites every member named exit (CLI11's
// App::exit) and breaks the headers. copbench's ranks leave by returning from main, and
// a worker that fails aborts the whole job (MPI_Abort), so the real exit is right here.
#undef exit
