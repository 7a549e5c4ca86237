// Faults in a redistribution over MPI (run with mpirun -np 2; the mode is the argument). No rank
// may hang forever, and the source is never written:
//   early          rank 1 returns before its collective call: rank 0 gets GDAP_ERR_TIMEOUT within
//                  its timeout, and every later call on that communicator fails at once; while it
//                  waits it uses under 5% of a core (it used to spin in MPI_Testall: a whole core,
//                  which a late rank on an oversubscribed node needs)
//   inconsistent   rank 1 runs a plan of another redistribution (block -> block) than rank 0's
//                  (block -> cyclic): the agreement compares the plans' fingerprints, so both
//                  ranks get GDAP_ERR_INVALID_ARGUMENT naming rank 1 at once, nothing moves, and
//                  the communicator stays usable
//   interrupt      rank 1 returns before its collective call, and rank 0's interrupt check
//                  (gdap_comm_set_interrupt) says stop half a second into its wait: rank 0 gets
//                  GDAP_ERR_INTERRUPTED then, long before its timeout (60 s), the source is
//                  untouched, and every later call on that communicator fails at once
//   kill           rank 1 dies (SIGKILL) before its collective call: the job must end (mpirun
//                  ends rank 0), which tests/move/fault_kill.sh checks from outside
// Prints "fault MODE: rank R ok" per rank that saw what it should; exits non-zero otherwise.
#include <mpi.h>

#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>

#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kSize = 64;
constexpr double kTimeout = 2.0;  // seconds

int failures = 0;

void expect(bool ok, int rank, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d: FAILED: %s (last error: %s)\n", rank, what.c_str(), gdap_last_error());
}

// Rank r's dictionary of a 2-rank block or cyclic layout of kSize elements.
gdap_dim block_dim(int r) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, kSize, 2, r, r * kSize / 2, (r + 1) * kSize / 2);
  return d;
}

gdap_dim cyclic_dim(int r) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_cyclic(&d, kSize, 2, r, r, 0);
  return d;
}

struct Handles {
  gdap_map *src = nullptr, *dst = nullptr;
  gdap_plan* plan = nullptr;
  gdap_array *from = nullptr, *to = nullptr;
  ~Handles() {
    gdap_array_destroy(to);
    gdap_array_destroy(from);
    gdap_plan_destroy(plan);
    gdap_map_destroy(dst);
    gdap_map_destroy(src);
  }
};

double* values(gdap_array* a) {
  void* data = nullptr;
  gdap_array_data(&data, a);
  return static_cast<double*>(data);
}

// This rank's plan and sections: block -> cyclic, or block -> block when `still` (nothing moves
// between ranks). The source holds its global indices, the destination -1.
bool prepare(Handles& h, int rank, bool still) {
  const gdap_dim blocks[2] = {block_dim(0), block_dim(1)}, cyclics[2] = {cyclic_dim(0), cyclic_dim(1)};
  const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
  const gdap_device cpu = {GDAP_DEVICE_CPU, 0};
  const gdap_dim* to = still ? blocks : cyclics;
  if (gdap_map_create(&h.src, 2, 1, blocks) != GDAP_SUCCESS || gdap_map_create(&h.dst, 2, 1, to) != GDAP_SUCCESS ||
      gdap_plan_create(&h.plan, h.src, h.dst, f64, rank) != GDAP_SUCCESS ||
      gdap_array_create(&h.from, f64, cpu, &blocks[rank], 1) != GDAP_SUCCESS ||
      gdap_array_create(&h.to, f64, cpu, &to[rank], 1) != GDAP_SUCCESS) {
    return false;
  }
  for (int64_t i = 0; i < kSize / 2; ++i) values(h.from)[i] = static_cast<double>(rank * kSize / 2 + i);
  for (int64_t i = 0; i < kSize / 2; ++i) values(h.to)[i] = -1;
  return true;
}

bool source_untouched(Handles& h, int rank) {
  for (int64_t i = 0; i < kSize / 2; ++i) {
    if (values(h.from)[i] != static_cast<double>(rank * kSize / 2 + i)) return false;
  }
  return true;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Rank 0's side of a fault: its call times out within bounds, the source is untouched, and the
// communicator is broken afterwards.
// CPU seconds this thread has used (user and system).
double thread_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

void rank0_times_out(gdap_comm* comm, Handles& h, const char* phase) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_before = thread_cpu_seconds();
  const gdap_status s = gdap_redistribute(comm, h.plan, h.from, h.to);
  const double took = seconds_since(start), cpu = thread_cpu_seconds() - cpu_before;
  std::printf("fault early: rank 0 waited %.3f s for its timeout using %.3f s of CPU\n", took, cpu);
  expect(cpu < 0.05 * took, 0, "a rank waiting for a late peer backs off: " + std::to_string(cpu) + " s of CPU in " +
                                   std::to_string(took) + " s");
  expect(s == GDAP_ERR_TIMEOUT, 0, std::string("gdap_redistribute returns GDAP_ERR_TIMEOUT ") + phase);
  expect(std::strstr(gdap_last_error(), "did not complete within") != nullptr, 0, "the message says what timed out");
  expect(took >= kTimeout * 0.9 && took < kTimeout + 20, 0, "it returned after about the timeout, took " +
                                                                std::to_string(took) + " s");
  expect(source_untouched(h, 0), 0, "the source is untouched");
  const auto again = std::chrono::steady_clock::now();
  expect(gdap_comm_barrier(comm) == GDAP_ERR_TIMEOUT, 0, "a later call on the broken communicator fails");
  expect(std::strstr(gdap_last_error(), "broken") != nullptr, 0, "and says the communicator is broken");
  expect(seconds_since(again) < 1.0, 0, "at once");
}

