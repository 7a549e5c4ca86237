// All-reduce of a replicated 1 GiB float32 section on every GPU of one process: gdap_allreduce
// over gdap NCCL communicators beside ncclAllReduce called directly on the same buffers, in one
// run (interleaved, so clocks and neighbours affect both alike). One thread and communicator per
// GPU (ncclCommInitAll). Prints a markdown table: median ms of 20 after 3 warm-ups, NCCL's bus
// bandwidth (2 (P - 1) / P x bytes / time) and the ratio gdap / NCCL. Checks the sum once.
#include "bench.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kCount = int64_t{1} << 28;  // 1 GiB of float32
constexpr int kWarmup = 3, kRepeats = 20;

}  // namespace

int main() {
  const std::vector<ncclComm_t> nccl = nccl_on_every_gpu();
  const int gpus = static_cast<int>(nccl.size());
  std::vector<double> gdap_ms(kRepeats), nccl_ms(kRepeats);
  std::barrier sync(gpus);
  std::atomic<int> wrong{0};  // counted by every rank's thread
  on_every_gpu(nccl, [&](int r, cudaStream_t stream, gdap_comm* comm) {
    gdap_dim d = GDAP_DIM_INIT;
    CK(gdap_dim_set_block(&d, kCount, 1, 0, 0, kCount));
    gdap_array* a = nullptr;
    CK(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 32, 1}, {GDAP_DEVICE_CUDA, r}, &d, 1));
    void* data = nullptr;
    CK(gdap_array_data(&data, a));
    auto timed = [&](auto&& call) { return timed_ms(sync, stream, call); };
    for (int it = 0; it < kWarmup + kRepeats; ++it) {
      fill_value<<<1024, 256, 0, stream>>>(static_cast<float*>(data), kCount, 1.0f);
      CK(cudaStreamSynchronize(stream));  // the fill is not gdap's time
      const double g = timed([&] { CK(gdap_allreduce(comm, a, GDAP_REDUCE_SUM)); });
      const double n = timed(
          [&] { CK(ncclAllReduce(data, data, kCount, ncclFloat32, ncclSum, nccl[static_cast<size_t>(r)], stream)); });
      if (r == 0 && it >= kWarmup) {
        gdap_ms[static_cast<size_t>(it - kWarmup)] = g;
        nccl_ms[static_cast<size_t>(it - kWarmup)] = n;
      }
    }
    // One checked run: every element becomes the GPU count.
    fill_value<<<1024, 256, 0, stream>>>(static_cast<float*>(data), kCount, 1.0f);
    CK(gdap_allreduce(comm, a, GDAP_REDUCE_SUM));
    float probe[2] = {};
    CK(cudaMemcpyAsync(&probe[0], data, 4, cudaMemcpyDeviceToHost, stream));
    CK(cudaMemcpyAsync(&probe[1], static_cast<float*>(data) + kCount - 1, 4, cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    if (probe[0] != static_cast<float>(gpus) || probe[1] != static_cast<float>(gpus)) ++wrong;
    gdap_array_destroy(a);
  });
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
  const double g = median(gdap_ms), n = median(nccl_ms);
  const double bus = 2.0 * (gpus - 1) / gpus * static_cast<double>(kCount) * 4 / (n * 1e6);
  std::printf("| all-reduce, float32 1 GiB, %d GPUs | gdap_allreduce (NCCL) %.3f ms | ncclAllReduce %.3f ms | "
              "NCCL bus bandwidth %.0f GB/s | gdap / NCCL %.3f | %s |\n",
              gpus, g, n, bus, g / n, wrong == 0 ? "sum checked" : "WRONG SUM");
  return wrong == 0 ? 0 : 1;
}
