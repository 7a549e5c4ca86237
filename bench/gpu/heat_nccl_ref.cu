// The hand-written peer of the heat example's GPU runs (bench/gpu/heat.sh): the example's own
// kernels (examples/heat/src/heat_cuda.cu) and its overlap (boundary layer, then the halo on the
// high-priority stream, the interior on a second stream beside it), with the halo moved by raw
// NCCL instead of gdap: one ncclSend/ncclRecv pair per neighbour of the contiguous face of a slab
// split along dimension 0 (no packing needed). One process, one thread per GPU
// (ncclCommInitAll). Fixed ends on every side, as `heat --grid Px1[x1]` without --periodic.
// After the timing the field is checked against the exact discrete solution, as the example
// does, so that the peer is known to do the same work.
// Usage: heat_nccl_ref N0xN1[xN2] GPUS STEPS float32|float64 [--no-overlap]
// Prints "heat-ref: S steps in X s, Y ms per step" and "heat-ref: check ... ok".
#include "heat_kernels.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kWarmup = 10;  // as heat --bench

#define CHECK_CUDA(call)                                                                      \
  do {                                                                                        \
    const cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "heat-ref: %s: %s\n", #call, cudaGetErrorString(e_));              \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define CHECK_NCCL(call)                                                                      \
  do {                                                                                        \
    const ncclResult_t r_ = (call);                                                           \
    if (r_ != ncclSuccess) {                                                                  \
      std::fprintf(stderr, "heat-ref: %s: %s\n", #call, ncclGetErrorString(r_));              \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define CHECK_HEAT(call)                                                                      \
  do {                                                                                        \
    const int e_ = (call);                                                                    \
    if (e_ != 0) {                                                                            \
      std::fprintf(stderr, "heat-ref: %s: %s\n", #call, heat_cuda_error_string(e_));          \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

struct Config {
  int ndim = 2, bits = 32, gpus = 1;
  int64_t n[3] = {0, 0, 0};
  int64_t steps = 0;
  bool overlap = true;
};

// One GPU's slab: rows [lo, hi) of the unknowns along dimension 0, one frame or halo row each side.
struct Rank {
  int r = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream_c = nullptr, stream_i = nullptr;
  cudaEvent_t ev_c = nullptr, ev_i = nullptr;
  heat_view view{};
  heat_box update{}, owned{};
  heat_boxes boundary{}, interior{};
  void* field[2] = {nullptr, nullptr};
  int64_t face = 0;  // elements of one row of the slab (every other dimension, frame included)
  int cur = 0;
};

void exchange(const Config& c, Rank& k, void* data) {
  const size_t element = c.bits / 8;
  auto* bytes = static_cast<char*>(data);
  const int64_t rows = k.view.shape[0];
  const ncclDataType_t type = c.bits == 64 ? ncclDouble : ncclFloat;
  CHECK_NCCL(ncclGroupStart());
  if (k.r > 0) {
    CHECK_NCCL(ncclSend(bytes + 1 * k.face * element, k.face, type, k.r - 1, k.comm, k.stream_c));
    CHECK_NCCL(ncclRecv(bytes, k.face, type, k.r - 1, k.comm, k.stream_c));
  }
  if (k.r < c.gpus - 1) {
    CHECK_NCCL(ncclSend(bytes + (rows - 2) * k.face * element, k.face, type, k.r + 1, k.comm, k.stream_c));
    CHECK_NCCL(ncclRecv(bytes + (rows - 1) * k.face * element, k.face, type, k.r + 1, k.comm, k.stream_c));
  }
  CHECK_NCCL(ncclGroupEnd());
}

// One step, as heat_solver.c's step() on a device.
void step(const Config& c, Rank& k, double r) {
  const void* u = k.field[k.cur];
  void* v = k.field[1 - k.cur];
  if (c.overlap) {
    CHECK_CUDA(cudaStreamWaitEvent(k.stream_c, k.ev_i, 0));
    CHECK_CUDA(cudaStreamWaitEvent(k.stream_i, k.ev_c, 0));
    CHECK_HEAT(heat_cuda_step(&k.view, u, v, &k.boundary, r, k.stream_c));
    exchange(c, k, v);
    CHECK_CUDA(cudaEventRecord(k.ev_c, k.stream_c));
    CHECK_HEAT(heat_cuda_step(&k.view, u, v, &k.interior, r, k.stream_i));
    CHECK_CUDA(cudaEventRecord(k.ev_i, k.stream_i));
  } else {
    CHECK_HEAT(heat_cuda_step(&k.view, u, v, &k.boundary, r, k.stream_c));
    CHECK_HEAT(heat_cuda_step(&k.view, u, v, &k.interior, r, k.stream_c));
    exchange(c, k, v);
  }
  k.cur = 1 - k.cur;
}

void settle(Rank& k) {
  CHECK_CUDA(cudaStreamWaitEvent(k.stream_c, k.ev_i, 0));
  CHECK_CUDA(cudaStreamSynchronize(k.stream_c));
}

bool parse(int argc, char** argv, Config& c) {
  if (argc < 5) return false;
  c.ndim = std::sscanf(argv[1], "%ldx%ldx%ld", &c.n[0], &c.n[1], &c.n[2]);
  c.gpus = std::atoi(argv[2]);
  c.steps = std::atoll(argv[3]);
  c.bits = std::strcmp(argv[4], "float64") == 0 ? 64 : std::strcmp(argv[4], "float32") == 0 ? 32 : 0;
  c.overlap = !(argc > 5 && std::strcmp(argv[5], "--no-overlap") == 0);
  return (c.ndim == 2 || c.ndim == 3) && c.gpus >= 1 && c.steps >= 1 && c.bits != 0 && c.n[0] >= c.gpus;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  if (!parse(argc, argv, c)) {
    std::fprintf(stderr, "usage: heat_nccl_ref N0xN1[xN2] GPUS STEPS float32|float64 [--no-overlap]\n");
    return 2;
  }
  heat_problem p;
  char why[256];
  const int32_t fixed[3] = {0, 0, 0}, mode[3] = {1, 1, 1};
  if (heat_problem_init(&p, c.ndim, c.n, fixed, mode, 0.0, why, sizeof why) != 0) {
    std::fprintf(stderr, "heat-ref: %s\n", why);
    return 2;
  }
  std::vector<Rank> ranks(c.gpus);
  std::vector<ncclComm_t> comms(c.gpus);
  CHECK_NCCL(ncclCommInitAll(comms.data(), c.gpus, nullptr));
  std::barrier sync(c.gpus);
  std::vector<double> seconds(c.gpus), errors(c.gpus);
  auto work = [&](int r) {
    Rank& k = ranks[r];
    k.r = r;
    k.comm = comms[r];
    CHECK_CUDA(cudaSetDevice(r));
    int least = 0, greatest = 0;
    CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK_CUDA(cudaStreamCreateWithPriority(&k.stream_c, cudaStreamNonBlocking, greatest));
    CHECK_CUDA(cudaStreamCreateWithPriority(&k.stream_i, cudaStreamNonBlocking, least));
    CHECK_CUDA(cudaEventCreate(&k.ev_c));
    CHECK_CUDA(cudaEventCreate(&k.ev_i));
    // The slab: unknowns [lo, hi) of dimension 0 at global rows [lo + 1, hi + 1), a row each side.
    const int64_t lo = r * c.n[0] / c.gpus, hi = (r + 1) * c.n[0] / c.gpus;
    k.view.ndim = c.ndim;
    k.view.bits = c.bits;
    k.face = 1;
    for (int d = 0; d < c.ndim; ++d) {
      const bool split = d == 0;
      k.view.shape[d] = split ? hi - lo + 2 : c.n[d] + 2;
      k.view.start[d] = split ? lo : 0;
      k.update.lo[d] = 1;
      k.update.hi[d] = k.view.shape[d] - 1;
      k.owned.lo[d] = split && r > 0 ? 1 : 0;
      k.owned.hi[d] = split && r < c.gpus - 1 ? k.view.shape[d] - 1 : k.view.shape[d];
      if (!split) k.face *= k.view.shape[d];
    }
    heat_split(&k.update, c.ndim, &k.boundary, &k.interior);
    const int64_t bytes = k.face * k.view.shape[0] * (c.bits / 8);
    void* scratch = nullptr;
    double* value = nullptr;
    CHECK_CUDA(cudaMalloc(&k.field[0], bytes));
    CHECK_CUDA(cudaMalloc(&k.field[1], bytes));
    CHECK_CUDA(cudaMalloc(&scratch, heat_cuda_scratch_bytes()));
    CHECK_CUDA(cudaMalloc(&value, sizeof(double)));
    CHECK_HEAT(heat_cuda_fill(&k.view, k.field[0], &k.owned, &p, k.stream_c));
    CHECK_CUDA(cudaMemcpyAsync(k.field[1], k.field[0], bytes, cudaMemcpyDeviceToDevice, k.stream_c));
    exchange(c, k, k.field[0]);
    CHECK_CUDA(cudaEventRecord(k.ev_c, k.stream_c));
    for (int s = 0; s < kWarmup; ++s) step(c, k, p.r);
    settle(k);
    sync.arrive_and_wait();
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t s = 0; s < c.steps; ++s) step(c, k, p.r);
    settle(k);
    sync.arrive_and_wait();
    seconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double decay = std::pow(heat_problem_growth(&p), static_cast<double>(c.steps + kWarmup));
    CHECK_HEAT(heat_cuda_error(&k.view, k.field[k.cur], &k.update, &p, decay, value, scratch, k.stream_c));
    CHECK_CUDA(cudaMemcpyAsync(&errors[r], value, sizeof(double), cudaMemcpyDeviceToHost, k.stream_c));
    CHECK_CUDA(cudaStreamSynchronize(k.stream_c));
    for (void* x : {k.field[0], k.field[1], scratch, static_cast<void*>(value)}) CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaEventDestroy(k.ev_c));
    CHECK_CUDA(cudaEventDestroy(k.ev_i));
    CHECK_CUDA(cudaStreamDestroy(k.stream_c));
    CHECK_CUDA(cudaStreamDestroy(k.stream_i));
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < c.gpus; ++r) threads.emplace_back(work, r);
  for (auto& t : threads) t.join();
  for (ncclComm_t comm : comms) ncclCommDestroy(comm);
  const double elapsed = *std::max_element(seconds.begin(), seconds.end());
  const double error = *std::max_element(errors.begin(), errors.end());
  // The example's tolerance (heat_solver.c): 8 half-ulps of the largest |u| per step.
  const double eps = c.bits == 64 ? 0x1p-53 : 0x1p-24;
  const double bound = 8.0 * eps * heat_problem_bound(&p) * static_cast<double>(c.steps + kWarmup);
  const double tolerance = c.bits == 64 && bound < 1e-10 ? 1e-10 : bound;
  std::printf("heat-ref: %lld steps in %.3f s, %.4f ms per step\n", static_cast<long long>(c.steps), elapsed,
              1e3 * elapsed / static_cast<double>(c.steps));
  std::printf("heat-ref: check: max |u - exact| = %.3e after %lld steps (tolerance %.1e): %s\n", error,
              static_cast<long long>(c.steps + kWarmup), tolerance, error <= tolerance ? "ok" : "FAILED");
  return error <= tolerance ? 0 : 1;
}