void early(gdap_comm* comm, int rank) {
  Handles h;
  expect(prepare(h, rank, false), rank, "prepare");
  if (rank == 1) return;  // returns before the collective call
  rank0_times_out(comm, h, "while the ranks agree");
}

// An interrupt check that says stop once `at` has passed.
int after_deadline(void* at) {
  return std::chrono::steady_clock::now() >= *static_cast<std::chrono::steady_clock::time_point*>(at) ? 1 : 0;
}

void interrupt(gdap_comm* comm, int rank) {
  Handles h;
  expect(prepare(h, rank, false), rank, "prepare");
  if (rank == 1) return;  // returns before the collective call
  gdap_comm_set_timeout(comm, 60);
  const auto start = std::chrono::steady_clock::now();
  auto at = start + std::chrono::milliseconds(500);
  expect(gdap_comm_set_interrupt(comm, after_deadline, &at) == GDAP_SUCCESS, 0, "gdap_comm_set_interrupt");
  const gdap_status s = gdap_redistribute(comm, h.plan, h.from, h.to);
  const double took = seconds_since(start);
  expect(s == GDAP_ERR_INTERRUPTED, 0, "gdap_redistribute returns GDAP_ERR_INTERRUPTED");
  expect(std::strstr(gdap_last_error(), "was interrupted") != nullptr, 0, "the message says it was interrupted");
  expect(took >= 0.45 && took < 5, 0, "it returned soon after the check said stop, took " + std::to_string(took) + " s");
  expect(source_untouched(h, 0), 0, "the source is untouched");
  const auto again = std::chrono::steady_clock::now();
  expect(gdap_comm_barrier(comm) == GDAP_ERR_INTERRUPTED, 0, "a later call on the broken communicator fails");
  expect(std::strstr(gdap_last_error(), "broken") != nullptr, 0, "and says the communicator is broken");
  expect(seconds_since(again) < 1.0, 0, "at once");
  gdap_comm_set_interrupt(comm, nullptr, nullptr);
}

void inconsistent(gdap_comm* comm, int rank) {
  Handles h;
  expect(prepare(h, rank, rank == 1), rank, "prepare");
  const auto start = std::chrono::steady_clock::now();
  const gdap_status s = gdap_redistribute(comm, h.plan, h.from, h.to);
  expect(s == GDAP_ERR_INVALID_ARGUMENT, rank, "both ranks refuse plans of different redistributions");
  expect(std::strstr(gdap_last_error(), "plans are of different redistributions: rank 1's") != nullptr, rank, "the message names rank 1");
  expect(seconds_since(start) < kTimeout, rank, "at once, not after the timeout");
  expect(source_untouched(h, rank), rank, "the source is untouched");
  int64_t wrong = 0;
  for (int64_t i = 0; i < kSize / 2; ++i) wrong += values(h.to)[i] != -1.0;
  expect(wrong == 0, rank, "nothing moved into the destination");
  expect(gdap_comm_barrier(comm) == GDAP_SUCCESS, rank, "the communicator still works");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (nranks != 2 || (mode != "early" && mode != "inconsistent" && mode != "interrupt" && mode != "kill")) {
    if (rank == 0) std::fprintf(stderr, "usage: mpirun -np 2 fault_mpi early|inconsistent|interrupt|kill\n");
    MPI_Finalize();
    return 2;
  }
  gdap_comm* comm = nullptr;
  expect(gdap_comm_from_mpi(&comm, MPI_Comm_c2f(MPI_COMM_WORLD)) == GDAP_SUCCESS, rank, "gdap_comm_from_mpi");
  expect(gdap_comm_set_timeout(comm, kTimeout) == GDAP_SUCCESS, rank, "gdap_comm_set_timeout");
  if (mode == "early") early(comm, rank);
  if (mode == "inconsistent") inconsistent(comm, rank);
  if (mode == "interrupt") interrupt(comm, rank);
  if (mode == "kill") {
    if (rank == 1) std::raise(SIGKILL);
    gdap_comm_set_timeout(comm, 600);  // mpirun, not gdap's timeout, must end this rank
    Handles h;
    prepare(h, rank, false);
    gdap_redistribute(comm, h.plan, h.from, h.to);
    std::fprintf(stderr, "rank 0: FAILED: still running after rank 1 was killed\n");
  }
  // The broken communicator is left to the end of the process; the world is still usable.
  gdap_comm_destroy(comm);
  MPI_Barrier(MPI_COMM_WORLD);
  if (failures == 0) std::printf("fault %s: rank %d ok\n", mode.c_str(), rank);
  std::fflush(stdout);
  MPI_Finalize();
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
