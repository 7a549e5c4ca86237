/*
 * Reduce-scatter of partial sums across the ranks of MPI_COMM_WORLD (4 ranks): every rank holds a
 * whole float64 ROWS x COLS array of its own partial sums (gdap_map_create_replicated's layout),
 * and the sums are wanted in row blocks (4 x 1), one block per rank. Timed in one run:
 *   gdap                 gdap_reduce_scatter over gdap_comm_from_mpi (its segmented buffer:
 *                        partial sums into one segment per rank, MPI_Reduce_scatter_block, copy-out);
 *   MPI_Reduce_scatter   MPI_Reduce_scatter_block on the same bytes, already in owner order: the
 *                        floor for this transport (no packing, no copy-out), in place on a copy
 *                        and out of place from the partial sums into a block of its own (what
 *                        gdap hands MPI when the source is in owner order and the result is C order);
 *   MPI_Allreduce        MPI_Allreduce of the whole array, then each rank's block copied out: what
 *                        gdap did before its segmented buffer, and what a user without a
 *                        reduce-scatter would write.
 * Method: the methods take turns within each iteration (the 2 shared cores drift alike for all);
 * each call follows MPI_Barrier and counts as the slowest rank's MPI_Wtime; the table gives the
 * median of the repeats after WARMUP calls. gdap's result is checked element by element once.
 *
 * Usage: mpirun -np 4 reduce_scatter_mpi [repeats]   (bench/mpi/run.sh builds and runs it)
 */
#include <mpi.h>

#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>

#include "bench_mpi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 2048, COLS = 4096, NRANKS = 4, WARMUP = 2, DEFAULT_REPEATS = 15 };

static const gdap_dtype kFloat64 = {GDAP_DTYPE_FLOAT, 64, 1};
/* Rank r's partial sum of element (i, j): small integers, so every sum is exact. */
static double partial(int r, int64_t i, int64_t j) { return (double)((i * 3 + j * 5 + r * 7) % 11); }

typedef struct Bench {
  gdap_comm* comm;
  gdap_map* replicated;
  gdap_array* source; /* the replicated partial sums, gdap-allocated */
  gdap_array* result; /* this rank's row block */
  double* partial;    /* the source's data */
  double* block;      /* the result's data */
  double* scratch;    /* the MPI methods' buffer: a copy of the partial sums */
  double* out;        /* the out-of-place MPI method's block */
  int64_t rows0, nrows;
} Bench;

static void run_gdap(Bench* b) { CK(gdap_reduce_scatter(b->comm, b->source, b->result, GDAP_REDUCE_SUM)); }

/* The MPI methods reduce a fresh copy in place (reducing the partial sums themselves would
 * compound them); the copy is made before the barrier, untimed. */
static void refresh(Bench* b) { memcpy(b->scratch, b->partial, (size_t)ROWS * COLS * sizeof(double)); }

