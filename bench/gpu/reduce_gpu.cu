// Global reductions of device sections (gdap_reduce_axes over NCCL), one thread and communicator
// per GPU of one process (ncclCommInitAll), beside what a user would write by hand on the same
// local data in the same run: CUB's reduction then ncclAllReduce of the partial results, or
// cuBLAS gemv against a vector of ones for column sums. Each GPU holds 1 GiB of float32 (rows in
// blocks). Cases:
//   all:     the whole array to one value (few kept elements: sliced blocks, then a second pass)
//   rows:    64 x 4M, over the last axis (64 kept)       beside cub::DeviceSegmentedReduce::Sum
//   columns: 16384 x 16384, over the first axis (16384 kept) beside cublasSgemv (A^T x ones)
// Prints a markdown table: median ms of 20 after 3 warm-ups, the peer's, the ratio, and the read
// floor (the local bytes over the GPU's read bandwidth, taken as twice the bytes per second of a
// device-to-device copy of the same size, which reads and writes them). Checks each result once.
#include "bench.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cublas_v2.h>
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kLocal = int64_t{1} << 28;  // float32 elements per GPU: 1 GiB
constexpr int kWarmup = 3, kRepeats = 20;

// Small integers (exact float32 sums at these sizes): element i of row r is (r + i) % 3 - 1.
__global__ void fill(float* x, int64_t rows, int64_t cols, int64_t row0) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * cols; i += int64_t{gridDim.x} * blockDim.x) {
    x[i] = static_cast<float>((row0 + i / cols + i % cols) % 3 - 1);
  }
}

struct Case {
  std::string name;
  int64_t rows, cols;  // global rows (in blocks over the GPUs) and columns
  int axis;            // -1: every axis; 0: over rows; 1: over columns
};

// The exact result of element k of case c (over all rows of all GPUs), from the fill's formula.
double expected(const Case& c, int64_t rows, int64_t k) {
  auto term = [](int64_t r, int64_t i) { return static_cast<double>((r + i) % 3 - 1); };
  double s = 0;
  if (c.axis == 1) {
    for (int64_t i = 0; i < c.cols; ++i) s += term(k, i);
  } else if (c.axis == 0) {
    for (int64_t r = 0; r < rows; ++r) s += term(r, k);
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < c.cols; ++i) s += term(r, i);
    }
  }
  return s;
}

}  // namespace

