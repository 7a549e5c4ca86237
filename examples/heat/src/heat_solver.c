/* One rank of the C driver's heat solver (heat_solver.h), written as a gdap user writes it.
 *
 * gdap describes the grid as padded blocks over the process grid (one cell of padding each side:
 * the halo between ranks; at the edges the frame, fixed, or on a periodic dimension filled by the
 * exchange from the opposite edge), plans
 * the halo exchange once and binds it to each of the two fields (gdap_halo_exchange_init). A step
 * updates the boundary layer first, starts the bound exchange of the new field, and updates the
 * interior while the halo moves: on a GPU the interior runs on a second stream beside the
 * exchange's; on the host a second thread computes it while this one exchanges. The residual
 * norm is an all-reduce every few steps, checkpoints are Zarr v3 stores (plus a small record of
 * the step and problem), and a restart loads one onto whatever process grid this run has.
 */
#include "heat_solver.h"

#include "heat_kernels.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

#define HEAT_BENCH_WARMUP 10 /* untimed steps before a --bench timing */

typedef struct rank_state {
  const heat_options* o;
  gdap_comm* comm;
  gdap_comm_kind kind;
  int64_t rank, nranks;
  int64_t grid[3], coords[3];
  heat_problem problem;
  gdap_dtype dtype;
  gdap_dim dims[3];
  heat_view view;
  heat_box owned;  /* the cells this rank owns (the fill) */
  heat_box update; /* the unknowns it updates */
  heat_boxes boundary, interior;
  gdap_map* map;
  gdap_halo* halo;
  gdap_array* field[2];
  gdap_exchange* exchange[2];
  void* data[2];
  int64_t bytes; /* of one section */
  int cur;       /* field[cur] holds the latest step */
  int64_t step;
  /* the all-reduced scalars: one float64 and one uint64 element, where the engine reduces them */
  gdap_array* total[2];
  void* device_total[2]; /* where device kernels leave this rank's part */
  void* scratch;
  int device;
  void* stream_c; /* the communicator's stream: boundary layer, exchange, reductions */
  void* stream_i; /* the interior */
  void* ev_c;
  void* ev_i;
  int own_stream_c;
  int64_t nres, capres; /* residual history */
  int64_t* res_step;
  double* res_value;
  double seconds;  /* in the step loop */
  int64_t timed;   /* steps it made */
} rank_state;

static int fail(const rank_state* s, const char* format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  fprintf(stderr, "heat: rank %lld: %s\n", (long long)s->rank, text);
  return 1;
}

