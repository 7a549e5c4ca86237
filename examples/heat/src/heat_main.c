/* heat: the C driver of the gdap heat-equation example. Parses the command line, makes the ranks'
 * communicators (an in-process group of OpenMP threads, NCCL communicators for the GPUs of this
 * process, or MPI with NCCL on GPUs) and runs heat_run_rank on each. `heat --help` lists the
 * options; README.md shows the runs. */
#include "heat_comm.h"
#include "heat_kernels.h"
#include "heat_solver.h"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef HEAT_HAVE_MPI
#include <mpi.h>

#include <gdap/gdap_mpi.h>
#endif
#include <omp.h> /* CMakeLists.txt requires OpenMP: the ranks of one process are its threads */

static const char* kUsage =
    "usage: heat [options]\n"
    "  --dims N0xN1[xN2]      unknowns per dimension, C order (default 64x48); 3 values: 3-d, 7-point stencil\n"
    "  --grid P0xP1[xP2]      process grid (default: chosen from the rank count)\n"
    "  --periodic D[,D...]    dimensions that wrap (default none)\n"
    "  --mode K0xK1[xK2]      wave numbers of the initial eigenmode (default 1 each)\n"
    "  --dtype float64|float32\n"
    "  --device cpu|cuda      where the sections live (cuda: one GPU per rank)\n"
    "  --comm group|nccl|mpi  ranks as threads of an in-process group, as threads with one NCCL\n"
    "                         communicator per GPU, or as MPI processes (NCCL between their GPUs)\n"
    "  --ranks N              threads (group, nccl; default: the grid's size, or 1)\n"
    "  --steps N              steps to reach (default 100; a restart continues up to it)\n"
    "  --residual-every N     all-reduce the residual norm every N steps (default 10, 0: never)\n"
    "  --checkpoint-every N   a Zarr v3 checkpoint every N steps (needs --checkpoint-dir)\n"
    "  --checkpoint-dir DIR   where checkpoints go (DIR/stepNNNNNNNN.zarr and its .heat record)\n"
    "  --restart STORE        start from a checkpoint, on this run's process grid\n"
    "  --share DIR            IPC handles of every section and a state file for heat_view.py\n"
    "  --hold SECONDS         keep the sections at the end until heat_view.py releases them\n"
    "  --r VALUE              the step's coefficient, <= 1/(2 ndim) (default: that, Jacobi)\n"
    "  --no-overlap           exchange the halo after the whole step instead of beside the interior\n"
    "  --no-check             skip the comparison with the exact solution\n"
    "  --bench                time --steps steps after 10 untimed ones, without residuals or checkpoints\n"
    "                         (the checks follow the timing)\n";

typedef enum { COMM_GROUP, COMM_NCCL, COMM_MPI } comm_mode;

static int bad(const char* option, const char* value, const char* want) {
  fprintf(stderr, "heat: %s%s '%s': %s\n%s", option[0] == '-' ? "" : "--", option, value, want, kUsage);
  return 1;
}

/* "64x48x32" into up to 3 values >= `least`; returns how many, 0 if malformed. */
static int parse_list(const char* text, char sep, int64_t least, int64_t* out) {
  int count = 0;
  const char* p = text;
  while (count < 3) {
    char* end = NULL;
    errno = 0;
    const long long v = strtoll(p, &end, 10);
    if (end == p || errno != 0 || v < least) return 0;
    out[count++] = v;
    if (*end == '\0') return count;
    if (*end != sep) return 0;
    p = end + 1;
  }
  return 0;
}

static int make_dir(const char* path) {
  if (mkdir(path, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "heat: cannot create %s: %s\n", path, strerror(errno));
    return 1;
  }
  return 0;
}