int main() {
  const std::vector<ncclComm_t> nccl = nccl_on_every_gpu();
  const int gpus = static_cast<int>(nccl.size());
  const std::vector<Case> cases = {
      {"all", int64_t{gpus} * 16384, 16384, -1},
      {"rows", int64_t{gpus} * 64, kLocal / 64, 1},
      {"columns", int64_t{gpus} * 16384, 16384, 0},
  };
  std::printf("| case, float32, %d GPU(s), 1 GiB each | gdap_reduce_axes | hand-written peer | gdap / peer | read floor | "
              "gdap / floor | check |\n|---|---|---|---|---|---|---|\n",
              gpus);
  for (const Case& c : cases) {
    std::vector<double> gdap_ms(kRepeats), peer_ms(kRepeats);
    double copy_ms = 0;
    std::barrier sync(gpus);
    std::atomic<int> wrong{0};  // counted by every rank's thread
    std::string peer_name;
    on_every_gpu(nccl, [&](int r, cudaStream_t stream, gdap_comm* comm) {
      const int64_t local_rows = c.rows / gpus, row0 = local_rows * r;
      gdap_dim d[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};
      CK(gdap_dim_set_block(&d[0], c.rows, gpus, r, row0, row0 + local_rows));
      CK(gdap_dim_set_block(&d[1], c.cols, 1, 0, 0, c.cols));
      const gdap_dtype f32{GDAP_DTYPE_FLOAT, 32, 1};
      const gdap_device dev{GDAP_DEVICE_CUDA, r};
      gdap_array *a = nullptr, *out = nullptr;
      CK(gdap_array_create(&a, f32, dev, d, 2));
      const int64_t nkept = c.axis == 1 ? c.rows : c.axis == 0 ? c.cols : 1;
      // The kept axis replicated on every GPU: unstructured over the GPUs, each holding every index
      // (a block over a grid of one rank would describe one rank, which 4 ranks may not give).
      std::vector<int64_t> every(static_cast<size_t>(nkept));
      std::iota(every.begin(), every.end(), int64_t{0});
      gdap_dim kept = GDAP_DIM_INIT;
      if (c.axis >= 0) CK(gdap_dim_set_unstructured(&kept, nkept, gpus, r, every.data(), nkept, 0));
      CK(gdap_array_create(&out, f32, dev, &kept, c.axis < 0 ? 0 : 1));
      void *data = nullptr, *result = nullptr;
      CK(gdap_array_data(&data, a));
      CK(gdap_array_data(&result, out));
      float* x = static_cast<float*>(data);
      fill<<<1024, 256, 0, stream>>>(x, local_rows, c.cols, row0);
      const int64_t axis = c.axis;
      // The peer's buffers: its partial results (padded to the kept count) and scratch.
      float* partial = nullptr;
      CK(cudaMalloc(&partial, static_cast<size_t>(nkept) * 4));
      std::vector<int> offsets;
      for (int64_t k = 0; k <= local_rows; ++k) offsets.push_back(static_cast<int>(k * c.cols));
      int* d_offsets = nullptr;
      CK(cudaMalloc(&d_offsets, offsets.size() * 4));
      CK(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * 4, cudaMemcpyHostToDevice));
      float* ones = nullptr;
      CK(cudaMalloc(&ones, static_cast<size_t>(local_rows) * 4));
      std::vector<float> host_ones(static_cast<size_t>(local_rows), 1.0f);
      CK(cudaMemcpy(ones, host_ones.data(), host_ones.size() * 4, cudaMemcpyHostToDevice));
      cublasHandle_t blas = nullptr;
      CK(cublasCreate(&blas));
      CK(cublasSetStream(blas, stream));
      size_t temp_bytes = 0;
      if (c.axis < 0) {
        CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, x, partial, static_cast<int>(kLocal), stream));
      } else if (c.axis == 1) {
        CK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, x, partial + row0, static_cast<int>(local_rows),
                                           d_offsets, d_offsets + 1, stream));
      }
      void* temp = nullptr;
      CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 16)));
      auto peer = [&] {
        if (c.axis < 0) {
          CK(cub::DeviceReduce::Sum(temp, temp_bytes, x, partial, static_cast<int>(kLocal), stream));
        } else if (c.axis == 1) {
          CK(cudaMemsetAsync(partial, 0, static_cast<size_t>(nkept) * 4, stream));
          CK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, x, partial + row0, static_cast<int>(local_rows),
                                             d_offsets, d_offsets + 1, stream));
        } else {
          // Column sums: the C-order rows x cols block is a cols x rows column-major matrix.
          const float one = 1, zero = 0;
          CK(cublasSgemv(blas, CUBLAS_OP_N, static_cast<int>(c.cols), static_cast<int>(local_rows), &one, x,
                         static_cast<int>(c.cols), ones, 1, &zero, partial, 1));
        }
        CK(ncclAllReduce(partial, partial, static_cast<size_t>(nkept), ncclFloat32, ncclSum,
                         nccl[static_cast<size_t>(r)], stream));
      };
      auto timed = [&](auto&& call) { return timed_ms(sync, stream, call); };
      for (int it = 0; it < kWarmup + kRepeats; ++it) {
        const double g = timed([&] {
          CK(gdap_reduce_axes(comm, a, out, GDAP_REDUCE_SUM, c.axis < 0 ? nullptr : &axis, c.axis < 0 ? 0 : 1));
        });
        const double p = timed(peer);
        if (r == 0 && it >= kWarmup) {
          gdap_ms[static_cast<size_t>(it - kWarmup)] = g;
          peer_ms[static_cast<size_t>(it - kWarmup)] = p;
        }
      }
      if (r == 0) {
        // The read floor: a device-to-device copy of the local bytes reads and writes each once.
        std::vector<double> copies;
        float* scratch = nullptr;
        CK(cudaMalloc(&scratch, static_cast<size_t>(kLocal) * 4));
        for (int it = 0; it < 5; ++it) {
          copies.push_back(timed([&] {
            CK(cudaMemcpyAsync(scratch, x, static_cast<size_t>(kLocal) * 4, cudaMemcpyDeviceToDevice, stream));
          }));
        }
        copy_ms = median(copies);
        CK(cudaFree(scratch));
      } else {
        for (int it = 0; it < 5; ++it) timed([] {});
      }
      // Check gdap's result and the peer's against the formula.
      CK(gdap_reduce_axes(comm, a, out, GDAP_REDUCE_SUM, c.axis < 0 ? nullptr : &axis, c.axis < 0 ? 0 : 1));
      peer();
      std::vector<float> got(static_cast<size_t>(nkept)), theirs(static_cast<size_t>(nkept));
      CK(cudaMemcpyAsync(got.data(), result, got.size() * 4, cudaMemcpyDeviceToHost, stream));
      CK(cudaMemcpyAsync(theirs.data(), partial, theirs.size() * 4, cudaMemcpyDeviceToHost, stream));
      CK(cudaStreamSynchronize(stream));
      for (int64_t k = 0; k < nkept; k += std::max<int64_t>(1, nkept / 97)) {
        const double want = expected(c, c.rows, k);
        if (got[static_cast<size_t>(k)] != want || theirs[static_cast<size_t>(k)] != want) ++wrong;
      }
      cublasDestroy(blas);
      cudaFree(temp);
      cudaFree(ones);
      cudaFree(d_offsets);
      cudaFree(partial);
      gdap_array_destroy(out);
      gdap_array_destroy(a);
    });
    peer_name = c.axis < 0 ? "cub::DeviceReduce::Sum + ncclAllReduce" : c.axis == 1 ? "cub::DeviceSegmentedReduce::Sum + ncclAllReduce"
                                                                                    : "cublasSgemv (ones) + ncclAllReduce";
    const double g = median(gdap_ms), p = median(peer_ms), floor = copy_ms / 2;
    std::printf("| %s: %lld x %lld, %s | %.3f ms | %s %.3f ms | %.2f | %.3f ms | %.2f | %s |\n", c.name.c_str(),
                static_cast<long long>(c.rows), static_cast<long long>(c.cols),
                c.axis < 0 ? "every axis" : c.axis == 0 ? "over rows" : "over columns", g, peer_name.c_str(), p, g / p, floor,
                g / floor, wrong == 0 ? "sums checked" : "WRONG SUM");
    if (wrong != 0) return 1;
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
  return 0;
}
