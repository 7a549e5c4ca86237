/*
 * Halo exchange of a 3-d float64 N^3 array (N = 256) over the 4 ranks of MPI_COMM_WORLD, host
 * memory: each split axis periodic with halos of width 1 and 4, in three decompositions: slabs along
 * axis 0 (faces contiguous), slabs along axis 2 (faces strided: one run of w cells per row), and
 * 2 x 2 over axes 0 and 1 (faces, edges and corners). Timed in one run:
 *   gdap             gdap_halo_exchange over gdap_comm_from_mpi (its checks and agreement at each call);
 *   gdap persistent  gdap_exchange_start of an exchange bound once with gdap_halo_exchange_init;
 *   MPI datatypes    what a user writes by hand: one MPI_Type_create_subarray per region sent and
 *                    per region received (faces, edges, corners), MPI_Irecv and MPI_Isend straight
 *                    from and into the section, MPI_Waitall;
 *   raw MPI          MPI_Irecv and MPI_Isend of the same bytes to the same neighbours from contiguous
 *                    buffers, nothing packed or unpacked: the transport's floor.
 * Method: the methods take turns within each iteration; each call follows MPI_Barrier and counts as
 * the slowest rank's MPI_Wtime; the table gives the median of the repeats after WARMUP calls. The
 * padding is poisoned before gdap's first call and every cell of every section is then checked
 * against the periodic global array, and again after the hand-written exchange.
 *
 * Usage: mpirun -np 4 halo_mpi [repeats]   (bench/mpi/run.sh builds and runs it)
 */
#include <mpi.h>

#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>

#include "bench_mpi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 256, NRANKS = 4, WARMUP = 2, DEFAULT_REPEATS = 20, DIRECTIONS = 27, METHODS = 4 };

static const gdap_dtype kFloat64 = {GDAP_DTYPE_FLOAT, 64, 1};

typedef struct Case {
  const char* name;
  int grid[3]; /* ranks along each axis */
  int width;
} Case;

/* One rank's part of a case: its grid coordinates, its section and the regions it exchanges. */
typedef struct Rank {
  const Case* c;
  int coord[3];
  int64_t lo[3], n[3], pad[3], shape[3]; /* first owned index, owned cells, padding, section shape */
  gdap_map* map;
  gdap_halo* halo;
  gdap_array* array;
  gdap_exchange* bound;
  double* data;
  int count;                        /* directions exchanged */
  int peer[DIRECTIONS], tag_out[DIRECTIONS], tag_in[DIRECTIONS];
  MPI_Datatype out[DIRECTIONS], in[DIRECTIONS]; /* the regions sent and received, as subarrays */
  int64_t cells[DIRECTIONS];
  double *send, *recv; /* the raw floor's contiguous buffers */
} Rank;

static double global_value(int64_t i, int64_t j, int64_t k) { return (double)((i * N + j) * N + k); }

static int64_t wrap(int64_t i) { return (i % N + N) % N; }

/* The rank at grid coordinates coord + d (periodic). */
static int rank_at(const Case* c, const int coord[3], const int d[3]) {
  int r = 0;
  for (int a = 0; a < 3; ++a) r = r * c->grid[a] + (coord[a] + d[a] + c->grid[a]) % c->grid[a];
  return r;
}

static void make_dims(Rank* k, gdap_dim dims[3]) {
  for (int a = 0; a < 3; ++a) {
    const int P = k->c->grid[a];
    dims[a] = (gdap_dim)GDAP_DIM_INIT;
    k->lo[a] = k->coord[a] * (int64_t)N / P;
    k->n[a] = (k->coord[a] + 1) * (int64_t)N / P - k->lo[a];
    k->pad[a] = P > 1 ? k->c->width : 0;
    k->shape[a] = k->n[a] + 2 * k->pad[a];
    if (P == 1) {
      CK(gdap_dim_set_undistributed(&dims[a], N));
    } else {
      /* DAP 0.10: the N interior cells and pad cells of boundary padding at each end (filled from the
       * far end), halos of pad between ranks: size N + 2 pad, every start >= 0. */
      CK(gdap_dim_set_block(&dims[a], N + 2 * k->pad[a], P, k->coord[a], k->lo[a], k->lo[a] + k->n[a] + 2 * k->pad[a]));
      CK(gdap_dim_set_padding(&dims[a], k->pad[a], k->pad[a]));
      CK(gdap_dim_set_periodic(&dims[a], 1));
    }
  }
}