static void run_reduce_scatter(Bench* b) {
  MPI_Reduce_scatter_block(MPI_IN_PLACE, b->scratch, (int)(b->nrows * COLS), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void run_reduce_scatter_out_of_place(Bench* b) {
  MPI_Reduce_scatter_block(b->partial, b->out, (int)(b->nrows * COLS), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void run_allreduce(Bench* b) {
  MPI_Allreduce(MPI_IN_PLACE, b->scratch, ROWS * COLS, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  memcpy(b->block, b->scratch + b->rows0 * COLS, (size_t)(b->nrows * COLS) * sizeof(double));
}

typedef struct Method {
  const char* name;
  void (*run)(Bench*);
  int fresh; /* needs refresh() before each call */
} Method;

static const Method kMethods[] = {
    {"gdap_reduce_scatter", run_gdap, 0},
    {"MPI_Reduce_scatter_block", run_reduce_scatter, 1},
    {"MPI_Reduce_scatter_block, out of place", run_reduce_scatter_out_of_place, 0},
    {"MPI_Allreduce + copy-out", run_allreduce, 1},
};
enum { NMETHODS = sizeof kMethods / sizeof kMethods[0] };

static double timed(const Method* m, Bench* b) {
  if (m->fresh) refresh(b);
  const double t0 = start_timing();
  m->run(b);
  return slowest_since(t0);
}

static void setup(Bench* b, int nranks) {
  CK(gdap_comm_from_mpi(&b->comm, (int)MPI_Comm_c2f(MPI_COMM_WORLD)));
  const int64_t shape[2] = {ROWS, COLS};
  CK(gdap_map_create_replicated(&b->replicated, nranks, 2, shape));
  gdap_dim src[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT}, dst[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};
  for (int i = 0; i < 2; ++i) CK(gdap_map_dim(&src[i], b->replicated, g_rank, i));
  b->rows0 = (int64_t)ROWS * g_rank / nranks;
  b->nrows = (int64_t)ROWS * (g_rank + 1) / nranks - b->rows0;
  CK(gdap_dim_set_block(&dst[0], ROWS, nranks, g_rank, b->rows0, b->rows0 + b->nrows));
  CK(gdap_dim_set_undistributed(&dst[1], COLS));
  const gdap_device cpu = {GDAP_DEVICE_CPU, 0};
  CK(gdap_array_create(&b->source, kFloat64, cpu, src, 2));
  CK(gdap_array_create(&b->result, kFloat64, cpu, dst, 2));
  CK(gdap_array_data((void**)&b->partial, b->source));
  CK(gdap_array_data((void**)&b->block, b->result));
  /* The replicated layout holds the rows in the order of its unstructured indices, 0 .. ROWS-1. */
  for (int64_t i = 0; i < ROWS; ++i)
    for (int64_t j = 0; j < COLS; ++j) b->partial[i * COLS + j] = partial(g_rank, i, j);
  b->scratch = malloc((size_t)ROWS * COLS * sizeof(double));
  b->out = malloc((size_t)(b->nrows * COLS) * sizeof(double));
  if (!b->scratch || !b->out) MPI_Abort(MPI_COMM_WORLD, 1);
}

/* gdap's result, every element against the sum of every rank's partial. */
static void check(Bench* b, int nranks) {
  memset(b->block, 0, (size_t)(b->nrows * COLS) * sizeof(double));
  timed(&kMethods[0], b);
  long long bad = 0;
  for (int64_t i = 0; i < b->nrows; ++i) {
    for (int64_t j = 0; j < COLS; ++j) {
      double want = 0;
      for (int r = 0; r < nranks; ++r) want += partial(r, b->rows0 + i, j);
      bad += b->block[i * COLS + j] != want;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (bad != 0) {
    if (g_rank == 0) fprintf(stderr, "gdap_reduce_scatter: %lld wrong elements\n", bad);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char** argv) {
  const int repeats = start_ranks(&argc, &argv, NRANKS, DEFAULT_REPEATS, 1);
  Bench b;
  memset(&b, 0, sizeof b);
  setup(&b, NRANKS);
  check(&b, NRANKS);
  double* t = malloc((size_t)NMETHODS * (size_t)repeats * sizeof(double));
  if (!t) MPI_Abort(MPI_COMM_WORLD, 1);
  for (int k = 0; k < WARMUP + repeats; ++k) {
    for (int m = 0; m < NMETHODS; ++m) {
      const double s = timed(&kMethods[m], &b);
      if (k >= WARMUP) t[m * repeats + (k - WARMUP)] = s;
    }
  }
  if (g_rank == 0) {
    const double bytes = (double)ROWS * COLS * sizeof(double);
    printf("\n### reduce-scatter of %d x %d float64 partial sums (%.0f MiB per rank) into row blocks, %d ranks\n\n",
           ROWS, COLS, bytes / (1 << 20), NRANKS);
    printf("| method | median ms | / MPI_Reduce_scatter_block |\n|---|---|---|\n");
    double med[NMETHODS];
    for (int m = 0; m < NMETHODS; ++m) med[m] = median(t + m * repeats, repeats) * 1e3;
    for (int m = 0; m < NMETHODS; ++m) printf("| %s | %.2f | %.2f |\n", kMethods[m].name, med[m], med[m] / med[1]);
    printf("\nmedian of %d after %d warm-ups; gdap's result checked element by element.\n", repeats, WARMUP);
  }
  free(t);
  free(b.scratch);
  free(b.out);
  gdap_array_destroy(b.source);
  gdap_array_destroy(b.result);
  gdap_map_destroy(b.replicated);
  gdap_comm_destroy(b.comm);
  MPI_Finalize();
  return 0;
}
