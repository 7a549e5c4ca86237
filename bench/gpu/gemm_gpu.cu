// Distributed GEMM over every GPU of one process (P GPUs, or argv[1]): gdap_gemm_execute over NCCL
// (one communicator per GPU from ncclCommInitAll, square-ish R x C grid of even blocks, panels of
// 2048) beside single-GPU cuBLAS of the whole product on GPU 0, timed in the same run. float64 and
// float32 (exact: CUBLAS_COMPUTE_32F, no TF32) at 16384^3 and 32768^3 (argv[2..] overrides sizes).
// Prints a markdown table: median seconds of 3 runs after a warm-up (every stream synchronised),
// TFLOP/s, and gdap / (P x cuBLAS) -- the target is >= 0.85 at 32768^3.
#include "bench.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kWarmup = 1, kRepeats = 3;

template <typename T>
__global__ void fill(T* p, int64_t n, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u + seed;
    x ^= x >> 13;
    p[i] = static_cast<T>(static_cast<int>(x % 2001u) - 1000) * static_cast<T>(1e-3);
  }
}

template <typename T>
T* device_matrix(int64_t elems, uint32_t seed) {
  T* p = nullptr;
  CK(cudaMalloc(&p, static_cast<size_t>(std::max<int64_t>(elems, 1)) * sizeof(T)));
  fill<T><<<1024, 256>>>(p, elems, seed);
  CK(cudaGetLastError());
  return p;
}

template <typename T>
double cublas_seconds(int64_t n) {
  CK(cudaSetDevice(0));
  T* a = device_matrix<T>(n * n, 1);
  T* b = device_matrix<T>(n * n, 2);
  T* c = device_matrix<T>(n * n, 3);
  cublasHandle_t h;
  CK(cublasCreate(&h));
  const T one = 1, zero = 0;
  const cudaDataType_t type = sizeof(T) == 8 ? CUDA_R_64F : CUDA_R_32F;
  const cublasComputeType_t compute = sizeof(T) == 8 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  std::vector<double> times;
  for (int i = 0; i < kWarmup + kRepeats; ++i) {
    CK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    CK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, b, type, int(n), a, type, int(n), &zero, c,
                    type, int(n), compute, CUBLAS_GEMM_DEFAULT));
    CK(cudaDeviceSynchronize());
    if (i >= kWarmup) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  cublasDestroy(h);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return median(times);
}

gdap_dim even(int64_t size, int64_t parts, int64_t q) {
  const int64_t step = (size + parts - 1) / parts;
  gdap_dim d = GDAP_DIM_INIT;
  const int64_t start = std::min(size, q * step);
  gdap_dim_set_block(&d, size, parts, q, start, std::min(size, start + step));
  return d;
}

template <typename T>
double gdap_seconds(int64_t n, int p, int64_t rows, int64_t cols, std::vector<ncclComm_t>& nccl, gdap_gemm_stats& stats) {
  std::vector<gdap_dim> dims;
  for (int64_t r = 0; r < p; ++r) {
    dims.push_back(even(n, rows, r / cols));
    dims.push_back(even(n, cols, r % cols));
  }
  gdap_map* map = nullptr;
  CK(gdap_map_create(&map, p, 2, dims.data()));
  const gdap_dtype dtype{GDAP_DTYPE_FLOAT, sizeof(T) * 8, 1};
  std::vector<double> times;
  std::barrier sync(p);
  std::vector<std::chrono::steady_clock::time_point> starts(kWarmup + kRepeats);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      CK(cudaSetDevice(r));
      cudaStream_t stream;
      CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      gdap_comm* comm = nullptr;
      CK(gdap_comm_from_nccl(&comm, nccl[r], stream));
      const gdap_dim* mine = &dims[static_cast<size_t>(2 * r)];
      int64_t m = 0, k = 0;
      gdap_dim_local_extent(&m, &mine[0]);
      gdap_dim_local_extent(&k, &mine[1]);
      T* a = device_matrix<T>(m * k, 10 + r);
      T* b = device_matrix<T>(m * k, 20 + r);
      T* c = device_matrix<T>(m * k, 30 + r);
      CK(cudaDeviceSynchronize());
      gdap_array *aa, *ab, *ac;
      const gdap_device dev{GDAP_DEVICE_CUDA, r};
      CK(gdap_array_wrap(&aa, a, dtype, dev, nullptr, mine, 2));
      CK(gdap_array_wrap(&ab, b, dtype, dev, nullptr, mine, 2));
      CK(gdap_array_wrap(&ac, c, dtype, dev, nullptr, mine, 2));
      gdap_gemm_options o = GDAP_GEMM_OPTIONS_INIT;
      o.panel_width = 2048;
      gdap_gemm* g = nullptr;
      CK(gdap_gemm_create(&g, comm, map, map, map, dtype, &o));
      if (r == 0) CK(gdap_gemm_stats_get(&stats, g));
      for (int i = 0; i < kWarmup + kRepeats; ++i) {
        sync.arrive_and_wait();
        if (r == 0) starts[i] = std::chrono::steady_clock::now();
        CK(gdap_gemm_execute(comm, g, 1.0, aa, ab, 0.0, ac));
        CK(cudaStreamSynchronize(stream));
        sync.arrive_and_wait();
        if (r == 0 && i >= kWarmup) {
          times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - starts[i]).count());
        }
      }
      gdap_gemm_destroy(g);
      gdap_array_destroy(aa);
      gdap_array_destroy(ab);
      gdap_array_destroy(ac);
      cudaFree(a);
      cudaFree(b);
      cudaFree(c);
      gdap_comm_destroy(comm);
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
  gdap_map_destroy(map);
  return median(times);
}

template <typename T>
void row(const char* name, int64_t n, int p, int64_t rows, int64_t cols, std::vector<ncclComm_t>& nccl) {
  const double flop = 2.0 * double(n) * double(n) * double(n);
  const double single = cublas_seconds<T>(n);
  gdap_gemm_stats stats = GDAP_GEMM_STATS_INIT;
  const double dist = gdap_seconds<T>(n, p, rows, cols, nccl, stats);
  const double ts = flop / single / 1e12, td = flop / dist / 1e12;
  std::printf("| %s | %lld^3 | %d (%lldx%lld) | %.3f | %.1f | %.3f | %.1f | %.3f | %lld |\n", name, (long long)n, p,
              (long long)rows, (long long)cols, single, ts, dist, td, td / (p * ts), (long long)stats.panels);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int gpus = 0;
  CK(cudaGetDeviceCount(&gpus));
  const int p = argc > 1 ? std::atoi(argv[1]) : gpus;
  std::vector<int64_t> sizes{16384, 32768};
  if (argc > 2) {
    sizes.clear();
    for (int i = 2; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  }
  int64_t rows = 1;
  for (int64_t d = 1; d * d <= p; ++d) {
    if (p % d == 0) rows = d;
  }
  const int64_t cols = p / rows;
  std::vector<ncclComm_t> nccl(static_cast<size_t>(p));
  CK(ncclCommInitAll(nccl.data(), p, nullptr));
  std::printf("| dtype | size | GPUs (grid) | cuBLAS 1 GPU s | TFLOP/s | gdap s | TFLOP/s | gdap / (P x cuBLAS) | panels |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int64_t n : sizes) {
    row<double>("float64", n, p, rows, cols, nccl);
    row<float>("float32", n, p, rows, cols, nccl);
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
  return 0;
}