/* Interior cells hold the global array; padding cells hold `poison`. */
static void paint(Rank* k, double poison) {
  for (int64_t i = 0; i < k->shape[0]; ++i) {
    for (int64_t j = 0; j < k->shape[1]; ++j) {
      for (int64_t l = 0; l < k->shape[2]; ++l) {
        const int64_t at[3] = {i, j, l};
        int inside = 1;
        for (int a = 0; a < 3; ++a) inside = inside && at[a] >= k->pad[a] && at[a] < k->pad[a] + k->n[a];
        k->data[(i * k->shape[1] + j) * k->shape[2] + l] =
            inside ? global_value(k->lo[0] + i - k->pad[0], k->lo[1] + j - k->pad[1], k->lo[2] + l - k->pad[2]) : poison;
      }
    }
  }
}

/* Cells that differ from the periodic global array, on every rank together. */
static long long wrong_cells(const Rank* k) {
  long long wrong = 0;
  for (int64_t i = 0; i < k->shape[0]; ++i) {
    for (int64_t j = 0; j < k->shape[1]; ++j) {
      for (int64_t l = 0; l < k->shape[2]; ++l) {
        const double want = global_value(wrap(k->lo[0] + i - k->pad[0]), wrap(k->lo[1] + j - k->pad[1]),
                                         wrap(k->lo[2] + l - k->pad[2]));
        wrong += k->data[(i * k->shape[1] + j) * k->shape[2] + l] != want;
      }
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return wrong;
}

/* The region of direction d: along an axis where d is -1 or +1, the w owned cells next to that side
 * (send) or the padding beyond it (receive); elsewhere the owned cells. */
static MPI_Datatype region(const Rank* k, const int d[3], int receive, int64_t* cells) {
  int sizes[3], sub[3], start[3];
  *cells = 1;
  for (int a = 0; a < 3; ++a) {
    sizes[a] = (int)k->shape[a];
    sub[a] = d[a] == 0 ? (int)k->n[a] : (int)k->pad[a];
    if (d[a] == 0) start[a] = (int)k->pad[a];
    else if (d[a] < 0) start[a] = receive ? 0 : (int)k->pad[a];
    else start[a] = receive ? (int)(k->pad[a] + k->n[a]) : (int)k->n[a];
    *cells *= sub[a];
  }
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

/* Every direction that crosses only split axes: its peer, tags and regions. */
static void plan_directions(Rank* k) {
  k->count = 0;
  int64_t total = 0;
  for (int d0 = -1; d0 <= 1; ++d0) {
    for (int d1 = -1; d1 <= 1; ++d1) {
      for (int d2 = -1; d2 <= 1; ++d2) {
        const int d[3] = {d0, d1, d2}, back[3] = {-d0, -d1, -d2};
        int crosses = 0, splits = 1;
        for (int a = 0; a < 3; ++a) crosses |= d[a] != 0, splits &= d[a] == 0 || k->c->grid[a] > 1;
        if (!crosses || !splits) continue;
        const int i = k->count++;
        k->peer[i] = rank_at(k->c, k->coord, d);
        k->tag_out[i] = (d0 + 1) * 9 + (d1 + 1) * 3 + (d2 + 1); /* my d-side cells arrive at the peer's -d side */
        k->tag_in[i] = (back[0] + 1) * 9 + (back[1] + 1) * 3 + (back[2] + 1);
        k->out[i] = region(k, d, 0, &k->cells[i]);
        k->in[i] = region(k, d, 1, &k->cells[i]);
        total += k->cells[i];
      }
    }
  }
  k->send = malloc((size_t)total * sizeof(double));
  k->recv = malloc((size_t)total * sizeof(double));
  memset(k->send, 0, (size_t)total * sizeof(double));
}

static void run_datatypes(Rank* k) {
  MPI_Request req[2 * DIRECTIONS];
  for (int i = 0; i < k->count; ++i) MPI_Irecv(k->data, 1, k->in[i], k->peer[i], k->tag_in[i], MPI_COMM_WORLD, &req[i]);
  for (int i = 0; i < k->count; ++i) {
    MPI_Isend(k->data, 1, k->out[i], k->peer[i], k->tag_out[i], MPI_COMM_WORLD, &req[k->count + i]);
  }
  MPI_Waitall(2 * k->count, req, MPI_STATUSES_IGNORE);
}

static void run_raw(Rank* k) {
  MPI_Request req[2 * DIRECTIONS];
  int64_t at = 0;
  for (int i = 0; i < k->count; ++i) {
    MPI_Irecv(k->recv + at, (int)k->cells[i], MPI_DOUBLE, k->peer[i], k->tag_in[i], MPI_COMM_WORLD, &req[i]);
    MPI_Isend(k->send + at, (int)k->cells[i], MPI_DOUBLE, k->peer[i], k->tag_out[i], MPI_COMM_WORLD, &req[k->count + i]);
    at += k->cells[i];
  }
  MPI_Waitall(2 * k->count, req, MPI_STATUSES_IGNORE);
}

static void run_method(Rank* k, gdap_comm* comm, int m) {
  switch (m) {
    case 0: CK(gdap_halo_exchange(comm, k->halo, k->array)); break;
    case 1: CK(gdap_exchange_start(k->bound)); break;
    case 2: run_datatypes(k); break;
    default: run_raw(k); break;
  }
}

static void setup(Rank* k, const Case* c, gdap_comm* comm) {
  memset(k, 0, sizeof *k);
  k->c = c;
  for (int a = 2, rest = g_rank; a >= 0; --a) k->coord[a] = rest % c->grid[a], rest /= c->grid[a];
  gdap_dim dims[3];
  make_dims(k, dims);
  CK(gdap_map_create_collective(&k->map, comm, 3, dims));
  CK(gdap_halo_create(&k->halo, k->map, kFloat64, g_rank, NULL));
  CK(gdap_array_create(&k->array, kFloat64, (gdap_device){GDAP_DEVICE_CPU, 0}, dims, 3));
  CK(gdap_array_data((void**)&k->data, k->array));
  CK(gdap_halo_exchange_init(&k->bound, comm, k->halo, k->array));
  plan_directions(k);
}

static void teardown(Rank* k) {
  for (int i = 0; i < k->count; ++i) MPI_Type_free(&k->out[i]), MPI_Type_free(&k->in[i]);
  free(k->send);
  free(k->recv);
  CK(gdap_exchange_destroy(k->bound));
  CK(gdap_array_destroy(k->array));
  CK(gdap_halo_destroy(k->halo));
  CK(gdap_map_destroy(k->map));
}

int main(int argc, char** argv) {
  const int repeats = start_ranks(&argc, &argv, NRANKS, DEFAULT_REPEATS, 1);
  gdap_comm* comm = NULL;
  CK(gdap_comm_from_mpi_comm(&comm, MPI_COMM_WORLD));
  const Case cases[] = {
      {"slabs along axis 0 (contiguous faces)", {4, 1, 1}, 1}, {"slabs along axis 2 (strided faces)", {1, 1, 4}, 1},
      {"2 x 2 over axes 0, 1 (faces, edges, corners)", {2, 2, 1}, 1}, {"slabs along axis 0 (contiguous faces)", {4, 1, 1}, 4},
      {"slabs along axis 2 (strided faces)", {1, 1, 4}, 4}, {"2 x 2 over axes 0, 1 (faces, edges, corners)", {2, 2, 1}, 4},
  };
  if (g_rank == 0) {
    printf("### halo exchange, float64 %d^3 over %d MPI ranks (host memory), median of %d\n\n", N, NRANKS, repeats);
    printf("| decomposition | halo | cells sent by rank 0 | gdap_halo_exchange ms | gdap persistent ms | MPI datatypes ms | "
           "raw MPI ms (floor) | gdap / raw | persistent / raw | persistent / datatypes |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
  }
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
    Rank k;
    setup(&k, &cases[ci], comm);
    paint(&k, -1.0);
    CK(gdap_halo_exchange(comm, k.halo, k.array));
    long long wrong = wrong_cells(&k);
    paint(&k, -1.0);
    run_datatypes(&k);
    wrong += wrong_cells(&k);
    if (wrong != 0) {
      if (g_rank == 0) fprintf(stderr, "halo_mpi: %s, width %d: %lld cells wrong\n", cases[ci].name, cases[ci].width, wrong);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double* times = malloc(sizeof(double) * (size_t)repeats * METHODS);
    for (int it = 0; it < WARMUP + repeats; ++it) {
      for (int m = 0; m < METHODS; ++m) {
        const double t0 = start_timing();
        run_method(&k, comm, m);
        const double t = slowest_since(t0);
        if (it >= WARMUP) times[m * repeats + it - WARMUP] = t;
      }
    }
    double ms[METHODS];
    for (int m = 0; m < METHODS; ++m) ms[m] = 1e3 * median(times + m * repeats, repeats);
    long long sent = 0;
    for (int i = 0; i < k.count; ++i) sent += k.cells[i];
    if (g_rank == 0) {
      printf("| %s | %d | %lld | %.3f | %.3f | %.3f | %.3f | %.2fx | %.2fx | %.2fx |\n", cases[ci].name, cases[ci].width,
             sent, ms[0], ms[1], ms[2], ms[3], ms[0] / ms[3], ms[1] / ms[3], ms[1] / ms[2]);
      fflush(stdout);
    }
    free(times);
    teardown(&k);
  }
  CK(gdap_comm_destroy(comm));
  MPI_Finalize();
  return 0;
}