#define GDAP(call)                                                                                   \
  do {                                                                                               \
    const gdap_status st_ = (call);                                                                  \
    if (st_ != GDAP_SUCCESS) return fail(s, "%s: %s: %s", #call, gdap_status_string(st_), gdap_last_error()); \
  } while (0)
#define CUDA(call)                                                                       \
  do {                                                                                   \
    const int e_ = (call);                                                               \
    if (e_ != 0) return fail(s, "%s: %s", #call, heat_cuda_error_string(e_));            \
  } while (0)
#define TRY(call)              \
  do {                         \
    if ((call) != 0) return 1; \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- the grid: dictionaries, boxes ---- */

/* A process grid for `nranks` ranks: each prime factor, largest first, goes to the dimension with
 * the most unknowns per rank so far. */
static void default_grid(int ndim, const int64_t* n, int64_t nranks, int64_t* grid) {
  int64_t primes[64];
  int count = 0;
  for (int64_t rest = nranks, q = 2; rest > 1 && count < 64; q = q * q > rest ? rest : q + 1)
    while (rest % q == 0 && count < 64) {
      primes[count++] = q;
      rest /= q;
    }
  for (int d = 0; d < ndim; ++d) grid[d] = 1;
  for (int i = count - 1; i >= 0; --i) {
    int best = 0;
    for (int d = 1; d < ndim; ++d)
      if (n[d] * grid[best] > n[best] * grid[d]) best = d;
    grid[best] *= primes[i];
  }
}

/* Rank's dictionary along dimension d: its share of the unknowns plus one cell each side. At the
 * edges that cell is boundary padding (the frame: fixed values, or on a periodic dimension the cell
 * the halo exchange fills from the opposite edge), between ranks communication padding. */
static int describe_dim(rank_state* s, int d) {
  const heat_problem* p = &s->problem;
  const int64_t P = s->grid[d], c = s->coords[d];
  const int64_t lo = c * p->n[d] / P, hi = (c + 1) * p->n[d] / P;
  gdap_dim* dim = &s->dims[d];
  GDAP(gdap_dim_set_block(dim, heat_problem_size(p, d), P, c, p->origin[d] + lo - 1, p->origin[d] + hi + 1));
  GDAP(gdap_dim_set_padding(dim, 1, 1));
  if (p->periodic[d]) GDAP(gdap_dim_set_periodic(dim, 1));
  /* The owned cells as gdap counts them (frame cells at the edges included). */
  gdap_run run;
  int64_t written = 0;
  GDAP(gdap_dim_runs(&run, &written, dim, 0, 1));
  s->owned.lo[d] = run.local_start;
  s->owned.hi[d] = run.local_start + run.length;
  s->view.shape[d] = dim->stop - dim->start;
  s->view.start[d] = dim->start;
  s->update.lo[d] = 1;
  s->update.hi[d] = s->view.shape[d] - 1;
  return 0;
}

static int describe(rank_state* s) {
  const heat_options* o = s->o;
  const int nd = s->problem.ndim;
  GDAP(gdap_comm_rank(&s->rank, s->comm));
  GDAP(gdap_comm_size(&s->nranks, s->comm));
  GDAP(gdap_comm_kind_get(&s->kind, s->comm));
  int64_t ranks = 1;
  for (int d = 0; d < nd; ++d) {
    s->grid[d] = o->grid[0] > 0 ? o->grid[d] : 0;
    ranks *= s->grid[d];
  }
  if (o->grid[0] <= 0) {
    default_grid(nd, s->problem.n, s->nranks, s->grid);
    ranks = s->nranks;
  }
  if (ranks != s->nranks) return fail(s, "the process grid has %lld ranks, the communicator %lld", (long long)ranks, (long long)s->nranks);
  for (int d = 0; d < nd; ++d)
    if (s->grid[d] > s->problem.n[d])
      return fail(s, "dimension %d: %lld ranks for %lld unknowns: every rank needs one", d, (long long)s->grid[d],
                  (long long)s->problem.n[d]);
  GDAP(gdap_grid_rank_to_coords(s->coords, nd, s->grid, s->rank));
  s->view.ndim = nd;
  s->view.bits = o->bits;
  s->dtype = (gdap_dtype){GDAP_DTYPE_FLOAT, (uint8_t)o->bits, 1};
  for (int d = 0; d < nd; ++d) TRY(describe_dim(s, d));
  heat_split(&s->update, s->problem.ndim, &s->boundary, &s->interior);
  s->bytes = o->bits / 8;
  for (int d = 0; d < nd; ++d) s->bytes *= s->view.shape[d];
  GDAP(gdap_map_create_collective(&s->map, s->comm, nd, s->dims));
  return 0;
}

/* ---- memory: sections, exchanges, the device's streams ---- */

static int allocate(rank_state* s) {
  const heat_options* o = s->o;
  const int nd = s->problem.ndim;
  const gdap_device where = {o->on_device ? GDAP_DEVICE_CUDA : GDAP_DEVICE_CPU, o->on_device ? s->device : 0};
  if (o->on_device) {
    if (!s->stream_c) {
      CUDA(heat_cuda_stream_create(&s->stream_c, 1));
      s->own_stream_c = 1;
      GDAP(gdap_comm_set_stream(s->comm, s->stream_c));
    }
    CUDA(heat_cuda_stream_create(&s->stream_i, 0));
    CUDA(heat_cuda_event_create(&s->ev_c));
    CUDA(heat_cuda_event_create(&s->ev_i));
    CUDA(heat_cuda_malloc(&s->scratch, heat_cuda_scratch_bytes()));
  }
  for (int b = 0; b < 2; ++b) {
    /* Sections shared with the companion live in shared memory (host) or plain device memory. */
    if (o->share_dir && !o->on_device) GDAP(gdap_array_create_shm(&s->field[b], NULL, s->dtype, s->dims, nd));
    else GDAP(gdap_array_create(&s->field[b], s->dtype, where, s->dims, nd));
    GDAP(gdap_array_data(&s->data[b], s->field[b]));
  }
  /* gdap refuses a halo with nothing to exchange (one rank, no periodic dimension): then there is
   * no exchange, and start_exchange does nothing. */
  int halo = 0;
  for (int d = 0; d < nd; ++d) halo |= s->grid[d] > 1 || s->problem.periodic[d];
  if (halo) {
    gdap_halo_options faces = GDAP_HALO_OPTIONS_INIT;
    faces.corners = 0; /* a 5- or 7-point stencil reads no edge or corner cell */
    GDAP(gdap_halo_create(&s->halo, s->map, s->dtype, s->rank, &faces));
    for (int b = 0; b < 2; ++b) GDAP(gdap_halo_exchange_init(&s->exchange[b], s->comm, s->halo, s->field[b]));
  }

  /* One float64 and one uint64 for the all-reduces, in memory the engine reduces: device memory
   * for NCCL, the host for the group and MPI (device kernels' parts are copied there). */
  gdap_dim one = GDAP_DIM_INIT;
  GDAP(gdap_dim_set_undistributed(&one, 1));
  const gdap_dtype kinds[2] = {{GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DTYPE_UINT, 64, 1}};
  const int nccl = o->on_device && s->kind == GDAP_COMM_NCCL;
  const gdap_device host = {GDAP_DEVICE_CPU, 0};
  for (int k = 0; k < 2; ++k) {
    GDAP(gdap_array_create(&s->total[k], kinds[k], nccl ? where : host, &one, 1));
    if (nccl) GDAP(gdap_array_data(&s->device_total[k], s->total[k]));
    else if (o->on_device) CUDA(heat_cuda_malloc(&s->device_total[k], 8));
  }
  return 0;
}

static void release(rank_state* s) {
  for (int b = 0; b < 2; ++b) gdap_exchange_destroy(s->exchange[b]);
  gdap_halo_destroy(s->halo);
  for (int b = 0; b < 2; ++b) gdap_array_destroy(s->field[b]);
  const int nccl = s->o->on_device && s->kind == GDAP_COMM_NCCL;
  for (int k = 0; k < 2; ++k) {
    if (s->o->on_device && !nccl && s->device_total[k]) heat_cuda_free(s->device_total[k]);
    gdap_array_destroy(s->total[k]);
  }
  gdap_map_destroy(s->map);
  if (s->scratch) heat_cuda_free(s->scratch);
  if (s->ev_c) heat_cuda_event_destroy(s->ev_c);
  if (s->ev_i) heat_cuda_event_destroy(s->ev_i);
  if (s->stream_i) heat_cuda_stream_destroy(s->stream_i);
  if (s->own_stream_c) heat_cuda_stream_destroy(s->stream_c);
  free(s->res_step);
  free(s->res_value);
}

/* Every rank's value combined by `op` into `*value`. This rank's part is `*value`, or, when
 * `from_kernel`, what a device kernel left in device_total[k]. k: 0 float64, 1 uint64. */
static int combine(rank_state* s, int k, void* value, int from_kernel, gdap_reduce_op op) {
  const int nccl = s->o->on_device && s->kind == GDAP_COMM_NCCL;
  void* part = s->device_total[k];
  if (!nccl) GDAP(gdap_array_data(&part, s->total[k]));
  if (from_kernel && !nccl) CUDA(heat_cuda_copy_sync(part, s->device_total[k], 8, s->stream_c));
  else if (!from_kernel && nccl) CUDA(heat_cuda_copy_sync(part, value, 8, s->stream_c));
  else if (!from_kernel) memcpy(part, value, 8);
  GDAP(gdap_allreduce(s->comm, s->total[k], op));
  if (nccl) CUDA(heat_cuda_copy_sync(value, part, 8, s->stream_c));
  else memcpy(value, part, 8);
  return 0;
}

/* Waits until the device work queued so far, both streams', is done (host: nothing to wait for). */
static int settle(rank_state* s) {
  if (!s->o->on_device) return 0;
  CUDA(heat_cuda_stream_wait(s->stream_c, s->ev_i));
  CUDA(heat_cuda_stream_sync(s->stream_c));
  return 0;
}

/* ---- records: the state file the companion reads, a checkpoint's step and problem ---- */

static int push_residual(rank_state* s, int64_t step, double value) {
  if (s->nres == s->capres) {
    const int64_t capacity = 2 * s->capres + 16;
    int64_t* steps = realloc(s->res_step, (size_t)capacity * sizeof *steps);
    if (steps) s->res_step = steps;
    double* values = realloc(s->res_value, (size_t)capacity * sizeof *values);
    if (values) s->res_value = values;
    if (!steps || !values) return fail(s, "out of memory for the residual history");
    s->capres = capacity;
  }
  s->res_step[s->nres] = step;
  s->res_value[s->nres++] = value;
  return 0;
}

/* Writes the record (rank 0 only) through a temporary file renamed into place, so a reader never
 * sees half of one. */
static int write_record(rank_state* s, const char* path, int done) {
  if (s->rank != 0) return 0;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE* f = fopen(tmp, "w");
  if (!f) return fail(s, "cannot write %s: %s", tmp, strerror(errno));
  const heat_problem* p = &s->problem;
  const int nd = p->ndim;
  fprintf(f, "heat 1\nndim %d\ndtype float%d\n", nd, s->o->bits);
  fprintf(f, "n");
  for (int d = 0; d < nd; ++d) fprintf(f, " %lld", (long long)p->n[d]);
  fprintf(f, "\nperiodic");
  for (int d = 0; d < nd; ++d) fprintf(f, " %d", p->periodic[d]);
  fprintf(f, "\norigin");
  for (int d = 0; d < nd; ++d) fprintf(f, " %lld", (long long)p->origin[d]);
  fprintf(f, "\nmode");
  for (int d = 0; d < nd; ++d) fprintf(f, " %d", p->mode[d]);
  fprintf(f, "\ngrid");
  for (int d = 0; d < nd; ++d) fprintf(f, " %lld", (long long)s->grid[d]);
  fprintf(f, "\nr %.17g\nstep %lld\nnranks %lld\ncurrent %d\ndevice %s\ndone %d\n", p->r, (long long)s->step,
          (long long)s->nranks, s->cur, s->o->on_device ? "cuda" : "cpu", done);
  for (int64_t i = 0; i < s->nres; ++i) fprintf(f, "residual %lld %.17g\n", (long long)s->res_step[i], s->res_value[i]);
  if (fclose(f) != 0 || rename(tmp, path) != 0) return fail(s, "cannot write %s: %s", path, strerror(errno));
  return 0;
}

/* Reads a checkpoint's record into the options' problem and the residual history. */
static int read_record(rank_state* s, const char* path, heat_options* into) {
  FILE* f = fopen(path, "r");
  if (!f) return fail(s, "cannot read the checkpoint's record %s: %s", path, strerror(errno));
  char line[512];
  int seen = 0;
  while (fgets(line, sizeof line, f)) {
    long long a[3] = {0, 0, 0}, step = 0;
    double value = 0;
    if (sscanf(line, "heat %lld", &a[0]) == 1) seen = a[0] == 1;
    else if (sscanf(line, "ndim %d", &into->ndim) == 1) continue;
    else if (sscanf(line, "dtype float%d", &into->bits) == 1) continue;
    else if (sscanf(line, "n %lld %lld %lld", &a[0], &a[1], &a[2]) >= 2) for (int d = 0; d < 3; ++d) into->n[d] = a[d];
    else if (sscanf(line, "periodic %lld %lld %lld", &a[0], &a[1], &a[2]) >= 2) for (int d = 0; d < 3; ++d) into->periodic[d] = (int)a[d];
    else if (sscanf(line, "mode %lld %lld %lld", &a[0], &a[1], &a[2]) >= 2) for (int d = 0; d < 3; ++d) into->mode[d] = (int)a[d];
    else if (sscanf(line, "r %lf", &into->r) == 1) continue;
    else if (sscanf(line, "step %lld", &step) == 1) s->step = step;
    else if (sscanf(line, "residual %lld %lf", &step, &value) == 2 && push_residual(s, step, value) != 0) {
      fclose(f);
      return 1;
    }
  }
  fclose(f);
  if (!seen) return fail(s, "%s is not a heat checkpoint record (no 'heat 1' line)", path);
  return 0;
}

static int checkpoint(rank_state* s) {
  char path[4096], record[4200];
  snprintf(path, sizeof path, "%s/step%08lld.zarr", s->o->checkpoint_dir, (long long)s->step);
  TRY(settle(s));
  gdap_zarr_options z = GDAP_ZARR_OPTIONS_INIT;
  z.codec = GDAP_ZARR_RAW;
  z.overwrite = 1;
  GDAP(gdap_zarr_save(s->comm, s->map, s->field[s->cur], path, &z));
  snprintf(record, sizeof record, "%s.heat", path);
  TRY(write_record(s, record, 0));
  if (s->rank == 0 && !s->o->bench) printf("heat: step %lld checkpoint %s\n", (long long)s->step, path);
  return 0;
}

/* ---- the steps ---- */

static gdap_status start_exchange(gdap_exchange* exchange) {
  return exchange ? gdap_exchange_start(exchange) : GDAP_SUCCESS;
}

static int fill(rank_state* s, int b, const heat_box* owned) {
  if (s->o->on_device) CUDA(heat_cuda_fill(&s->view, s->data[b], owned, &s->problem, s->stream_c));
  else heat_host_fill(&s->view, s->data[b], owned, &s->problem);
  return 0;
}

static int copy_section(rank_state* s, int from, int to) {
  if (s->o->on_device) CUDA(heat_cuda_copy_sync(s->data[to], s->data[from], s->bytes, s->stream_c));
  else memcpy(s->data[to], s->data[from], (size_t)s->bytes);
  return 0;
}

/* Step 0, or the checkpoint's step: field[0] and field[1] hold it (the frame cells too), and
 * field[0]'s halo is exchanged. */
static int initial(rank_state* s) {
  if (s->o->restart) {
    const heat_box none = {{0, 0, 0}, {0, 0, 0}};
    TRY(fill(s, 0, &none)); /* NaN everywhere, until the load and the exchange write it */
    GDAP(gdap_zarr_load(s->comm, s->map, s->field[0], s->o->restart));
  } else {
    TRY(fill(s, 0, &s->owned));
  }
  TRY(copy_section(s, 0, 1));
  s->cur = 0;
  GDAP(start_exchange(s->exchange[0]));
  if (s->o->on_device) CUDA(heat_cuda_event_record(s->ev_c, s->stream_c));
  return 0;
}

/* The interior on a second thread while this one exchanges the halo (in turn if OpenMP gives no
 * second thread). */
static int exchange_beside_interior(rank_state* s, gdap_exchange* ex, const void* u, void* v) {
  gdap_status started = GDAP_SUCCESS;
#pragma omp parallel num_threads(2)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    if (t == 0) started = start_exchange(ex); /* the rank's own thread: MPI's funnelled one */
    if (t == n - 1) heat_host_step(&s->view, u, v, &s->interior, s->problem.r);
  }
  GDAP(started);
  return 0;
}

static int step(rank_state* s) {
  const int from = s->cur, to = 1 - s->cur;
  const void* u = s->data[from];
  void* v = s->data[to];
  const double r = s->problem.r;
  if (!s->o->on_device && s->o->overlap && s->exchange[to]) {
    heat_host_step(&s->view, u, v, &s->boundary, r);
    TRY(exchange_beside_interior(s, s->exchange[to], u, v));
  } else if (!s->o->on_device) {
    heat_host_step(&s->view, u, v, &s->boundary, r);
    heat_host_step(&s->view, u, v, &s->interior, r);
    GDAP(start_exchange(s->exchange[to]));
  } else if (s->o->overlap) {
    /* stream_c: boundary layer, then the exchange; stream_i: the interior. Each stream first waits
     * for the other's work of the step before (which read or filled what it now writes or reads). */
    CUDA(heat_cuda_stream_wait(s->stream_c, s->ev_i));
    CUDA(heat_cuda_stream_wait(s->stream_i, s->ev_c));
    CUDA(heat_cuda_step(&s->view, u, v, &s->boundary, r, s->stream_c));
    GDAP(start_exchange(s->exchange[to]));
    CUDA(heat_cuda_event_record(s->ev_c, s->stream_c));
    CUDA(heat_cuda_step(&s->view, u, v, &s->interior, r, s->stream_i));
    CUDA(heat_cuda_event_record(s->ev_i, s->stream_i));
  } else {
    CUDA(heat_cuda_step(&s->view, u, v, &s->boundary, r, s->stream_c));
    CUDA(heat_cuda_step(&s->view, u, v, &s->interior, r, s->stream_c));
    GDAP(start_exchange(s->exchange[to]));
  }
  s->cur = to;
  ++s->step;
  return 0;
}

/* The residual norm ||u_step - u_step-1|| over the unknowns, all-reduced. */
static int residual(rank_state* s, double* norm) {
  const void* old = s->data[1 - s->cur];
  const void* now_ = s->data[s->cur];
  double part = 0.0;
  if (s->o->on_device) {
    CUDA(heat_cuda_stream_wait(s->stream_c, s->ev_i));
    CUDA(heat_cuda_sqdiff(&s->view, old, now_, &s->update, s->device_total[0], s->scratch, s->stream_c));
  } else {
    part = heat_host_sqdiff(&s->view, old, now_, &s->update);
  }
  TRY(combine(s, 0, &part, s->o->on_device, GDAP_REDUCE_SUM));
  *norm = sqrt(part);
  return push_residual(s, s->step, *norm);
}

/* ---- the companion: IPC handles and the state file ---- */

static int share(rank_state* s) {
  unsigned char handle[GDAP_IPC_HANDLE_SIZE];
  for (int b = 0; b < 2; ++b) {
    char path[4200];
    snprintf(path, sizeof path, "%s/rank%lld.field%d.ipc", s->o->share_dir, (long long)s->rank, b);
    GDAP(gdap_ipc_export(handle, sizeof handle, s->field[b]));
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(handle, 1, sizeof handle, f) != sizeof handle || fclose(f) != 0)
      return fail(s, "cannot write %s: %s", path, strerror(errno));
  }
  return 0;
}

static int state(rank_state* s, int done) {
  if (!s->o->share_dir) return 0;
  char path[4200];
  snprintf(path, sizeof path, "%s/state.txt", s->o->share_dir);
  return write_record(s, path, done);
}

/* Keeps the sections alive until the companion has read them (it creates `release`), or `hold`
 * seconds. */
static int hold(rank_state* s) {
  if (!s->o->share_dir || s->o->hold <= 0) return 0;
  GDAP(gdap_comm_barrier(s->comm));
  if (s->rank == 0) {
    char path[4200];
    snprintf(path, sizeof path, "%s/release", s->o->share_dir);
    const double until = now() + s->o->hold;
    while (access(path, F_OK) != 0 && now() < until) usleep(20000);
    printf("heat: sections %s\n", access(path, F_OK) == 0 ? "released by the companion" : "held until the time ran out");
  }
  GDAP(gdap_comm_barrier(s->comm));
  return 0;
}

/* ---- the run ---- */

static int run_steps(rank_state* s) {
  const heat_options* o = s->o;
  if (o->bench) /* warm-up, untimed: first launches, first exchanges */
    for (int k = 0; k < HEAT_BENCH_WARMUP; ++k) TRY(step(s));
  const int64_t first = s->step, last = o->bench ? first + o->steps : o->steps;
  TRY(settle(s));
  GDAP(gdap_comm_barrier(s->comm));
  const double t0 = now();
  while (s->step < last) {
    TRY(step(s));
    if (o->bench) continue;
    if (o->residual_every > 0 && s->step % o->residual_every == 0) {
      double norm = 0;
      TRY(residual(s, &norm));
      if (s->rank == 0) printf("heat: step %lld residual %.10e\n", (long long)s->step, norm);
      TRY(state(s, 0));
    }
    if (o->checkpoint_every > 0 && s->step % o->checkpoint_every == 0) TRY(checkpoint(s));
  }
  TRY(settle(s));
  GDAP(gdap_comm_barrier(s->comm));
  double elapsed = now() - t0;
  TRY(combine(s, 0, &elapsed, 0, GDAP_REDUCE_MAX));
  s->seconds = elapsed;
  s->timed = s->step - first;
  return 0;
}

/* Compares the field with the exact discrete solution and the last residual with its prediction;
 * prints the fingerprint. Every rank reaches the same verdict (all from all-reduced values). */
static int check(rank_state* s, int* passed) {
  const heat_problem* p = &s->problem;
  const double g = heat_problem_growth(p), decay = pow(g, (double)s->step);
  const void* u = s->data[s->cur];
  double error = 0.0;
  uint64_t print = 0;
  if (s->o->on_device) {
    CUDA(heat_cuda_error(&s->view, u, &s->update, p, decay, s->device_total[0], s->scratch, s->stream_c));
    TRY(combine(s, 0, &error, 1, GDAP_REDUCE_MAX));
    CUDA(heat_cuda_fingerprint(&s->view, u, &s->update, p, s->device_total[1], s->scratch, s->stream_c));
    TRY(combine(s, 1, &print, 1, GDAP_REDUCE_SUM));
  } else {
    error = heat_host_error(&s->view, u, &s->update, p, decay);
    TRY(combine(s, 0, &error, 0, GDAP_REDUCE_MAX));
    print = heat_host_fingerprint(&s->view, u, &s->update, p);
    TRY(combine(s, 1, &print, 0, GDAP_REDUCE_SUM));
  }
  /* Rounding: each step rounds a cell a few times (at most 8 half-ulps of the largest |u|), and
   * the step is a convex combination (r <= 1/(2 ndim)), which does not amplify earlier errors. */
  const double eps = s->o->bits == 64 ? 0x1p-53 : 0x1p-24;
  const double bound = 8.0 * eps * heat_problem_bound(p) * (double)(s->step > 0 ? s->step : 1);
  const double tolerance = s->o->bits == 64 && bound < 1e-10 ? 1e-10 : bound;
  const double left = fabs(p->amplitude * decay);
  int ok = error <= tolerance && left > 10.0 * tolerance; /* else dropping the mode would pass */
  if (s->rank == 0) {
    printf("heat: fingerprint %016llX\n", (unsigned long long)print);
    printf("heat: check: max |u - exact| = %.3e after %lld steps (tolerance %.1e, rounding bound %.1e): %s\n", error,
           (long long)s->step, tolerance, bound, error <= tolerance ? "ok" : "FAILED");
    if (left <= 10.0 * tolerance)
      printf("heat: check: the eigenmode has decayed to %.1e, too little for the check to see: FAILED "
             "(fewer steps, or a lower mode)\n", left);
  }
  if (s->nres > 0 && s->res_step[s->nres - 1] == s->step && s->step > 0) {
    /* ||u_s - u_s-1|| = |g^(s-1) (g - 1)| * the mode's norm. Relative rounding of the differences:
     * about eps * |u| / |u_s - u_s-1| per cell, far below these tolerances for the grids checked. */
    const double predicted = fabs(pow(g, (double)(s->step - 1)) * (g - 1.0)) * heat_problem_mode_norm(p);
    const double relative = fabs(s->res_value[s->nres - 1] - predicted) / predicted;
    const double allowed = s->o->bits == 64 ? 1e-8 : 1e-2;
    ok = ok && relative <= allowed;
    if (s->rank == 0)
      printf("heat: check: residual %.10e, predicted %.10e (relative difference %.1e, allowed %.0e): %s\n",
             s->res_value[s->nres - 1], predicted, relative, allowed, relative <= allowed ? "ok" : "FAILED");
  }
  *passed = ok;
  return 0;
}

static void print_header(const rank_state* s) {
  const heat_problem* p = &s->problem;
  const int nd = p->ndim;
  const char* engine = s->kind == GDAP_COMM_GROUP ? "in-process group" : s->kind == GDAP_COMM_MPI ? "MPI communicator" : "NCCL communicator";
  printf("heat: %d-d float%d, unknowns", nd, s->o->bits);
  for (int d = 0; d < nd; ++d) printf("%s%lld%s", d ? " x " : " ", (long long)p->n[d], p->periodic[d] ? " (periodic)" : "");
  printf(", process grid");
  for (int d = 0; d < nd; ++d) printf("%s%lld", d ? " x " : " ", (long long)s->grid[d]);
  printf(", %lld rank%s over the %s, %s memory, r = %g, %s\n", (long long)s->nranks, s->nranks > 1 ? "s" : "", engine,
         s->o->on_device ? "CUDA device" : "host", p->r, s->o->overlap ? "halo beside the interior" : "halo after the step");
}

static int solve(rank_state* s, int* passed) {
  TRY(describe(s));
  TRY(allocate(s));
  if (s->o->share_dir) TRY(share(s));
  TRY(initial(s));
  if (s->rank == 0) {
    print_header(s);
    if (s->o->restart) printf("heat: restarted from %s at step %lld\n", s->o->restart, (long long)s->step);
  }
  TRY(state(s, 0));
  TRY(run_steps(s));
  if (s->rank == 0)
    printf("heat: %lld steps in %.3f s, %.4f ms per step\n", (long long)s->timed, s->seconds,
           s->timed > 0 ? 1e3 * s->seconds / (double)s->timed : 0.0);
  *passed = 1;
  if (s->o->check) TRY(check(s, passed));
  TRY(settle(s));
  TRY(state(s, 1));
  TRY(hold(s));
  return 0;
}

int heat_run_rank(const heat_options* o, gdap_comm* comm, void* comm_stream, int device) {
  heat_options mine = *o;
  rank_state st;
  memset(&st, 0, sizeof st);
  rank_state* s = &st;
  s->o = &mine;
  s->comm = comm;
  s->stream_c = comm_stream;
  s->device = device;
  gdap_comm_rank(&s->rank, comm);
  if (o->restart) {
    char record[4200];
    snprintf(record, sizeof record, "%s.heat", o->restart);
    if (read_record(s, record, &mine) != 0) return 1;
  }
  if (mine.grid_ndim && mine.grid_ndim != mine.ndim)
    return fail(s, "--grid has %d values for the %d-d grid%s", mine.grid_ndim, mine.ndim, o->restart ? " of the checkpoint" : "");
  char why[256];
  int32_t periodic[3], mode[3];
  for (int d = 0; d < 3; ++d) {
    periodic[d] = mine.periodic[d];
    mode[d] = mine.mode[d];
  }
  if (heat_problem_init(&s->problem, mine.ndim, mine.n, periodic, mode, mine.r, why, sizeof why) != 0)
    return fail(s, "%s", why);
  if (o->restart) {
    int64_t ndim = 0, shape[3] = {0, 0, 0};
    gdap_dtype dtype;
    GDAP(gdap_zarr_shape_read(shape, &ndim, &dtype, o->restart, 3));
    for (int d = 0; d < mine.ndim; ++d)
      if (ndim != mine.ndim || shape[d] != heat_problem_size(&s->problem, d) || dtype.bits != mine.bits)
        return fail(s, "checkpoint %s holds a %lld-d float%d array of extent %lld along dimension %d; its record "
                       "describes %d-d float%d with %lld", o->restart, (long long)ndim, dtype.bits,
                    (long long)shape[d], d, mine.ndim, mine.bits, (long long)heat_problem_size(&s->problem, d));
  }
  int passed = 0;
  const int failed = solve(s, &passed);
  release(s);
  if (failed) return 1;
  if (s->rank == 0) printf("heat: %s\n", !o->check ? "done (not checked)" : passed ? "checks passed" : "checks FAILED");
  return passed ? 0 : 1;
}
