// Faults in collectives over NCCL (label gpu; needs 2 GPUs). No rank may hang forever and the
// source is never written:
//   EarlyRankCostsTheOtherATimeout   rank 1 (a thread) returns before its collective call: rank 0
//                                    gets GDAP_ERR_TIMEOUT after about its timeout, every later
//                                    call fails at once, and ncclCommAbort on both communicators
//                                    (at once) then frees the GPU
//   OneRanksBadPlanIsEveryRanksError rank 1 passes a plan made for rank 0: it gets its own error,
//                                    rank 0 GDAP_ERR_REMOTE naming rank 1; nothing moves
//   KilledProcessCostsTheOtherATimeout  rank 1 is a process that dies (SIGKILL) after joining the
//                                    NCCL communicator: rank 0 gets GDAP_ERR_TIMEOUT
//   EarlyRankOnNonblockingCommunicators  the first case on nonblocking communicators that connect
//                                    lazily: NCCL answers ncclInProgress while it waits for rank 1,
//                                    and rank 0 gets GDAP_ERR_TIMEOUT
//   InterruptEndsTheWait             rank 1 returns early and rank 0's interrupt check says stop
//                                    half a second into its wait: GDAP_ERR_INTERRUPTED then, long
//                                    before the timeout; then both abort
//   AnOutputOverItsInputIsThatRanksError  rank 1's destination is its source's memory: its own
//                                    GDAP_ERR_INVALID_ARGUMENT, rank 0 GDAP_ERR_REMOTE; nothing moves
//   RanksInDifferentCallsAllFailAtOnce  rank 0 calls gdap_comm_barrier, rank 1 gdap_redistribute:
//                                    both get GDAP_ERR_INVALID_ARGUMENT naming both calls at their
//                                    first meeting (the control allgather), nothing moves, and the
//                                    communicator stays usable
// NCCL >= 2.22 connects lazily, inside the first call that needs a peer, and on a blocking
// communicator that call blocks in NCCL until the peer answers: the blocking cases therefore set
// NCCL_RUNTIME_CONNECT=0 (connect at initialisation), as docs/api.md tells users to.
// Each TEST runs in a process of its own (gtest_discover_tests), so the fork of the last one
// happens before this process has touched CUDA.
#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/dims.hpp"

#include <chrono>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kSize = 1 << 16;
constexpr double kTimeout = 2.0;  // seconds
const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

