/*
 * Redistribution of a float64 8192 x 8192 matrix across the ranks of MPI_COMM_WORLD (4 ranks),
 * timed in one run for gdap (gdap_redistribute over gdap_comm_from_mpi), ScaLAPACK's pdgemr2d on
 * the same distributions, COSTA's costa::transform (when built with GDAP_BENCH_COSTA: see
 * costa_peer.h), and a raw MPI_Alltoall of the same bytes per rank (no packing: the floor a
 * redistribution can hope for on this transport). bench/mpi/run.sh builds and runs it.
 *
 * Cases 1-3 are gdap's own; cases 4-5 are COSTA's published benchmark shapes (square matrices,
 * 2-d block-cyclic 128 x 128 blocks to 36 x 36 blocks, and to the same layout) on the 2 x 2 grid
 * that 4 ranks give.
 *
 * Method. Every case plans once, then each method runs WARMUP + repeats times; the methods take
 * turns within each iteration, so a drift of the machine's load (2 shared cores) hits all alike.
 * Each timed call is preceded by MPI_Barrier, timed with MPI_Wtime on every rank, and counts as
 * the slowest rank's time (MPI_Allreduce MAX); the table gives the median over the repeats.
 * The first warm-up of every method writes into a zeroed destination that is then checked
 * element by element against value = global_row * 8192 + global_col. The table gives the
 * median and the minimum of each method's times.
 *
 * The all-to-all floor moves the bytes gdap's plan moves: each rank sends its busiest peer's
 * share to every rank (its own share is MPI's local copy), and where a rank keeps more than that
 * share (case 5 keeps everything), memcpy copies the rest, as any redistribution must.
 *
 * gdap's MPI executor picks its exchange from GDAP_MPI_EXCHANGE (cma, the default on one node:
 * single-copy reads between the ranks; p2p; alltoallv; datatype); each is timed as its own
 * method: the first table gives p2p and cma beside the others, the second compares them all.
 * "gdap (cma, heap packs)" is cma with its senders' pack buffers on the heap (GDAP_CMA_PACK_TO=heap:
 * the receivers read them with process_vm_readv, the way before 2026-11-28) instead of in
 * shared-memory segments the receivers map (the default). "gdap (cma, shm)" is cma again from source sections made with gdap_array_create_shm (the same
 * data, in POSIX shared memory): its receivers map their senders' segments and copy with plain
 * loads, one pass over the bytes; every other method keeps its malloc'd buffers. It runs on a
 * communicator of its own (another gdap_comm over MPI_COMM_WORLD): what the cma exchange keeps per
 * communicator (plans, pack buffers, mappings) is kept for one source, as a user's would be,
 * instead of being rebuilt on every call as the methods take turns with two sources.
 *
 * Usage: mpirun -np 4 redistribute_mpi [repeats [case]]
 *   repeats: timed calls per method (default 15, at least 10); case: 1 to 5 runs only that
 *   case (to profile one), default all.
 */
#define _POSIX_C_SOURCE 200112L /* setenv */

#include <mpi.h>

#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>

#include "bench_mpi.h"
#ifdef GDAP_BENCH_COSTA
#include "costa_peer.h"
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 8192, NRANKS = 4, WARMUP = 2, MIN_REPEATS = 10, DEFAULT_REPEATS = 15 };

static const gdap_dtype kFloat64 = {GDAP_DTYPE_FLOAT, 64, 1};

/* BLACS (C interface) and ScaLAPACK (Fortran interface): Debian ships no header for them. */
void Cblacs_pinfo(int* rank, int* nprocs);
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int keep_mpi);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc,
               const int* icsrc, const int* context, const int* lld, int* info);
void pdgemr2d_(const int* m, const int* n, const double* a, const int* ia, const int* ja, const int* desca,
               double* b, const int* ib, const int* jb, const int* descb, const int* context);

