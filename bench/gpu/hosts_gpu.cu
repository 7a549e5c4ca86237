// gdap's redistribution over NCCL with one process per GPU beside an NCCL all-to-all of the same bytes
// on the same communicator, float32 16384 x 16384 row blocks -> column blocks. Run by
// bench/gpu/hosts.sh twice: the processes as one host (gdap writes into its peers' sections through
// CUDA IPC) and, with GDAP_TEST_SEPARATE_HOSTS=1, each process a host of its own (gdap GDAP_TEST_HOST,
// NCCL NCCL_HOSTID) with NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1: the route of a job over several
// nodes, both gdap and the all-to-all on NCCL's network transport. Every result element is checked.
// Rank 0 prints a markdown row per engine: median of 20 after 3 warm-ups, each timed call ended by a
// stream synchronisation and an MPI barrier on every rank. gdap's time includes each rank's copy of
// the quarter it keeps, which the all-to-all leaves out (it moves only what crosses ranks). Sizes
// assume the rank count divides 16384.
#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int64_t kN = 16384;
constexpr int kWarmup = 3, kRepeats = 20;
const gdap_dtype kF32{GDAP_DTYPE_FLOAT, 32, 1};

#define CK(call)                                                                                           \
  do {                                                                                                     \
    if (int s_ = static_cast<int>(call); s_ != 0) {                                                        \
      std::fprintf(stderr, "%s:%d: %s failed (%d): %s\n", __FILE__, __LINE__, #call, s_, gdap_last_error()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                        \
    }                                                                                                      \
  } while (0)

gdap_dim block(int64_t P, int64_t c) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, kN, P, c, c * kN / P, (c + 1) * kN / P);
  return d;
}
gdap_dim whole() {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_undistributed(&d, kN);
  return d;
}

// The median ms of `call` over every rank: barrier, call, synchronise, barrier.
template <typename F>
double median_ms(cudaStream_t stream, F&& call) {
  std::vector<double> times;
  for (int it = 0; it < kWarmup + kRepeats; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    call();
    CK(cudaStreamSynchronize(stream));
    MPI_Barrier(MPI_COMM_WORLD);
    if (it >= kWarmup) times.push_back((MPI_Wtime() - t0) * 1e3);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Source element (i, j) holds (i * 7 + j * 13) % 1000003; the destination section of column block
// r is checked against it.
__global__ void fill(float* a, int64_t rows, int64_t row0) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < rows * kN; k += int64_t{gridDim.x} * blockDim.x) {
    a[k] = static_cast<float>(((row0 + k / kN) * 7 + (k % kN) * 13) % 1000003);
  }
}

int64_t wrong_in(const float* d, int64_t cols, int64_t col0) {
  std::vector<float> host(static_cast<size_t>(kN * cols));
  CK(cudaMemcpy(host.data(), d, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t j = 0; j < cols; ++j) wrong += host[static_cast<size_t>(i * cols + j)] != static_cast<float>((i * 7 + (col0 + j) * 13) % 1000003);
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool hosts = std::getenv("GDAP_TEST_SEPARATE_HOSTS") != nullptr;
  if (hosts) {  // as tests/move/redistribute_nccl_mpi.cpp: every process a host of its own
    const std::string host = "gdap-bench-host-" + std::to_string(rank);
    setenv("GDAP_TEST_HOST", host.c_str(), 1);
    setenv("NCCL_HOSTID", host.c_str(), 1);
  }
  CK(cudaSetDevice(rank));
  ncclUniqueId id;
  if (rank == 0) CK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t nccl = nullptr;
  CK(ncclCommInitRank(&nccl, size, id, rank));
  cudaStream_t stream = nullptr;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  gdap_comm* comm = nullptr;
  CK(gdap_comm_from_nccl(&comm, nccl, stream));
  const std::vector<gdap_dim> s = {block(size, rank), whole()}, d = {whole(), block(size, rank)};
  gdap_map *src_map = nullptr, *dst_map = nullptr;
  CK(gdap_map_create_collective(&src_map, comm, 2, s.data()));
  CK(gdap_map_create_collective(&dst_map, comm, 2, d.data()));
  gdap_plan* plan = nullptr;
  CK(gdap_plan_create(&plan, src_map, dst_map, kF32, rank));
  gdap_array *src = nullptr, *dst = nullptr;
  CK(gdap_array_create(&src, kF32, gdap_device{GDAP_DEVICE_CUDA, rank}, s.data(), 2));
  CK(gdap_array_create(&dst, kF32, gdap_device{GDAP_DEVICE_CUDA, rank}, d.data(), 2));
  void *sp = nullptr, *dp = nullptr;
  CK(gdap_array_data(&sp, src));
  CK(gdap_array_data(&dp, dst));
  const int64_t row0 = rank * kN / size, rows = (rank + 1) * kN / size - row0;
  fill<<<1024, 256>>>(static_cast<float*>(sp), rows, row0);
  CK(cudaDeviceSynchronize());
  const double gdap_ms = median_ms(stream, [&] { CK(gdap_redistribute(comm, plan, src, dst)); });
  const int64_t col0 = rank * kN / size, cols = (rank + 1) * kN / size - col0;
  // One more call into a destination of NaNs (every byte 0xff), so that the check sees a call's work.
  CK(cudaMemsetAsync(dp, 0xff, static_cast<size_t>(kN * cols) * sizeof(float), stream));
  CK(cudaStreamSynchronize(stream));
  MPI_Barrier(MPI_COMM_WORLD);
  CK(gdap_redistribute(comm, plan, src, dst));
  CK(cudaStreamSynchronize(stream));
  MPI_Barrier(MPI_COMM_WORLD);
  long long wrong = wrong_in(static_cast<float*>(dp), cols, col0), all_wrong = 0;
  MPI_Reduce(&wrong, &all_wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  // The all-to-all: the same bytes (each pair a quarter of a block) from and into contiguous buffers.
  const size_t pair = static_cast<size_t>(kN / size * kN / size) * sizeof(float);
  char *a2a_send = nullptr, *a2a_recv = nullptr;
  CK(cudaMalloc(&a2a_send, pair * size));
  CK(cudaMalloc(&a2a_recv, pair * size));
  const double a2a_ms = median_ms(stream, [&] {
    CK(ncclGroupStart());
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      CK(ncclSend(a2a_send + p * pair, pair, ncclChar, p, nccl, stream));
      CK(ncclRecv(a2a_recv + p * pair, pair, ncclChar, p, nccl, stream));
    }
    CK(ncclGroupEnd());
  });
  if (rank == 0) {
    const double across = static_cast<double>(pair) * size * (size - 1);
    const char* route = hosts ? "each process a host (NCCL network transport)" : "one host (gdap: CUDA IPC writes)";
    std::printf("| %d | %s | gdap redistribute | %.3f | %.0f | %.2f | %lld wrong |\n", size, route, gdap_ms, across / gdap_ms / 1e6,
                a2a_ms / gdap_ms, all_wrong);
    std::printf("| %d | %s | NCCL all-to-all, same bytes | %.3f | %.0f | 1.00 | |\n", size, route, a2a_ms, across / a2a_ms / 1e6);
  }
  cudaFree(a2a_send);
  cudaFree(a2a_recv);
  gdap_array_destroy(dst);
  gdap_array_destroy(src);
  gdap_plan_destroy(plan);
  gdap_map_destroy(dst_map);
  gdap_map_destroy(src_map);
  gdap_comm_destroy(comm);
  ncclCommDestroy(nccl);
  cudaStreamDestroy(stream);
  MPI_Finalize();
  return all_wrong == 0 ? 0 : 1;
}
