// What the GPU benchmarks share: a check that exits naming the failed call and gdap's last error,
// a fill kernel, the median, a thread per GPU with its stream and gdap communicator, and the time of one call on
// every rank of one process (threads meeting at a barrier
// before and after, the stream synchronised: a timed call ends when every rank's work is done).
#pragma once

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CK(call)                                                                                         \
  do {                                                                                                   \
    if (int s_ = static_cast<int>(call); s_ != 0) {                                                      \
      std::fprintf(stderr, "%s:%d: %s failed (%d): %s\n", __FILE__, __LINE__, #call, s_, gdap_last_error()); \
      std::fflush(stderr);                                                                               \
      std::_Exit(1); /* not exit(): other GPUs' threads are still running */                            \
    }                                                                                                    \
  } while (0)

// x[0, n) = v, on the stream the launch names.
__global__ void fill_value(float* x, int64_t n, float v) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) x[i] = v;
}

// An undistributed dimension of `n`, and rank c's even block of `n` over P ranks.
inline gdap_dim whole_dim(int64_t n) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_undistributed(&d, n);
  return d;
}
inline gdap_dim block_dim(int64_t n, int64_t P, int64_t c) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, n, P, c, c * n / P, (c + 1) * n / P);
  return d;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Milliseconds from every rank starting `call` to every rank's stream having finished it.
template <typename F>
double timed_ms(std::barrier<>& sync, cudaStream_t stream, F&& call) {
  sync.arrive_and_wait();
  const auto t0 = std::chrono::steady_clock::now();
  call();
  CK(cudaStreamSynchronize(stream));
  sync.arrive_and_wait();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// One NCCL communicator per GPU present, all of one clique (ncclCommInitAll): rank r on GPU r.
inline std::vector<ncclComm_t> nccl_on_every_gpu() {
  int gpus = 0;
  CK(cudaGetDeviceCount(&gpus));
  std::vector<ncclComm_t> nccl(static_cast<size_t>(gpus));
  CK(ncclCommInitAll(nccl.data(), gpus, nullptr));
  return nccl;
}

// f(rank, stream, comm) on one thread per NCCL rank (rank r on GPU r), each with a stream and a
// gdap communicator of its own, destroyed after f returns.
template <typename F>
void on_every_gpu(const std::vector<ncclComm_t>& nccl, F&& f) {
  std::vector<std::thread> threads;
  for (int r = 0; r < static_cast<int>(nccl.size()); ++r) {
    threads.emplace_back([&, r] {
      CK(cudaSetDevice(r));
      cudaStream_t stream = nullptr;
      CK(cudaStreamCreate(&stream));
      gdap_comm* comm = nullptr;
      CK(gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], stream));
      f(r, stream, comm);
      gdap_comm_destroy(comm);
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
}
