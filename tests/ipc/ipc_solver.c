/* An MPI "solver" on 2 ranks that lends its sections to Python, in place, through IPC handles.
 *
 *   ipc_solver MODE PYTHON WORKER DIR      (MODE: host or cuda; run under mpiexec -n 2)
 *
 * Each rank owns rows [2r, 2r + 2) of a 4 x 6 float64 array ('b' rows, whole columns), fills its
 * section with 100 r + i, exports it (host: a named POSIX shared-memory segment from
 * gdap_array_create_shm; cuda: device memory from gdap_array_create) and writes the handle to
 * DIR/rank<r>.handle. It then starts a separate Python process (posix_spawn) running WORKER, which
 * opens the handle, checks the distribution it carries, and changes every element to 2 x + 1 with
 * NumPy (host) or CuPy (cuda). When the worker has exited the solver reads its own memory, which it
 * never copied to or from the worker: every element must be 2 (100 r + i) + 1. For host sections
 * the worker also reports the /dev/shm file and inode its mapping comes from, which must be the
 * solver's segment: the same physical pages, at an address of the worker's own.
 * Prints "ipc solver: passed" on rank 0 when every rank passed; exits non-zero otherwise. */
#include <gdap/gdap.h>

#include <mpi.h>

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef IPC_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

extern char** environ;

#define ROWS 2
#define COLS 6
#define COUNT (ROWS * COLS)

static int failures = 0;

#define CHECK(cond, ...)                                         \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "rank %d: ", rank);                        \
      fprintf(stderr, __VA_ARGS__);                              \
      fprintf(stderr, "\n");                                     \
      ++failures;                                                \
    }                                                            \
  } while (0)

static int run_worker(int rank, const char* python, const char* worker, const char* mode, const char* handle_path,
                      const char* result_path) {
  char rank_text[16];
  snprintf(rank_text, sizeof rank_text, "%d", rank);
  char* argv[] = {(char*)python, (char*)worker, (char*)mode, (char*)handle_path, rank_text, (char*)result_path, NULL};
  pid_t pid = 0;
  if (posix_spawnp(&pid, python, NULL, NULL, argv, environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5 || size != 2 || (strcmp(argv[1], "host") != 0 && strcmp(argv[1], "cuda") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 ipc_solver host|cuda PYTHON WORKER DIR\n");
    MPI_Finalize();
    return 2;
  }
  const char* mode = argv[1];
  const int on_device = strcmp(mode, "cuda") == 0;

  gdap_dim dims[2];
  gdap_dim_set_block(&dims[0], 2 * ROWS, 2, rank, ROWS * rank, ROWS * rank + ROWS);
  gdap_dim_set_undistributed(&dims[1], COLS);
  const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};

  double host[COUNT];
  for (int i = 0; i < COUNT; ++i) host[i] = 100.0 * rank + i;

  gdap_array* section = NULL;
  char shm_name[64];
  snprintf(shm_name, sizeof shm_name, "/gdap-ipc-solver-%ld-%d", (long)getpid(), rank);
  gdap_status s;
  if (on_device) {
#ifdef IPC_WITH_CUDA
    s = gdap_array_create(&section, f64, (gdap_device){GDAP_DEVICE_CUDA, 0}, dims, 2);
#else
    s = GDAP_ERR_UNSUPPORTED;
#endif
  } else {
    s = gdap_array_create_shm(&section, shm_name, f64, dims, 2);
  }
  CHECK(s == GDAP_SUCCESS, "creating the section: %s", gdap_last_error());
  void* data = NULL;
  if (s == GDAP_SUCCESS) gdap_array_data(&data, section);
  if (data != NULL) {
#ifdef IPC_WITH_CUDA
    if (on_device) CHECK(cudaMemcpy(data, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy in");
#endif
    if (!on_device) memcpy(data, host, sizeof host);
  }

  /* Export and hand the handle over through a file. */
  unsigned char handle[GDAP_IPC_HANDLE_SIZE];
  char handle_path[4096], result_path[4096];
  snprintf(handle_path, sizeof handle_path, "%s/rank%d.handle", argv[4], rank);
  snprintf(result_path, sizeof result_path, "%s/rank%d.result", argv[4], rank);
  if (section != NULL) {
    s = gdap_ipc_export(handle, sizeof handle, section);
    CHECK(s == GDAP_SUCCESS, "gdap_ipc_export: %s", gdap_last_error());
    FILE* f = fopen(handle_path, "wb");
    CHECK(f != NULL && fwrite(handle, 1, sizeof handle, f) == sizeof handle, "writing %s", handle_path);
    if (f != NULL) fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);  /* both handles written: the two workers run at once */

  if (failures == 0) {
    const int rc = run_worker(rank, argv[2], argv[3], mode, handle_path, result_path);
    CHECK(rc == 0, "the Python worker exited with %d", rc);
  }

  /* The solver's view of its own memory: the worker's writes, no copy made. */
  double after[COUNT];
  memset(after, 0, sizeof after);
  if (data != NULL) {
#ifdef IPC_WITH_CUDA
    if (on_device) CHECK(cudaMemcpy(after, data, sizeof after, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy out");
#endif
    if (!on_device) memcpy(after, data, sizeof after);
  }
  for (int i = 0; i < COUNT && failures == 0; ++i) {
    CHECK(after[i] == 2.0 * host[i] + 1.0, "element %d is %g, expected %g after the worker's write", i, after[i],
          2.0 * host[i] + 1.0);
  }

  /* Host: the worker's mapping is the solver's segment (same name and inode), not a copy. */
  FILE* r = failures == 0 ? fopen(result_path, "r") : NULL;
  if (failures == 0) CHECK(r != NULL, "the worker wrote no %s", result_path);
  if (r != NULL) {
    unsigned long long address = 0, inode = 0;
    char path[512] = "";
    CHECK(fscanf(r, "%llx %511s %llu", &address, path, &inode) == 3, "malformed %s", result_path);
    fclose(r);
    if (!on_device) {
      char expected[128];
      snprintf(expected, sizeof expected, "/dev/shm%s", shm_name);
      struct stat st;
      CHECK(stat(expected, &st) == 0, "stat %s", expected);
      CHECK(strcmp(path, expected) == 0, "the worker's memory maps '%s', not the solver's '%s'", path, expected);
      CHECK(inode == (unsigned long long)st.st_ino, "the worker's segment inode %llu != the solver's %llu", inode,
            (unsigned long long)st.st_ino);
      printf("rank %d: solver section at %p, worker's at 0x%llx, both %s (inode %llu)\n", rank, data, address, path,
             inode);
    } else {
      printf("rank %d: solver section at %p on the GPU, worker's at 0x%llx\n", rank, data, address);
    }
  }

  gdap_array_destroy(section);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && total == 0) printf("ipc solver: passed (%s)\n", mode);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
