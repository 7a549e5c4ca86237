// Reduce-scatter of partial sums on every GPU of one process: each GPU holds a whole float32
// 16384 x 16384 array (1 GiB) of its own partial sums, in gdap_map_create_replicated's layout,
// and the sums are wanted in row blocks, one per GPU. gdap_reduce_scatter over gdap NCCL
// communicators (here the source already lies in segment order and each result is its segment, so
// gdap hands both to ncclReduceScatter, with no buffer and no copy-out) beside
// ncclReduceScatter called directly on the same bytes, already in owner order (the floor: no
// buffer, no copy-out), in one run, interleaved. One thread and communicator per GPU
// (ncclCommInitAll). Prints a markdown row: median ms of 20 after 3 warm-ups, NCCL's bus
// bandwidth ((P - 1) / P x bytes / time) and the ratio gdap / NCCL. Checks gdap's last result
// element by element.
// On one GPU NCCL has nothing to move and returns at once: the row then shows gdap's own work.
#include "bench.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <barrier>
#include <cstdio>
#include <vector>

namespace {

constexpr int64_t kRows = 16384, kCols = 16384, kCount = kRows * kCols;
constexpr int kWarmup = 3, kRepeats = 20;

}  // namespace

int main() {
  const std::vector<ncclComm_t> nccl = nccl_on_every_gpu();
  const int gpus = static_cast<int>(nccl.size());
  gdap_map* replicated = nullptr;
  const int64_t shape[2] = {kRows, kCols};
  CK(gdap_map_create_replicated(&replicated, gpus, 2, shape));
  std::vector<double> gdap_ms(kRepeats), nccl_ms(kRepeats);
  std::barrier sync(gpus);
  std::atomic<int> wrong{0};
  on_every_gpu(nccl, [&](int r, cudaStream_t stream, gdap_comm* comm) {
    gdap_dim src[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT}, dst[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};
    for (int i = 0; i < 2; ++i) CK(gdap_map_dim(&src[i], replicated, r, i));
    const int64_t rows0 = kRows * r / gpus, rows1 = kRows * (r + 1) / gpus;
    CK(gdap_dim_set_block(&dst[0], kRows, gpus, r, rows0, rows1));
    CK(gdap_dim_set_undistributed(&dst[1], kCols));
    gdap_array *partial = nullptr, *block = nullptr;
    const gdap_dtype f32 = {GDAP_DTYPE_FLOAT, 32, 1};
    CK(gdap_array_create(&partial, f32, {GDAP_DEVICE_CUDA, r}, src, 2));
    CK(gdap_array_create(&block, f32, {GDAP_DEVICE_CUDA, r}, dst, 2));
    void *p = nullptr, *b = nullptr, *scratch = nullptr;
    CK(gdap_array_data(&p, partial));
    CK(gdap_array_data(&b, block));
    CK(cudaMalloc(&scratch, kCount * 4));
    fill_value<<<1024, 256, 0, stream>>>(static_cast<float*>(p), kCount, 1.0f);
    fill_value<<<1024, 256, 0, stream>>>(static_cast<float*>(scratch), kCount, 1.0f);
    CK(cudaStreamSynchronize(stream));
    const size_t per_rank = static_cast<size_t>(kCount / gpus);  // kRows is a multiple of the GPU count here
    auto timed = [&](auto&& call) { return timed_ms(sync, stream, call); };
    for (int it = 0; it < kWarmup + kRepeats; ++it) {
      const double g = timed([&] { CK(gdap_reduce_scatter(comm, partial, block, GDAP_REDUCE_SUM)); });
      // In place on a scratch copy (its sums compound from call to call, which costs NCCL nothing).
      const double n = timed([&] {
        CK(ncclReduceScatter(scratch, static_cast<float*>(scratch) + r * per_rank, per_rank, ncclFloat32, ncclSum,
                             nccl[static_cast<size_t>(r)], stream));
      });
      if (r == 0 && it >= kWarmup) {
        gdap_ms[static_cast<size_t>(it - kWarmup)] = g;
        nccl_ms[static_cast<size_t>(it - kWarmup)] = n;
      }
    }
    // Every element of the block is the sum of every GPU's 1.
    std::vector<float> got(static_cast<size_t>((rows1 - rows0) * kCols));
    CK(cudaMemcpy(got.data(), b, got.size() * 4, cudaMemcpyDeviceToHost));
    for (float v : got) wrong += v != static_cast<float>(gpus);
    CK(cudaFree(scratch));
    gdap_array_destroy(partial);
    gdap_array_destroy(block);
  });
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
  gdap_map_destroy(replicated);
  const double g = median(gdap_ms), n = median(nccl_ms);
  const double bus = static_cast<double>(gpus - 1) / gpus * static_cast<double>(kCount) * 4 / (n * 1e6);
  std::printf("| reduce-scatter, float32 1 GiB partial sums -> row blocks, %d GPUs | gdap_reduce_scatter (NCCL) %.3f ms | "
              "ncclReduceScatter %.3f ms | NCCL bus bandwidth %.0f GB/s | gdap / NCCL %.3f | %s |\n",
              gpus, g, n, bus, g / n, wrong == 0 ? "sums checked" : "WRONG SUMS");
  return wrong == 0 ? 0 : 1;
}