static void die(const char* what) {
  fprintf(stderr, "rank %d: %s\n", g_rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ---------------------------------------------------------------------------------------------
 * Distributions
 * ------------------------------------------------------------------------------------------- */

/* One dimension of a distribution: contiguous blocks ('b') or blocks of `block` dealt round-robin
 * ('c'; block 1 is plain cyclic), over `grid` processes. */
typedef struct Axis {
  char kind;
  int grid;
  int block;
} Axis;

typedef struct Layout {
  Axis axis[2]; /* gdap order: [0] rows, [1] columns */
} Layout;

typedef struct Case {
  const char* name;
  Layout from, to;
} Case;

static const Case kCases[] = {
    {"block-cyclic 64x64 (2x2) -> block-cyclic 128x128 (2x2)",
     {{{'c', 2, 64}, {'c', 2, 64}}}, {{{'c', 2, 128}, {'c', 2, 128}}}},
    {"row blocks (4x1) -> column blocks (1x4)", {{{'b', 4, 0}, {'b', 1, 0}}}, {{{'b', 1, 0}, {'b', 4, 0}}}},
    {"cyclic rows (4x1) -> row blocks (4x1)", {{{'c', 4, 1}, {'b', 1, 0}}}, {{{'b', 4, 0}, {'b', 1, 0}}}},
    {"COSTA's: block-cyclic 128x128 (2x2) -> block-cyclic 36x36 (2x2)",
     {{{'c', 2, 128}, {'c', 2, 128}}}, {{{'c', 2, 36}, {'c', 2, 36}}}},
    {"COSTA's: block-cyclic 128x128 (2x2) -> the same layout",
     {{{'c', 2, 128}, {'c', 2, 128}}}, {{{'c', 2, 128}, {'c', 2, 128}}}},
};
enum { NCASES = sizeof kCases / sizeof kCases[0] };

/* ScaLAPACK only knows block-cyclic: an even block distribution is block-cyclic with one block
 * per process. */
static int scalapack_block(Axis a) { return a.kind == 'b' ? N / a.grid : a.block; }

static gdap_dim gdap_axis(Axis a, int coord) {
  gdap_dim d = GDAP_DIM_INIT;
  if (a.kind == 'b') CK(gdap_dim_set_block(&d, N, a.grid, coord, (int64_t)coord * N / a.grid, (int64_t)(coord + 1) * N / a.grid));
  /* Plain cyclic leaves the optional block_size key out (it defaults to 1). */
  else CK(gdap_dim_set_cyclic(&d, N, a.grid, coord, (int64_t)coord * a.block, a.block == 1 ? 0 : a.block));
  return d;
}

/* This rank's view of one distribution, as gdap and as ScaLAPACK see it. */
typedef struct Side {
  gdap_dim dims[2];
  gdap_map* map;
  int64_t shape[2]; /* local extents, C order */
  int context;      /* BLACS grid */
  int nprow, npcol; /* its extents (of the transposed matrix, see scalapack_side) */
  int desc[9];      /* ScaLAPACK descriptor of the same local buffer */
} Side;

/*
 * ScaLAPACK is column-major, gdap's sections are C order (row-major). A C-order r x c buffer is
 * byte for byte the column-major c x r buffer of the transpose, so ScaLAPACK is told about the
 * transposed matrix B = A^T: gdap rows (dimension 0) are ScaLAPACK columns, gdap columns
 * (dimension 1) are ScaLAPACK rows, and the local leading dimension is gdap's local column count.
 * Then B(j, i) = A[i][j] sits at local offset li * lld + lj in both views, and no element moves
 * differently. The process grids transpose too: gdap numbers ranks in C order over (row coord,
 * column coord), rank = r0 * P1 + r1; in the BLACS grid of B, r1 is the process row and r0 the
 * process column, so rank = pcol * nprow + prow: a column-major ("C") BLACS grid with
 * nprow = P1, npcol = P0.
 */
static void scalapack_side(Side* s, const Layout* l, int system_context) {
  const int nprow = l->axis[1].grid, npcol = l->axis[0].grid;
  s->context = system_context;
  s->nprow = nprow;
  s->npcol = npcol;
  Cblacs_gridinit(&s->context, "C", nprow, npcol);
  int rows, cols, myrow, mycol;
  Cblacs_gridinfo(s->context, &rows, &cols, &myrow, &mycol);
  if (myrow != (int)s->dims[1].proc_grid_rank || mycol != (int)s->dims[0].proc_grid_rank)
    die("the BLACS grid does not place this rank where gdap's grid does");
  const int m = N, n = N, mb = scalapack_block(l->axis[1]), nb = scalapack_block(l->axis[0]), zero = 0;
  if (numroc_(&m, &mb, &myrow, &zero, &nprow) != s->shape[1] || numroc_(&n, &nb, &mycol, &zero, &npcol) != s->shape[0])
    die("ScaLAPACK's local extents differ from gdap's");
  const int lld = s->shape[1] > 1 ? (int)s->shape[1] : 1;
  int info = 0;
  descinit_(s->desc, &m, &n, &mb, &nb, &zero, &zero, &s->context, &lld, &info);
  if (info != 0) die("descinit failed");
}

static void side_init(Side* s, const Layout* l, gdap_comm* comm, int rank, int system_context) {
  const int coord[2] = {rank / l->axis[1].grid, rank % l->axis[1].grid}; /* C order, as gdap */
  for (int i = 0; i < 2; ++i) {
    s->dims[i] = gdap_axis(l->axis[i], coord[i]);
    CK(gdap_dim_local_extent(&s->shape[i], &s->dims[i]));
  }
  CK(gdap_map_create_collective(&s->map, comm, 2, s->dims));
  scalapack_side(s, l, system_context);
}

static void side_free(Side* s) {
  gdap_map_destroy(s->map);
  Cblacs_gridexit(s->context);
}

/* ---------------------------------------------------------------------------------------------
 * Data: fill and check by global index
 * ------------------------------------------------------------------------------------------- */

static double expected(int64_t row, int64_t col) { return (double)(row * N + col); }

/* Global index of each local index along one dimension (so the loops below stay O(1) per element). */
static int64_t* global_indices(const gdap_dim* d, int64_t extent) {
  int64_t* g = malloc((size_t)(extent > 0 ? extent : 1) * sizeof *g);
  if (!g) die("out of memory");
  for (int64_t l = 0; l < extent; ++l) CK(gdap_dim_local_to_global(&g[l], d, l));
  return g;
}

static void fill(double* data, const Side* s) {
  int64_t* rows = global_indices(&s->dims[0], s->shape[0]);
  int64_t* cols = global_indices(&s->dims[1], s->shape[1]);
  for (int64_t i = 0; i < s->shape[0]; ++i)
    for (int64_t j = 0; j < s->shape[1]; ++j) data[i * s->shape[1] + j] = expected(rows[i], cols[j]);
  free(rows);
  free(cols);
}

/* Number of wrong elements over all ranks; each rank reports its first one. */
static long long mismatches(const double* data, const Side* s, const char* method) {
  int64_t* rows = global_indices(&s->dims[0], s->shape[0]);
  int64_t* cols = global_indices(&s->dims[1], s->shape[1]);
  long long bad = 0;
  for (int64_t i = 0; i < s->shape[0]; ++i) {
    for (int64_t j = 0; j < s->shape[1]; ++j) {
      const double got = data[i * s->shape[1] + j], want = expected(rows[i], cols[j]);
      if (got != want && bad++ == 0)
        fprintf(stderr, "rank %d, %s: local (%lld, %lld) = global (%lld, %lld) holds %.0f, not %.0f\n", g_rank,
                method, (long long)i, (long long)j, (long long)rows[i], (long long)cols[j], got, want);
    }
  }
  free(rows);
  free(cols);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return bad;
}

/* ---------------------------------------------------------------------------------------------
 * The methods
 * ------------------------------------------------------------------------------------------- */

typedef struct Bench {
  gdap_comm* comm;
  gdap_comm* shm_comm; /* the shm method's own: see the top */
  Side from, to;
  gdap_plan* plan;
  gdap_plan_stats stats;
  gdap_array *src, *dst;
  double *src_data, *dst_data; /* the arrays' sections, shared with pdgemr2d */
  gdap_array* shm_src;         /* the same source values in a shared-memory segment */
  int all_context;             /* a BLACS grid holding every rank, as pdgemr2d asks */
  int a2a_count;               /* MPI_Alltoall doubles per peer */
  double *a2a_send, *a2a_recv;
  int64_t keep_extra;          /* doubles this rank keeps beyond its all-to-all share */
  double *keep_from, *keep_to; /* memcpy'd by the floor */
#ifdef GDAP_BENCH_COSTA
  costa_peer* costa;
#endif
} Bench;

typedef struct Method {
  const char* name;
  const char* exchange; /* GDAP_MPI_EXCHANGE for gdap's methods, NULL for the others */
  const char* pack_to;  /* GDAP_CMA_PACK_TO for gdap's methods (segment: the default) */
  void (*run)(Bench*); /* NULL: not built in (COSTA without GDAP_BENCH_COSTA) */
  int checked;         /* writes the destination section, so its result can be verified */
} Method;

static void run_gdap(Bench* b) { CK(gdap_redistribute(b->comm, b->plan, b->src, b->dst)); }

static void run_gdap_shm(Bench* b) { CK(gdap_redistribute(b->shm_comm, b->plan, b->shm_src, b->dst)); }

static void run_pdgemr2d(Bench* b) {
  const int m = N, n = N, one = 1;
  pdgemr2d_(&m, &n, b->src_data, &one, &one, b->from.desc, b->dst_data, &one, &one, b->to.desc, &b->all_context);
}

#ifdef GDAP_BENCH_COSTA
static void run_costa(Bench* b) {
  char error[256];
  if (costa_peer_run(b->costa, MPI_COMM_WORLD, error, (int)sizeof error) != 0) die(error);
}
#else
#define run_costa NULL
#endif

static void run_alltoall(Bench* b) {
  if (MPI_Alltoall(b->a2a_send, b->a2a_count, MPI_DOUBLE, b->a2a_recv, b->a2a_count, MPI_DOUBLE, MPI_COMM_WORLD) != MPI_SUCCESS)
    die("MPI_Alltoall failed");
  if (b->keep_extra > 0) memcpy(b->keep_to, b->keep_from, (size_t)b->keep_extra * sizeof(double));
}

static const Method kMethods[] = {
    {"gdap", "p2p", "segment", run_gdap, 1},
    {"gdap alltoallv", "alltoallv", "segment", run_gdap, 1},
    {"gdap datatype", "datatype", "segment", run_gdap, 1},
    {"gdap (cma)", "cma", "segment", run_gdap, 1},
    {"gdap (cma, heap packs)", "cma", "heap", run_gdap, 1},
    {"gdap (cma, shm)", "cma", "segment", run_gdap_shm, 1},
    {"pdgemr2d", NULL, NULL, run_pdgemr2d, 1},
    {"COSTA", NULL, NULL, run_costa, 1},
    {"MPI_Alltoall", NULL, NULL, run_alltoall, 0},
};
enum {
  NMETHODS = sizeof kMethods / sizeof kMethods[0],
  GDAP_P2P = 0, GDAP_ALLTOALLV, GDAP_DATATYPE, GDAP_CMA, GDAP_CMA_HEAP, GDAP_CMA_SHM, PDGEMR2D, COSTA, ALLTOALL
};

/* One call, as the slowest rank saw it (seconds). */
static double timed(const Method* m, Bench* b) {
  if (m->exchange && setenv("GDAP_MPI_EXCHANGE", m->exchange, 1) != 0) die("setenv failed");
  if (m->pack_to && setenv("GDAP_CMA_PACK_TO", m->pack_to, 1) != 0) die("setenv failed");
  const double t0 = start_timing();
  m->run(b);
  return slowest_since(t0);
}

static void verify(const Method* m, Bench* b) {
  memset(b->dst_data, 0, (size_t)(b->to.shape[0] * b->to.shape[1]) * sizeof(double));
  timed(m, b);
  const long long bad = mismatches(b->dst_data, &b->to, m->name);
  if (bad != 0) {
    if (g_rank == 0) fprintf(stderr, "%s: %lld wrong elements\n", m->name, bad);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

/* ---------------------------------------------------------------------------------------------
 * One case
 * ------------------------------------------------------------------------------------------- */

static double* alloc_touched(int64_t count) {
  double* p = malloc((size_t)(count > 0 ? count : 1) * sizeof *p);
  if (!p) die("out of memory");
  for (int64_t k = 0; k < count; ++k) p[k] = (double)k; /* fault the pages in before timing */
  return p;
}

static void bench_init(Bench* b, const Case* c, gdap_comm* comm, gdap_comm* shm_comm, int system_context) {
  memset(b, 0, sizeof *b);
  b->comm = comm;
  b->shm_comm = shm_comm;
  side_init(&b->from, &c->from, comm, g_rank, system_context);
  side_init(&b->to, &c->to, comm, g_rank, system_context);
  b->all_context = system_context;
  Cblacs_gridinit(&b->all_context, "R", 1, NRANKS);

  CK(gdap_plan_create(&b->plan, b->from.map, b->to.map, kFloat64, g_rank));
  b->stats.struct_size = sizeof b->stats;
  CK(gdap_plan_stats_get(&b->stats, b->plan));

  const gdap_device host = {GDAP_DEVICE_CPU, 0};
  CK(gdap_array_create(&b->src, kFloat64, host, b->from.dims, 2));
  CK(gdap_array_create(&b->dst, kFloat64, host, b->to.dims, 2));
  CK(gdap_array_data((void**)&b->src_data, b->src));
  CK(gdap_array_data((void**)&b->dst_data, b->dst));
  fill(b->src_data, &b->from);
  double* shm_data = NULL;
  CK(gdap_array_create_shm(&b->shm_src, NULL, kFloat64, b->from.dims, 2));
  CK(gdap_array_data((void**)&shm_data, b->shm_src));
  fill(shm_data, &b->from);

  /* The same bytes to other ranks as gdap sends, split evenly; the piece each rank keeps is its
   * share of the local copy, as in the redistribution. The busiest rank sets the count. */
  long long per_peer = b->stats.send_bytes / (long long)sizeof(double) / (NRANKS - 1);
  MPI_Allreduce(MPI_IN_PLACE, &per_peer, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (per_peer > INT32_MAX) die("alltoall count exceeds an int");
  b->a2a_count = (int)per_peer;
  b->a2a_send = alloc_touched((int64_t)per_peer * NRANKS);
  b->a2a_recv = alloc_touched((int64_t)per_peer * NRANKS);
  const int64_t kept = b->stats.local_bytes / (int64_t)sizeof(double);
  b->keep_extra = kept > per_peer ? kept - per_peer : 0;
  b->keep_from = alloc_touched(b->keep_extra);
  b->keep_to = alloc_touched(b->keep_extra);
#ifdef GDAP_BENCH_COSTA
  char error[256];
  b->costa = costa_peer_create(b->from.desc, b->from.nprow, b->from.npcol, b->src_data, b->to.desc, b->to.nprow,
                               b->to.npcol, b->dst_data, g_rank, error, (int)sizeof error);
  if (!b->costa) die(error);
#endif
}

static void bench_free(Bench* b) {
#ifdef GDAP_BENCH_COSTA
  costa_peer_destroy(b->costa);
#endif
  free(b->keep_from);
  free(b->keep_to);
  free(b->a2a_send);
  free(b->a2a_recv);
  gdap_array_destroy(b->src);
  gdap_array_destroy(b->shm_src);
  gdap_array_destroy(b->dst);
  gdap_plan_destroy(b->plan);
  Cblacs_gridexit(b->all_context);
  side_free(&b->from);
  side_free(&b->to);
}

typedef struct Result {
  double ms[NMETHODS];      /* medians */
  double min_ms[NMETHODS];  /* minima */
  long long send_bytes;     /* the busiest rank's bytes to other ranks */
  long long local_bytes;    /* its copy within itself */
  long long send_messages;  /* its messages */
  long long send_runs;      /* its contiguous runs sent */
  long long local_runs;     /* its contiguous runs copied within itself */
} Result;

static Result run_case(const Case* c, gdap_comm* comm, gdap_comm* shm_comm, int system_context, int repeats) {
  Bench b;
  bench_init(&b, c, comm, shm_comm, system_context);
  for (int m = 0; m < NMETHODS; ++m) {
    if (!kMethods[m].run) continue;
    if (kMethods[m].checked) verify(&kMethods[m], &b);
    else timed(&kMethods[m], &b);
  }
  for (int w = 1; w < WARMUP; ++w)
    for (int m = 0; m < NMETHODS; ++m)
      if (kMethods[m].run) timed(&kMethods[m], &b);

  double* t = calloc((size_t)(NMETHODS * repeats), sizeof *t);
  if (!t) die("out of memory");
  for (int r = 0; r < repeats; ++r)
    for (int m = 0; m < NMETHODS; ++m)
      if (kMethods[m].run) t[m * repeats + r] = timed(&kMethods[m], &b);

  Result out;
  for (int m = 0; m < NMETHODS; ++m) {
    out.ms[m] = 1e3 * median(t + m * repeats, repeats); /* sorts: the minimum comes first */
    out.min_ms[m] = 1e3 * t[m * repeats];
  }
  long long counts[5] = {b.stats.send_bytes, b.stats.local_bytes, b.stats.send_messages, b.stats.send_runs,
                         b.stats.local_runs};
  MPI_Allreduce(MPI_IN_PLACE, counts, 5, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  out.send_bytes = counts[0];
  out.local_bytes = counts[1];
  out.send_messages = counts[2];
  out.send_runs = counts[3];
  out.local_runs = counts[4];
  free(t);
  bench_free(&b);
  return out;
}

/* ---------------------------------------------------------------------------------------------
 * Report
 * ------------------------------------------------------------------------------------------- */

static double mib(long long bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* "median (min)" of one method, or "n/a" where it is not built in. */
static void print_ms(const Result* r, int m) {
  if (kMethods[m].run) printf(" %.1f (%.1f) |", r->ms[m], r->min_ms[m]);
  else printf(" n/a |");
}

static void print_ratio(const Result* r, int num, int den) {
  if (kMethods[num].run && kMethods[den].run) printf(" %.2f |", r->ms[num] / r->ms[den]);
  else printf(" n/a |");
}

static void report(const Result* r, const int* ran, int repeats) {
  printf("\nfloat64 %d x %d (%.0f MiB), %d ranks; median (min) of %d after %d warm-ups, each the slowest rank's time.\n"
         "Sent = bytes each rank sends to other ranks (gdap's plan; MPI_Alltoall sends the same),\n"
         "kept = bytes it copies within itself. Ratios are of medians.\n\n",
         N, N, mib((long long)N * N * 8), NRANKS, repeats, WARMUP);
  printf("| case | sent/rank MiB | kept/rank MiB | gdap ms | gdap (cma) ms | gdap (cma, shm) ms | COSTA ms | pdgemr2d ms |"
         " MPI_Alltoall ms | COSTA/gdap | pdgemr2d/gdap | gdap/Alltoall | gdap (cma)/Alltoall | gdap (cma, shm)/Alltoall |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int c = 0; c < NCASES; ++c) {
    if (!ran[c]) continue;
    printf("| %s | %.0f | %.0f |", kCases[c].name, mib(r[c].send_bytes), mib(r[c].local_bytes));
    print_ms(&r[c], GDAP_P2P);
    print_ms(&r[c], GDAP_CMA);
    print_ms(&r[c], GDAP_CMA_SHM);
    print_ms(&r[c], COSTA);
    print_ms(&r[c], PDGEMR2D);
    print_ms(&r[c], ALLTOALL);
    print_ratio(&r[c], COSTA, GDAP_P2P);
    print_ratio(&r[c], PDGEMR2D, GDAP_P2P);
    print_ratio(&r[c], GDAP_P2P, ALLTOALL);
    print_ratio(&r[c], GDAP_CMA, ALLTOALL);
    print_ratio(&r[c], GDAP_CMA_SHM, ALLTOALL);
    printf("\n");
  }
  printf("\ngdap's exchanges (GDAP_MPI_EXCHANGE), same runs:\n\n");
  printf("| case | messages/rank | runs sent/rank | runs kept/rank | p2p ms | alltoallv ms | datatype ms | cma ms |"
         " cma, packs on the heap ms | cma, shm sources ms |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int c = 0; c < NCASES; ++c) {
    if (!ran[c]) continue;
    const double* ms = r[c].ms;
    printf("| %s | %lld | %lld | %lld | %.1f | %.1f | %.1f | %.1f (%.1f) | %.1f (%.1f) | %.1f |\n", kCases[c].name,
           r[c].send_messages, r[c].send_runs, r[c].local_runs, ms[GDAP_P2P], ms[GDAP_ALLTOALLV], ms[GDAP_DATATYPE],
           ms[GDAP_CMA], r[c].min_ms[GDAP_CMA], ms[GDAP_CMA_HEAP], r[c].min_ms[GDAP_CMA_HEAP], ms[GDAP_CMA_SHM]);
  }
}

int main(int argc, char** argv) {
  const int repeats = start_ranks(&argc, &argv, NRANKS, DEFAULT_REPEATS, MIN_REPEATS);
  const int only = argc > 2 ? atoi(argv[2]) : 0;
  if (only < 0 || only > NCASES) die("case must be 1 to 5");

  gdap_comm *comm = NULL, *shm_comm = NULL;
  CK(gdap_comm_from_mpi(&comm, (int)MPI_Comm_c2f(MPI_COMM_WORLD)));
  CK(gdap_comm_from_mpi(&shm_comm, (int)MPI_Comm_c2f(MPI_COMM_WORLD)));
  /* BLACS finds MPI initialised and uses MPI_COMM_WORLD as its system context. */
  int me, nprocs, system_context;
  Cblacs_pinfo(&me, &nprocs);
  Cblacs_get(-1, 0, &system_context);

  Result results[NCASES];
  int ran[NCASES] = {0};
  for (int c = 0; c < NCASES; ++c) {
    if (only != 0 && c != only - 1) continue;
    ran[c] = 1;
    if (g_rank == 0) fprintf(stderr, "case %d: %s\n", c + 1, kCases[c].name);
    results[c] = run_case(&kCases[c], comm, shm_comm, system_context, repeats);
  }
  if (g_rank == 0) report(results, ran, repeats);

  gdap_comm_destroy(shm_comm);
  gdap_comm_destroy(comm);
  Cblacs_exit(1); /* leaves MPI to us */
  MPI_Finalize();
  return 0;
}
