// All-reduce of a replicated 1 GiB float32 section on every GPU of one process: gdap_allreduce
// over gdap NCCL communicators beside ncclAllReduce called directly on the same buffers, in one
// run (interleaved, so clocks and neighbours affect both alike). One thread and communicator per
// GPU (ncclCommInitAll). Prints a markdown table: median ms of 20 after 3 warm-ups, NCCL's bus
// bandwidth (2 (P - 1) / P x bytes / time) and the ratio gdap / NCCL. Checks the sum once.
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

namespace {

constexpr int64_t kCount = int64_t{1} << 28;  // 1 GiB of float32
constexpr int kWarmup = 3, kRepeats = 20;

#define CK(call)                                                                                       \
  do {                                                                                                 \
    if (int s_ = (call); s_ != 0) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s failed (%d): %s\n", __FILE__, __LINE__, #call, s_, gdap_last_error()); \
      std::exit(1);                                                                                    \
    }                                                                                                  \
  } while (0)

__global__ void fill(float* x, int64_t n, float v) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) x[i] = v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  int gpus = 0;
  CK(cudaGetDeviceCount(&gpus));
  std::vector<ncclComm_t> nccl(static_cast<size_t>(gpus));
  CK(ncclCommInitAll(nccl.data(), gpus, nullptr));
  std::vector<double> gdap_ms(kRepeats), nccl_ms(kRepeats);
  std::barrier sync(gpus);
  int wrong = 0;
  std::vector<std::thread> threads;
  for (int r = 0; r < gpus; ++r) {
    threads.emplace_back([&, r] {
      CK(cudaSetDevice(r));
      cudaStream_t stream = nullptr;
      CK(cudaStreamCreate(&stream));
      gdap_comm* comm = nullptr;
      CK(gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], stream));
      gdap_dim d = GDAP_DIM_INIT;
      CK(gdap_dim_set_block(&d, kCount, 1, 0, 0, kCount));
      gdap_array* a = nullptr;
      CK(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 32, 1}, {GDAP_DEVICE_CUDA, r}, &d, 1));
      void* data = nullptr;
      CK(gdap_array_data(&data, a));
      auto timed = [&](auto&& call) {
        sync.arrive_and_wait();
        const auto t0 = std::chrono::steady_clock::now();
        call();
        CK(cudaStreamSynchronize(stream));
        sync.arrive_and_wait();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      };
      for (int it = 0; it < kWarmup + kRepeats; ++it) {
        fill<<<1024, 256, 0, stream>>>(static_cast<float*>(data), kCount, 1.0f);
        const double g = timed([&] { CK(gdap_allreduce(comm, a, GDAP_REDUCE_SUM)); });
        const double n = timed([&] {
          CK(ncclAllReduce(data, data, kCount, ncclFloat32, ncclSum, nccl[static_cast<size_t>(r)], stream));
        });
        if (r == 0 && it >= kWarmup) {
          gdap_ms[static_cast<size_t>(it - kWarmup)] = g;
          nccl_ms[static_cast<size_t>(it - kWarmup)] = n;
        }
      }
      // One checked run: every element becomes the GPU count.
      fill<<<1024, 256, 0, stream>>>(static_cast<float*>(data), kCount, 1.0f);
      CK(gdap_allreduce(comm, a, GDAP_REDUCE_SUM));
      float probe[2] = {};
      CK(cudaMemcpyAsync(&probe[0], data, 4, cudaMemcpyDeviceToHost, stream));
      CK(cudaMemcpyAsync(&probe[1], static_cast<float*>(data) + kCount - 1, 4, cudaMemcpyDeviceToHost, stream));
      CK(cudaStreamSynchronize(stream));
      if (probe[0] != static_cast<float>(gpus) || probe[1] != static_cast<float>(gpus)) ++wrong;
      gdap_array_destroy(a);
      gdap_comm_destroy(comm);
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
  const double g = median(gdap_ms), n = median(nccl_ms);
  const double bus = 2.0 * (gpus - 1) / gpus * static_cast<double>(kCount) * 4 / (n * 1e6);
  std::printf("| all-reduce, float32 1 GiB, %d GPUs | gdap_allreduce (NCCL) %.3f ms | ncclAllReduce %.3f ms | "
              "NCCL bus bandwidth %.0f GB/s | gdap / NCCL %.3f | %s |\n",
              gpus, g, n, bus, g / n, wrong == 0 ? "sum checked" : "WRONG SUM");
  return wrong == 0 ? 0 : 1;
}
