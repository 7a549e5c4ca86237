/* Built against the installed package's gdap::mpi target: gdap_mpi.h's MPI_Comm helper compiles
 * with MPI's flags from the package, and a gdap communicator wraps MPI_COMM_WORLD (a singleton
 * MPI process, started without mpirun). */
#include <mpi.h>

#include <gdap/gdap_mpi.h>

#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  gdap_comm* comm = NULL;
  int64_t size = 0;
  int ok = gdap_comm_from_mpi_comm(&comm, MPI_COMM_WORLD) == GDAP_SUCCESS && gdap_comm_size(&size, comm) == GDAP_SUCCESS;
  if (ok) printf("mpi consumer: a gdap communicator over MPI_COMM_WORLD of %lld rank\n", (long long)size);
  else fprintf(stderr, "mpi consumer: %s\n", gdap_last_error());
  gdap_comm_destroy(comm);
  MPI_Finalize();
  return ok ? 0 : 1;
}
