// All-reduce of a replicated float32 section on every GPU of one process: gdap_allreduce over gdap
// NCCL communicators beside ncclAllReduce called directly on the same buffers, in one run
// (interleaved, so clocks and neighbours affect both alike). One thread and communicator per GPU
// (ncclCommInitAll). Sum and max, 1 GiB (bandwidth) and 4 KiB (latency). gdap's float max first
// scans every rank's section for NaN (one read, and a host wait for the flag before the agreement
// that carries it): with none anywhere it is NCCL's own float max; with one (the "one NaN on rank 0"
// rows) it maps the values to order-preserving integer keys and back around NCCL's integer max, so
// that the NaN wins (NCCL's own float max drops it), and those rows price the two passes. Prints a
// markdown table: median ms of 20 after 3 warm-ups, NCCL's bus bandwidth (2 (P - 1) / P x bytes /
// time) and the ratio gdap / NCCL. Checks each result once (rank r holds r + 1 everywhere; with a
// NaN at element 0 of rank 0, element 0 must be NaN on every rank).
#include "bench.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kCount = int64_t{1} << 28;  // 1 GiB of float32
constexpr int kWarmup = 3, kRepeats = 20;

struct Op {
  const char* name;
  gdap_reduce_op gdap;
  ncclRedOp_t nccl;
  bool nan_on_rank0 = false;  // rank 0's element 0 is NaN before every call
};

// Rank r's section: r + 1 everywhere, and a NaN at element 0 on rank 0 for a NaN row (queued).
void fill(float* data, int64_t count, int r, const Op& op, cudaStream_t stream) {
  fill_value<<<1024, 256, 0, stream>>>(data, count, static_cast<float>(r + 1));
  if (op.nan_on_rank0 && r == 0) {
    static const float nan = std::numeric_limits<float>::quiet_NaN();
    CK(cudaMemcpyAsync(data, &nan, sizeof nan, cudaMemcpyHostToDevice, stream));
  }
}

// One row: `count` floats, one op; 0 when every rank's result was right.
int row(const std::vector<ncclComm_t>& nccl, int64_t count, const Op& op) {
  const int gpus = static_cast<int>(nccl.size());
  std::vector<double> gdap_ms(kRepeats), nccl_ms(kRepeats);
  std::barrier sync(gpus);
  std::atomic<int> wrong{0};  // counted by every rank's thread
  on_every_gpu(nccl, [&](int r, cudaStream_t stream, gdap_comm* comm) {
    gdap_dim d = GDAP_DIM_INIT;
    CK(gdap_dim_set_block(&d, count, 1, 0, 0, count));
    gdap_array* a = nullptr;
    CK(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 32, 1}, {GDAP_DEVICE_CUDA, r}, &d, 1));
    void* data = nullptr;
    CK(gdap_array_data(&data, a));
    auto timed = [&](auto&& call) { return timed_ms(sync, stream, call); };
    for (int it = 0; it < kWarmup + kRepeats; ++it) {
      fill(static_cast<float*>(data), count, r, op, stream);
      CK(cudaStreamSynchronize(stream));  // the fill is not gdap's time
      const double g = timed([&] { CK(gdap_allreduce(comm, a, op.gdap)); });
      const double n = timed(
          [&] { CK(ncclAllReduce(data, data, count, ncclFloat32, op.nccl, nccl[static_cast<size_t>(r)], stream)); });
      if (r == 0 && it >= kWarmup) {
        gdap_ms[static_cast<size_t>(it - kWarmup)] = g;
        nccl_ms[static_cast<size_t>(it - kWarmup)] = n;
      }
    }
    // One checked run: sum gives P (P + 1) / 2 everywhere, max gives P (NaN at element 0 in a NaN row).
    fill(static_cast<float*>(data), count, r, op, stream);
    CK(gdap_allreduce(comm, a, op.gdap));
    float probe[2] = {};
    CK(cudaMemcpyAsync(&probe[0], data, 4, cudaMemcpyDeviceToHost, stream));
    CK(cudaMemcpyAsync(&probe[1], static_cast<float*>(data) + count - 1, 4, cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    const float want = op.gdap == GDAP_REDUCE_SUM ? static_cast<float>(gpus * (gpus + 1) / 2) : static_cast<float>(gpus);
    const bool first_right = op.nan_on_rank0 ? std::isnan(probe[0]) : probe[0] == want;
    if (!first_right || probe[1] != want) ++wrong;
    gdap_array_destroy(a);
  });
  const double g = median(gdap_ms), n = median(nccl_ms);
  const double bytes = static_cast<double>(count) * 4;
  const double bus = 2.0 * (gpus - 1) / gpus * bytes / (n * 1e6);
  std::printf("| %s | %.0f KiB | %d | %.3f | %.3f | %.0f | %.3f | %s |\n", op.name, bytes / 1024, gpus, g, n, bus, g / n,
              wrong == 0 ? "checked" : "WRONG");
  std::fflush(stdout);
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main() {
  const std::vector<ncclComm_t> nccl = nccl_on_every_gpu();
  std::printf("| all-reduce, float32 | bytes | GPUs | gdap_allreduce (NCCL) ms | ncclAllReduce ms | NCCL bus GB/s | gdap / NCCL | result |\n"
              "|---|---|---|---|---|---|---|---|\n");
  int bad = 0;
  for (const Op& op : {Op{"sum", GDAP_REDUCE_SUM, ncclSum}, Op{"max, no NaN (NCCL's float max)", GDAP_REDUCE_MAX, ncclMax},
                       Op{"max, one NaN on rank 0 (keys)", GDAP_REDUCE_MAX, ncclMax, true}}) {
    for (int64_t count : {kCount, int64_t{1024}}) bad += row(nccl, count, op);
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
  return bad == 0 ? 0 : 1;
}
