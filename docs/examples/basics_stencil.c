/* The stencil path over MPI, in order: a padded layout (one cell of halo), each rank's section,
 * the halo exchange, a Jacobi step on the owned cells, and the all-reduce of the residual.
 * u = i^2 + j^2 makes every interior cell of a 5-point Jacobi step grow by exactly 1, so the
 * residual must be the number of interior cells: a cell that read an unfilled halo would differ.
 * Build: mpicc basics_stencil.c $(pkg-config --cflags --libs gdap); run: mpirun -np 4 ./a.out */
#include <mpi.h>
#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>
#include <math.h>
#include <stdio.h>

#define CHECK(call) do { gdap_status s_ = (call); if (s_ != GDAP_SUCCESS) { \
  fprintf(stderr, "%s: %s\n", gdap_status_string(s_), gdap_last_error()); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

enum { ROWS = 12, COLS = 10 };

int main(int argc, char** argv) {
  int me, nranks;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  gdap_comm* comm = NULL;
  CHECK(gdap_comm_from_mpi_comm(&comm, MPI_COMM_WORLD));
  gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
  gdap_device cpu = {GDAP_DEVICE_CPU, 0};

  /* 1. The padded layout: a grid for nranks, one cell of halo towards each neighbour. */
  int64_t grid[2] = {0, 0};                                /* 0: free, as MPI_Dims_create */
  CHECK(gdap_grid_balance(grid, 2, nranks));
  gdap_axis_layout axes[2] = {GDAP_AXIS_LAYOUT_INIT, GDAP_AXIS_LAYOUT_INIT};
  axes[0].size = ROWS; axes[0].grid_size = grid[0]; axes[0].halo = 1;
  axes[1].size = COLS; axes[1].grid_size = grid[1]; axes[1].halo = 1;
  gdap_map* map = NULL;
  CHECK(gdap_map_create_grid(&map, 2, axes));

  /* 2. This rank's section (halo included) and a second one for the new values. */
  gdap_dim dims[2];
  CHECK(gdap_map_dim(&dims[0], map, me, 0));
  CHECK(gdap_map_dim(&dims[1], map, me, 1));
  gdap_array *u = NULL, *next = NULL;
  CHECK(gdap_array_create(&u, f64, cpu, dims, 2));
  CHECK(gdap_array_create(&next, f64, cpu, dims, 2));
  double *a = NULL, *b = NULL;
  CHECK(gdap_array_data((void**)&a, u));
  CHECK(gdap_array_data((void**)&b, next));
  const int64_t nr = dims[0].stop - dims[0].start, nc = dims[1].stop - dims[1].start;  /* buffer shape */
  /* Owned cells are local [padding[0], extent - padding[1]); local i is global start + i. */
  for (int64_t i = dims[0].padding[0]; i < nr - dims[0].padding[1]; ++i)
    for (int64_t j = dims[1].padding[0]; j < nc - dims[1].padding[1]; ++j) {
      const double gi = (double)(dims[0].start + i), gj = (double)(dims[1].start + j);
      a[i * nc + j] = gi * gi + gj * gj;
    }

  /* 3. The halo exchange fills the padding from the neighbours' owned cells. */
  gdap_halo* halo = NULL;
  CHECK(gdap_halo_create(&halo, map, f64, me, NULL));
  CHECK(gdap_halo_exchange(comm, halo, u));

  /* 4. One Jacobi step on the owned cells inside the global boundary, and this rank's residual. */
  double residual = 0.0;
  for (int64_t i = dims[0].padding[0]; i < nr - dims[0].padding[1]; ++i)
    for (int64_t j = dims[1].padding[0]; j < nc - dims[1].padding[1]; ++j) {
      const int64_t gi = dims[0].start + i, gj = dims[1].start + j;
      if (gi == 0 || gi == ROWS - 1 || gj == 0 || gj == COLS - 1) continue;
      b[i * nc + j] = 0.25 * (a[(i - 1) * nc + j] + a[(i + 1) * nc + j] + a[i * nc + j - 1] + a[i * nc + j + 1]);
      residual += fabs(b[i * nc + j] - a[i * nc + j]);
    }

  /* 5. The all-reduce of the residual: a one-element section every rank holds whole. */
  gdap_dim whole = GDAP_DIM_INIT;
  gdap_array* scalar = NULL;
  CHECK(gdap_dim_set_undistributed(&whole, 1));
  CHECK(gdap_array_wrap(&scalar, &residual, f64, cpu, NULL, &whole, 1));
  CHECK(gdap_allreduce(comm, scalar, GDAP_REDUCE_SUM));
  if (me == 0)
    printf("stencil on %lld x %lld ranks: residual %g, interior cells %d: %s\n", (long long)grid[0],
           (long long)grid[1], residual, (ROWS - 2) * (COLS - 2), residual == (ROWS - 2) * (COLS - 2) ? "ok" : "WRONG");

  gdap_array_destroy(scalar);
  gdap_halo_destroy(halo);
  gdap_array_destroy(next);
  gdap_array_destroy(u);
  gdap_map_destroy(map);
  gdap_comm_destroy(comm);
  MPI_Finalize();
  return 0;
}
