/* All-reduce of one double over MPI: a scalar is a one-element section that every rank holds
 * whole (the protocol's empty dictionary {}, made with gdap_dim_set_undistributed), wrapped
 * around the variable itself and summed in place.
 * Build: mpicc basics_allreduce.c $(pkg-config --cflags --libs gdap); run: mpirun -np 2 ./a.out */
#include <mpi.h>
#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>
#include <stdio.h>

#define CHECK(call) do { gdap_status s_ = (call); if (s_ != GDAP_SUCCESS) { \
  fprintf(stderr, "%s: %s\n", gdap_status_string(s_), gdap_last_error()); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

/* Collective: *value becomes the sum of every rank's *value. */
static gdap_status sum_over_ranks(gdap_comm* comm, double* value) {
  gdap_dim whole = GDAP_DIM_INIT;
  gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
  gdap_device cpu = {GDAP_DEVICE_CPU, 0};
  gdap_array* scalar = NULL;
  gdap_status s = gdap_dim_set_undistributed(&whole, 1);           /* {} of extent 1 */
  if (s == GDAP_SUCCESS) s = gdap_array_wrap(&scalar, value, f64, cpu, NULL, &whole, 1);
  if (s == GDAP_SUCCESS) s = gdap_allreduce(comm, scalar, GDAP_REDUCE_SUM);
  gdap_array_destroy(scalar);                                      /* value itself stays yours */
  return s;
}

int main(int argc, char** argv) {
  int rank, nranks;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  gdap_comm* comm = NULL;
  CHECK(gdap_comm_from_mpi_comm(&comm, MPI_COMM_WORLD));           /* gdap duplicates the MPI comm */

  double value = rank + 1.0;
  CHECK(sum_over_ranks(comm, &value));
  printf("rank %d: 1 + ... + %d = %g\n", rank, nranks, value);

  gdap_comm_destroy(comm);
  MPI_Finalize();
  return 0;
}
