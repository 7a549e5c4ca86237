/*
 * What the MPI harnesses share: their start (MPI, this rank, the repeats), a check of every gdap
 * call that aborts the job with gdap's message, the slowest rank's time of a call, and the median of a list of
 * times (sorted in place).
 */
#ifndef GDAP_BENCH_MPI_H
#define GDAP_BENCH_MPI_H

#include <mpi.h>

#include <gdap/gdap.h>

#include <stdio.h>
#include <stdlib.h>

static int g_rank;

#define CK(call)                                                                                     \
  do {                                                                                               \
    gdap_status s_ = (call);                                                                         \
    if (s_ != GDAP_SUCCESS) {                                                                        \
      fprintf(stderr, "rank %d: %s:%d: %s: %s: %s\n", g_rank, __FILE__, __LINE__, #call,             \
              gdap_status_string(s_), gdap_last_error());                                            \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                  \
    }                                                                                                \
  } while (0)

/* MPI_Init, this rank (g_rank), and the repeats asked for (argv[1], else `default_repeats`); aborts
 * the job unless it has `nranks` ranks and the repeats are at least `min_repeats`. */
static int start_ranks(int* argc, char*** argv, int nranks, int default_repeats, int min_repeats) {
  int size = 0;
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != nranks) {
    if (g_rank == 0) fprintf(stderr, "%s: run with %d ranks (mpirun -np %d), not %d\n", (*argv)[0], nranks, nranks, size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int repeats = *argc > 1 ? atoi((*argv)[1]) : default_repeats;
  if (repeats < min_repeats) {
    if (g_rank == 0) fprintf(stderr, "%s: at least %d repeats, not %d\n", (*argv)[0], min_repeats, repeats);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return repeats;
}

/* A timed call: every rank starts after a barrier, and the call counts as the slowest rank's. */
static double start_timing(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Wtime();
}

static double slowest_since(double t0) {
  double t = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