static int parse(int argc, char** argv, heat_options* o, comm_mode* mode, int64_t* ranks) {
  enum { DIMS = 1, GRID, PERIODIC, MODE, DTYPE, DEVICE, COMM, RANKS, STEPS, RESIDUAL, CK_EVERY, CK_DIR, RESTART,
         SHARE, HOLD, R, NO_OVERLAP, NO_CHECK, BENCH, HELP };
  static const struct option options[] = {
      {"dims", 1, 0, DIMS}, {"grid", 1, 0, GRID}, {"periodic", 1, 0, PERIODIC}, {"mode", 1, 0, MODE},
      {"dtype", 1, 0, DTYPE}, {"device", 1, 0, DEVICE}, {"comm", 1, 0, COMM}, {"ranks", 1, 0, RANKS},
      {"steps", 1, 0, STEPS}, {"residual-every", 1, 0, RESIDUAL}, {"checkpoint-every", 1, 0, CK_EVERY},
      {"checkpoint-dir", 1, 0, CK_DIR}, {"restart", 1, 0, RESTART}, {"share", 1, 0, SHARE}, {"hold", 1, 0, HOLD},
      {"r", 1, 0, R}, {"no-overlap", 0, 0, NO_OVERLAP}, {"no-check", 0, 0, NO_CHECK}, {"bench", 0, 0, BENCH},
      {"help", 0, 0, HELP}, {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->ndim = 2;
  o->n[0] = 64;
  o->n[1] = 48;
  o->mode[0] = o->mode[1] = o->mode[2] = 1;
  o->bits = 64;
  o->overlap = 1;
  o->check = 1;
  o->steps = 100;
  o->residual_every = 10;
  *mode = COMM_GROUP;
  *ranks = 0;
  int64_t grid_count = 0, mode_count = 0, list[3];
  int c;
  while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
    char* end = NULL;
    switch (c) {
      case DIMS:
        o->ndim = parse_list(optarg, 'x', 1, o->n);
        if (o->ndim < 2) return bad("--dims", optarg, "expected 2 or 3 positive integers joined by 'x'");
        break;
      case GRID:
        grid_count = parse_list(optarg, 'x', 1, o->grid);
        if (grid_count < 1) return bad("--grid", optarg, "expected 2 or 3 positive integers joined by 'x'");
        break;
      case PERIODIC: {
        if (strcmp(optarg, "none") == 0) break;
        const int n = parse_list(optarg, ',', 0, list);
        if (n == 0) return bad("--periodic", optarg, "expected dimension numbers joined by ',' (0 is the first)");
        for (int k = 0; k < n; ++k) {
          if (list[k] > 2) return bad("--periodic", optarg, "a dimension number is 0, 1 or 2");
          o->periodic[list[k]] = 1;
        }
        break;
      }
      case MODE:
        mode_count = parse_list(optarg, 'x', 1, list);
        if (mode_count < 2) return bad("--mode", optarg, "expected 2 or 3 positive integers joined by 'x'");
        for (int k = 0; k < mode_count; ++k) o->mode[k] = (int)list[k];
        break;
      case DTYPE:
        if (strcmp(optarg, "float64") == 0) o->bits = 64;
        else if (strcmp(optarg, "float32") == 0) o->bits = 32;
        else return bad("--dtype", optarg, "expected float64 or float32");
        break;
      case DEVICE:
        if (strcmp(optarg, "cpu") == 0) o->on_device = 0;
        else if (strcmp(optarg, "cuda") == 0) o->on_device = 1;
        else return bad("--device", optarg, "expected cpu or cuda");
        break;
      case COMM:
        if (strcmp(optarg, "group") == 0) *mode = COMM_GROUP;
        else if (strcmp(optarg, "nccl") == 0) *mode = COMM_NCCL;
        else if (strcmp(optarg, "mpi") == 0) *mode = COMM_MPI;
        else return bad("--comm", optarg, "expected group, nccl or mpi");
        break;
      case RANKS:
        if (parse_list(optarg, 'x', 1, list) != 1) return bad("--ranks", optarg, "expected a positive integer");
        *ranks = list[0];
        break;
      case STEPS:
      case RESIDUAL:
      case CK_EVERY: {
        errno = 0;
        const long long v = strtoll(optarg, &end, 10);
        if (end == optarg || *end != '\0' || errno != 0 || v < 0)
          return bad(options[c - 1].name, optarg, "expected an integer >= 0");
        if (c == STEPS) o->steps = v;
        else if (c == RESIDUAL) o->residual_every = v;
        else o->checkpoint_every = v;
        break;
      }
      case CK_DIR: o->checkpoint_dir = optarg; break;
      case RESTART: o->restart = optarg; break;
      case SHARE: o->share_dir = optarg; break;
      case HOLD:
      case R: {
        const double v = strtod(optarg, &end);
        if (end == optarg || *end != '\0' || !(v > 0)) return bad(options[c - 1].name, optarg, "expected a number > 0");
        if (c == HOLD) o->hold = v;
        else o->r = v;
        break;
      }
      case NO_OVERLAP: o->overlap = 0; break;
      case NO_CHECK: o->check = 0; break;
      case BENCH: o->bench = 1; break;
      case HELP: fputs(kUsage, stdout); exit(0);
      default: fputs(kUsage, stderr); return 1;
    }
  }
  if (optind < argc) return bad("argument", argv[optind], "takes no positional arguments");
  o->grid_ndim = (int)grid_count;
  if (grid_count && grid_count != o->ndim && !o->restart) {
    fprintf(stderr, "heat: --grid has %lld values for a %d-d grid\n", (long long)grid_count, o->ndim);
    return 1;
  }
  if (mode_count && mode_count != o->ndim && !o->restart) {
    fprintf(stderr, "heat: --mode has %lld values for a %d-d grid\n", (long long)mode_count, o->ndim);
    return 1;
  }
  for (int d = o->ndim; d < 3; ++d)
    if (o->periodic[d]) {
      fprintf(stderr, "heat: --periodic names dimension %d of a %d-d grid\n", d, o->ndim);
      return 1;
    }
  if (o->checkpoint_every > 0 && !o->checkpoint_dir) {
    fprintf(stderr, "heat: --checkpoint-every needs --checkpoint-dir\n");
    return 1;
  }
  if (*ranks == 0) {
    *ranks = 1;
    for (int d = 0; d < grid_count; ++d) *ranks *= o->grid[d];
  }
  if (o->checkpoint_dir && make_dir(o->checkpoint_dir)) return 1;
  if (o->share_dir && make_dir(o->share_dir)) return 1;
  return 0;
}

/* ---- the ranks as threads of this process ---- */

static int device_for(const heat_options* o, int64_t rank, int* device) {
  *device = 0;
  if (!o->on_device) return 0;
  int count = 0;
  const int e = heat_cuda_device_count(&count);
  if (e != 0 || count == 0) {
    fprintf(stderr, "heat: rank %lld: no CUDA device: %s\n", (long long)rank, e ? heat_cuda_error_string(e) : "none found");
    return 1;
  }
  *device = (int)(rank % count);
  const int f = heat_cuda_set_device(*device);
  if (f != 0) fprintf(stderr, "heat: rank %lld: cudaSetDevice(%d): %s\n", (long long)rank, *device, heat_cuda_error_string(f));
  return f != 0;
}

/* One rank per OpenMP thread over an in-process group (any memory). */
static int run_group(const heat_options* o, int64_t ranks) {
  gdap_comm** comms = calloc((size_t)ranks, sizeof *comms);
  if (!comms || gdap_comm_create_group(comms, ranks) != GDAP_SUCCESS) {
    fprintf(stderr, "heat: gdap_comm_create_group(%lld): %s\n", (long long)ranks, gdap_last_error());
    free(comms);
    return 1;
  }
  int failed = 0;
#pragma omp parallel num_threads((int)ranks) reduction(| : failed)
  {
    const int64_t rank = omp_get_thread_num();
    int device = 0;
    failed |= device_for(o, rank, &device) || heat_run_rank(o, comms[rank], NULL, device);
    gdap_comm_destroy(comms[rank]);
  }
  free(comms);
  return failed;
}

/* One rank per OpenMP thread, each with its own GPU and NCCL communicator (ncclCommInitAll). */
static int run_nccl_threads(const heat_options* o, int64_t ranks) {
  if (!o->on_device) {
    fprintf(stderr, "heat: --comm nccl moves device memory: add --device cuda\n");
    return 1;
  }
  void** nccl = calloc((size_t)ranks, sizeof *nccl);
  const int e = nccl ? heat_nccl_init_all(nccl, (int)ranks) : 1;
  if (e != 0) {
    fprintf(stderr, "heat: NCCL communicators for %lld GPUs: %s\n", (long long)ranks, heat_nccl_error_string(e));
    free(nccl);
    return 1;
  }
  int failed = 0;
#pragma omp parallel num_threads((int)ranks) reduction(| : failed)
  {
    const int64_t rank = omp_get_thread_num();
    void* stream = NULL;
    gdap_comm* comm = NULL;
    int device = 0;
    failed |= device_for(o, rank, &device) || heat_cuda_stream_create(&stream, 1) != 0 ||
              gdap_comm_from_nccl(&comm, nccl[rank], stream) != GDAP_SUCCESS;
    if (failed) fprintf(stderr, "heat: rank %lld: a stream and a gdap communicator over NCCL: %s\n", (long long)rank, gdap_last_error());
    else failed |= heat_run_rank(o, comm, stream, device);
    gdap_comm_destroy(comm);
    if (stream) heat_cuda_stream_destroy(stream);
    heat_nccl_destroy(nccl[rank]);
  }
  free(nccl);
  return failed;
}

/* ---- the ranks as MPI processes ---- */

#ifdef HEAT_HAVE_MPI
static int run_mpi(const heat_options* o) {
  int rank = 0, local = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  gdap_comm* comm = NULL;
  void* stream = NULL;
  void* nccl = NULL;
  int device = 0, failed = 0;
  if (!o->on_device) {
    failed = gdap_comm_from_mpi_comm(&comm, MPI_COMM_WORLD) != GDAP_SUCCESS;
    if (failed) fprintf(stderr, "heat: rank %d: gdap_comm_from_mpi_comm: %s\n", rank, gdap_last_error());
  } else {
    /* One GPU per process of a node; NCCL between them, set up over MPI. */
    failed = device_for(o, local, &device);
    const int e = failed ? 0 : heat_nccl_from_mpi(&nccl, (int)MPI_Comm_c2f(MPI_COMM_WORLD), device);
    if (e != 0) fprintf(stderr, "heat: rank %d: an NCCL communicator over MPI: %s\n", rank, heat_nccl_error_string(e));
    failed = failed || e != 0 || heat_cuda_stream_create(&stream, 1) != 0 ||
             gdap_comm_from_nccl(&comm, nccl, stream) != GDAP_SUCCESS;
    if (failed && e == 0) fprintf(stderr, "heat: rank %d: a gdap communicator over NCCL: %s\n", rank, gdap_last_error());
  }
  if (!failed) failed = heat_run_rank(o, comm, stream, device);
  gdap_comm_destroy(comm);
  if (stream) heat_cuda_stream_destroy(stream);
  if (nccl) heat_nccl_destroy(nccl);
  return failed;
}
#endif

int main(int argc, char** argv) {
  heat_options o;
  comm_mode mode;
  int64_t ranks = 0;
#ifdef HEAT_HAVE_MPI
  int mpi = 0;
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--comm=mpi") == 0 || (strcmp(argv[i], "--comm") == 0 && i + 1 < argc && strcmp(argv[i + 1], "mpi") == 0)) mpi = 1;
  if (mpi) {
    /* The host overlap's second thread computes only: MPI is called from this thread alone. */
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if (provided < MPI_THREAD_FUNNELED) {
      fprintf(stderr, "heat: this MPI gives no MPI_THREAD_FUNNELED\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
#endif
  int failed = parse(argc, argv, &o, &mode, &ranks);
  omp_set_max_active_levels(2); /* ranks as threads, each with a second thread beside its exchange */
  if (!failed) {
    if (mode == COMM_GROUP) failed = run_group(&o, ranks);
    else if (mode == COMM_NCCL) failed = run_nccl_threads(&o, ranks);
#ifdef HEAT_HAVE_MPI
    else failed = run_mpi(&o);
#else
    else {
      fprintf(stderr, "heat: this build has no MPI (gdap was installed without it)\n");
      failed = 1;
    }
#endif
  }
  fflush(stdout);
#ifdef HEAT_HAVE_MPI
  if (mpi) MPI_Finalize();
#endif
  return failed ? 1 : 0;
}