gdap_dim block_dim(int r) { return gdap_test::block(kSize, 2, r, r * kSize / 2, (r + 1) * kSize / 2); }
gdap_dim cyclic_dim(int r) { return gdap_test::cyclic(kSize, 2, r, r); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One rank's block -> cyclic redistribution on its GPU: the source holds its global indices.
struct Rank {
  int rank;
  gdap_comm* comm = nullptr;
  gdap_map *src = nullptr, *dst = nullptr;
  gdap_plan *plan = nullptr, *other_plan = nullptr;  // other_plan: the other rank's part
  gdap_array *from = nullptr, *to = nullptr;
  cudaStream_t stream = nullptr;

  Rank(int r, ncclComm_t nccl) : rank(r) {
    cudaSetDevice(r);
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    EXPECT_EQ(gdap_comm_from_nccl(&comm, nccl, stream), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(gdap_comm_set_timeout(comm, kTimeout), GDAP_SUCCESS);
    const gdap_dim blocks[2] = {block_dim(0), block_dim(1)}, cyclics[2] = {cyclic_dim(0), cyclic_dim(1)};
    const gdap_device gpu{GDAP_DEVICE_CUDA, r};
    EXPECT_EQ(gdap_map_create(&src, 2, 1, blocks), GDAP_SUCCESS);
    EXPECT_EQ(gdap_map_create(&dst, 2, 1, cyclics), GDAP_SUCCESS);
    EXPECT_EQ(gdap_plan_create(&plan, src, dst, kF64, r), GDAP_SUCCESS);
    EXPECT_EQ(gdap_plan_create(&other_plan, src, dst, kF64, 1 - r), GDAP_SUCCESS);
    EXPECT_EQ(gdap_array_create(&from, kF64, gpu, &blocks[r], 1), GDAP_SUCCESS);
    EXPECT_EQ(gdap_array_create(&to, kF64, gpu, &cyclics[r], 1), GDAP_SUCCESS);
    std::vector<double> host(kSize / 2);
    for (int64_t i = 0; i < kSize / 2; ++i) host[i] = static_cast<double>(r * kSize / 2 + i);
    cudaMemcpy(data(from), host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemset(data(to), 0xff, kSize / 2 * sizeof(double));
  }
  ~Rank() {
    // A broken communicator is destroyed only after the test aborted the NCCL communicator.
    gdap_array_destroy(to);
    gdap_array_destroy(from);
    gdap_plan_destroy(other_plan);
    gdap_plan_destroy(plan);
    gdap_map_destroy(dst);
    gdap_map_destroy(src);
    gdap_comm_destroy(comm);
    cudaStreamDestroy(stream);
  }
  static void* data(gdap_array* a) {
    void* p = nullptr;
    gdap_array_data(&p, a);
    return p;
  }
  // Reads device memory back on a nonblocking stream of its own: after a timeout NCCL's kernel may
  // still spin on this GPU until the abort, and the legacy default stream (cudaMemcpy) may wait
  // for it.
  bool read_back(void* host, const void* device, size_t bytes) {
    cudaSetDevice(rank);
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return false;
    const bool ok = cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, s) == cudaSuccess &&
                    cudaStreamSynchronize(s) == cudaSuccess;
    cudaStreamDestroy(s);
    return ok;
  }
  bool source_untouched() {
    std::vector<double> host(kSize / 2);
    if (!read_back(host.data(), data(from), host.size() * sizeof(double))) return false;
    for (int64_t i = 0; i < kSize / 2; ++i) {
      if (host[i] != static_cast<double>(rank * kSize / 2 + i)) return false;
    }
    return true;
  }
  bool destination_untouched() {
    std::vector<unsigned char> host(kSize / 2 * sizeof(double));
    if (!read_back(host.data(), data(to), host.size())) return false;
    for (unsigned char b : host) {
      if (b != 0xff) return false;
    }
    return true;
  }
};

// Rank 0's side of a missing peer: its call times out after about the timeout, the source is
// untouched, and the communicator is broken afterwards.
void expect_timeout(Rank& r0) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(gdap_redistribute(r0.comm, r0.plan, r0.from, r0.to), GDAP_ERR_TIMEOUT) << gdap_last_error();
  const double took = seconds_since(start);
  const std::string message = gdap_last_error();
  EXPECT_NE(message.find("the communicator's timeout (2 s)"), std::string::npos) << message;
  EXPECT_NE(message.find("ncclCommAbort"), std::string::npos) << message;
  EXPECT_GE(took, kTimeout * 0.9);
  EXPECT_LT(took, kTimeout + 20);
  EXPECT_TRUE(r0.source_untouched());
  EXPECT_TRUE(r0.destination_untouched());
  const auto again = std::chrono::steady_clock::now();
  EXPECT_EQ(gdap_comm_barrier(r0.comm), GDAP_ERR_TIMEOUT);
  EXPECT_NE(std::string(gdap_last_error()).find("broken"), std::string::npos) << gdap_last_error();
  EXPECT_LT(seconds_since(again), 1.0);
}

// The caller's policy after a timeout: abort the NCCL communicators, which ends their kernels. The
// communicators of one process are aborted together, a thread each: NCCL's abort and destroy wait
// for the process's other ranks of the communicator.
void abort_both(ncclComm_t (&nccl)[2]) {
  const auto abort = [](ncclComm_t c) {
    const ncclResult_t s = ncclCommAbort(c);
    EXPECT_TRUE(s == ncclSuccess || s == ncclInProgress) << ncclGetErrorString(s);
  };
  std::thread other([&] { abort(nccl[1]); });
  abort(nccl[0]);
  other.join();
  cudaSetDevice(0);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "GPU 0 still busy after ncclCommAbort";
}

// Rank 1 (a thread) prepares, then returns before the call: rank 0 times out, then both abort.
void rank_one_returns_early(ncclComm_t (&nccl)[2]) {
  Rank r0(0, nccl[0]);
  std::thread one([&] { Rank r1(1, nccl[1]); });
  one.join();
  cudaSetDevice(0);
  expect_timeout(r0);
  abort_both(nccl);
}

// Each TEST runs in a process of its own, so this reaches NCCL before it reads its parameters.
void connect_at_init() { setenv("NCCL_RUNTIME_CONNECT", "0", 1); }

TEST(FaultNccl, EarlyRankCostsTheOtherATimeout) {
  if (device_count() < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << device_count();
  connect_at_init();
  ncclComm_t nccl[2];
  const int devices[2] = {0, 1};
  ASSERT_EQ(ncclCommInitAll(nccl, 2, devices), ncclSuccess);
  rank_one_returns_early(nccl);
}

TEST(FaultNccl, EarlyRankOnNonblockingCommunicators) {
  if (device_count() < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << device_count();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t nccl[2] = {nullptr, nullptr};
  std::vector<std::thread> init;
  for (int r = 0; r < 2; ++r) {
    init.emplace_back([&, r] {
      cudaSetDevice(r);
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 0;
      ncclResult_t s = ncclCommInitRankConfig(&nccl[r], 2, id, r, &config);
      while (s == ncclInProgress) ncclCommGetAsyncError(nccl[r], &s);
      EXPECT_EQ(s, ncclSuccess) << ncclGetErrorString(s);
    });
  }
  for (auto& t : init) t.join();
  rank_one_returns_early(nccl);
}

TEST(FaultNccl, OneRanksBadPlanIsEveryRanksError) {
  if (device_count() < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << device_count();
  ncclComm_t nccl[2];
  const int devices[2] = {0, 1};
  ASSERT_EQ(ncclCommInitAll(nccl, 2, devices), ncclSuccess);
  gdap_status got[2] = {GDAP_SUCCESS, GDAP_SUCCESS};
  std::string said[2];
  bool untouched[2] = {false, false};
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      Rank me(r, nccl[r]);
      got[r] = gdap_redistribute(me.comm, r == 1 ? me.other_plan : me.plan, me.from, me.to);
      said[r] = gdap_last_error();
      cudaStreamSynchronize(me.stream);
      untouched[r] = me.source_untouched() && me.destination_untouched();
      // The communicator still works: both ranks agree again.
      EXPECT_EQ(gdap_comm_barrier(me.comm), GDAP_SUCCESS) << gdap_last_error();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(got[1], GDAP_ERR_INVALID_ARGUMENT) << said[1];
  EXPECT_EQ(got[0], GDAP_ERR_REMOTE) << said[0];
  EXPECT_NE(said[0].find("rank 1"), std::string::npos) << said[0];
  EXPECT_TRUE(untouched[0]);
  EXPECT_TRUE(untouched[1]);
  for (ncclComm_t c : nccl) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

TEST(FaultNccl, RanksInDifferentCallsAllFailAtOnce) {
  if (device_count() < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << device_count();
  ncclComm_t nccl[2];
  const int devices[2] = {0, 1};
  ASSERT_EQ(ncclCommInitAll(nccl, 2, devices), ncclSuccess);
  gdap_status got[2] = {GDAP_SUCCESS, GDAP_SUCCESS};
  std::string said[2];
  bool untouched[2] = {false, false};
  double took[2] = {0, 0};
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      Rank me(r, nccl[r]);
      const auto start = std::chrono::steady_clock::now();
      got[r] = r == 0 ? gdap_comm_barrier(me.comm) : gdap_redistribute(me.comm, me.plan, me.from, me.to);
      took[r] = seconds_since(start);
      said[r] = gdap_last_error();
      cudaStreamSynchronize(me.stream);
      untouched[r] = me.source_untouched() && me.destination_untouched();
      EXPECT_EQ(gdap_comm_barrier(me.comm), GDAP_SUCCESS) << gdap_last_error();
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(got[r], GDAP_ERR_INVALID_ARGUMENT) << said[r];
    EXPECT_NE(said[r].find("rank 0 is in gdap_comm_barrier (its meeting 1) but rank 1 in gdap_redistribute"),
              std::string::npos) << said[r];
    EXPECT_LT(took[r], kTimeout) << "at once, not after a timeout";
    EXPECT_TRUE(untouched[r]);
  }
  for (ncclComm_t c : nccl) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

int after_deadline(void* at) {
  return std::chrono::steady_clock::now() >= *static_cast<std::chrono::steady_clock::time_point*>(at) ? 1 : 0;
}

TEST(FaultNccl, InterruptEndsTheWait) {
  if (device_count() < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << device_count();
  connect_at_init();
  ncclComm_t nccl[2];
  const int devices[2] = {0, 1};
  ASSERT_EQ(ncclCommInitAll(nccl, 2, devices), ncclSuccess);
  {
    Rank r0(0, nccl[0]);
    std::thread one([&] { Rank r1(1, nccl[1]); });  // returns before its call
    one.join();
    cudaSetDevice(0);
    ASSERT_EQ(gdap_comm_set_timeout(r0.comm, 60), GDAP_SUCCESS);
    const auto start = std::chrono::steady_clock::now();
    auto at = start + std::chrono::milliseconds(500);
    ASSERT_EQ(gdap_comm_set_interrupt(r0.comm, after_deadline, &at), GDAP_SUCCESS);
    EXPECT_EQ(gdap_redistribute(r0.comm, r0.plan, r0.from, r0.to), GDAP_ERR_INTERRUPTED) << gdap_last_error();
    const double took = seconds_since(start);
    EXPECT_NE(std::string(gdap_last_error()).find("was interrupted"), std::string::npos) << gdap_last_error();
    EXPECT_GE(took, 0.45);
    EXPECT_LT(took, 5.0) << "soon after the check said stop, not at the 60 s timeout";
    EXPECT_TRUE(r0.source_untouched());
    EXPECT_EQ(gdap_comm_barrier(r0.comm), GDAP_ERR_INTERRUPTED) << "broken from then on";
    abort_both(nccl);
  }
}

TEST(FaultNccl, AnOutputOverItsInputIsThatRanksError) {
  if (device_count() < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << device_count();
  ncclComm_t nccl[2];
  const int devices[2] = {0, 1};
  ASSERT_EQ(ncclCommInitAll(nccl, 2, devices), ncclSuccess);
  gdap_status got[2] = {GDAP_SUCCESS, GDAP_SUCCESS};
  std::string said[2];
  bool untouched[2] = {false, false};
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      Rank me(r, nccl[r]);
      const gdap_dim cyc = cyclic_dim(r);
      gdap_array* over = nullptr;  // rank 1's destination: its own source's memory
      EXPECT_EQ(gdap_array_wrap(&over, Rank::data(me.from), kF64, {GDAP_DEVICE_CUDA, r}, nullptr, &cyc, 1), GDAP_SUCCESS);
      got[r] = gdap_redistribute(me.comm, me.plan, me.from, r == 1 ? over : me.to);
      said[r] = gdap_last_error();
      cudaStreamSynchronize(me.stream);
      untouched[r] = me.source_untouched() && me.destination_untouched();
      gdap_array_destroy(over);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(got[1], GDAP_ERR_INVALID_ARGUMENT) << said[1];
  EXPECT_NE(said[1].find("dst shares memory with src"), std::string::npos) << said[1];
  EXPECT_EQ(got[0], GDAP_ERR_REMOTE) << said[0];
  EXPECT_TRUE(untouched[0]);
  EXPECT_TRUE(untouched[1]);
  for (ncclComm_t c : nccl) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

TEST(FaultNccl, KilledProcessCostsTheOtherATimeout) {
  connect_at_init();  // before the fork: both processes connect at initialisation
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();  // before this process touches CUDA
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[1]);
    ncclUniqueId id;
    if (read(fds[0], &id, sizeof id) != static_cast<ssize_t>(sizeof id)) _exit(3);
    if (cudaSetDevice(1) != cudaSuccess) _exit(4);
    ncclComm_t comm;
    if (ncclCommInitRank(&comm, 2, id, 1) != ncclSuccess) _exit(5);
    std::raise(SIGKILL);  // dies after joining, before any collective call
    _exit(6);
  }
  close(fds[0]);
  if (device_count() < 2) {
    close(fds[1]);
    waitpid(child, nullptr, 0);
    GTEST_SKIP() << "needs 2 GPUs, this machine has " << device_count();
  }
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ASSERT_EQ(write(fds[1], &id, sizeof id), static_cast<ssize_t>(sizeof id));
  close(fds[1]);
  cudaSetDevice(0);
  ncclComm_t nccl;
  ASSERT_EQ(ncclCommInitRank(&nccl, 2, id, 0), ncclSuccess);
  {
    Rank r0(0, nccl);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "rank 1 ended with status " << status;
    expect_timeout(r0);
    EXPECT_EQ(ncclCommAbort(nccl), ncclSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "GPU 0 still busy after ncclCommAbort";
  }
}

}  // namespace
