// The device side of the distributed GEMM: cuBLAS products on the communicator's stream, panels
// moved on a second stream of the plan's own into two buffers per operand, so that panel p+1 moves
// while panel p is multiplied (events: `ready[s]` when slot s is filled, `freed[s]` when its
// product is done). Panels move as broadcasts of the communicator's engine (exchange/engine.hpp:
// the in-process group copies straight from the owning rank's section with cudaMemcpy2DAsync, peer
// to peer across GPUs; NCCL sends each panel from its owner to the other ranks of its grid row (A)
// or column (B) with grouped ncclSend/ncclRecv).
#include "gemm/gemm.hpp"

#include "core/error.hpp"
#include "cuda/device.hpp"
#include "cuda/lazy_library.hpp"
#include "exchange/engine.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>

namespace gdap::gemm {

namespace {

void cuda_call(cudaError_t e, const char* what) { cuda::check_cuda(static_cast<int>(e), what); }

void cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) fail(GDAP_ERR_DEVICE, "{} failed: cuBLAS status {}", what, static_cast<int>(s));
}

struct DeviceResources final : Resources {
  int device = -1;
  cublasHandle_t handle = nullptr;
  cudaStream_t copy = nullptr;
  cudaEvent_t ready[2] = {}, freed[2] = {};
  char* abuf[2] = {};
  char* bbuf[2] = {};

  explicit DeviceResources(int dev, int64_t a_bytes, int64_t b_bytes) : device(dev) {
    cublas(cublasCreate(&handle), "cublasCreate");
    cuda_call(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking), "cudaStreamCreate (gemm panels)");
    for (cudaEvent_t* e : {&ready[0], &ready[1], &freed[0], &freed[1]}) {
      cuda_call(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreate");
    }
    for (int s = 0; s < 2; ++s) {
      cuda_call(cudaMalloc(&abuf[s], static_cast<size_t>(std::max<int64_t>(a_bytes, 16))), "cudaMalloc (gemm A panels)");
      cuda_call(cudaMalloc(&bbuf[s], static_cast<size_t>(std::max<int64_t>(b_bytes, 16))), "cudaMalloc (gemm B panels)");
    }
  }
  ~DeviceResources() override {
    const cuda::DeviceScope on(device);
    if (copy != nullptr) cudaStreamSynchronize(copy);
    for (int s = 0; s < 2; ++s) {
      cudaFree(abuf[s]);
      cudaFree(bbuf[s]);
    }
    for (cudaEvent_t e : {ready[0], ready[1], freed[0], freed[1]}) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    if (copy != nullptr) cudaStreamDestroy(copy);
    if (handle != nullptr) cublasDestroy(handle);
  }
};

cublasComputeType_t compute_type(const gdap_gemm& g) {
  if (g.element_size == 8) return CUBLAS_COMPUTE_64F;
  if (g.mode == GDAP_GEMM_TF32) return CUBLAS_COMPUTE_32F_FAST_TF32;
  if (g.mode == GDAP_GEMM_BF16) return CUBLAS_COMPUTE_32F_FAST_16BF;
  return CUBLAS_COMPUTE_32F;
}

// C (local_m x local_n, row stride ldc) = alpha * A (m x w) * B (w x n) + beta * C, row-major
// through the column-major C^T = B^T A^T.
void product(const gdap_gemm& g, DeviceResources& r, int64_t w, double alpha, const void* a, const void* b, double beta,
             void* c, int64_t ldc) {
  if (g.local_m == 0 || g.local_n == 0) return;
  const int n = static_cast<int>(g.local_n), m = static_cast<int>(g.local_m), k = static_cast<int>(w);
  const cudaDataType_t type = g.element_size == 8 ? CUDA_R_64F : CUDA_R_32F;
  const float fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
  const void* pa = g.element_size == 8 ? static_cast<const void*>(&alpha) : &fa;
  const void* pb = g.element_size == 8 ? static_cast<const void*>(&beta) : &fb;
  cublas(cublasGemmEx(r.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, pa, b, type, std::max(1, n), a, type, std::max(1, k), pb,
                      c, type, static_cast<int>(ldc), compute_type(g), CUBLAS_GEMM_DEFAULT),
         "cublasGemmEx");
}

void scale(const gdap_gemm& g, DeviceResources& r, double beta, void* c, int64_t ldc, cudaStream_t stream) {
  if (g.local_m == 0 || g.local_n == 0) return;
  const int64_t es = g.element_size;
  if (beta == 0) {
    cuda_call(cudaMemset2DAsync(c, static_cast<size_t>(ldc * es), 0, static_cast<size_t>(g.local_n * es),
                           static_cast<size_t>(g.local_m), stream),
         "cudaMemset2DAsync");
    return;
  }
  const int n = static_cast<int>(g.local_n), m = static_cast<int>(g.local_m), ld = static_cast<int>(ldc);
  if (es == 8) {
    const double zero = 0;
    auto* p = static_cast<double*>(c);
    cublas(cublasDgeam(r.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, &beta, p, ld, &zero, p, ld, p, ld), "cublasDgeam");
  } else {
    const float fb = static_cast<float>(beta), zero = 0;
    auto* p = static_cast<float*>(c);
    cublas(cublasSgeam(r.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, &fb, p, ld, &zero, p, ld, p, ld), "cublasSgeam");
  }
}

}  // namespace

void run_device(const Job& job) {
  cuda::require_cublas("gdap_gemm_execute on device sections");  // loaded on first use (lazy_library.hpp)
  gdap_gemm& g = job.plan;
  const int dev = job.c->section.device.id;
  cuda::set_device(dev);
  auto* r = static_cast<DeviceResources*>(g.device.get());  // the only kind kept there
  if (r == nullptr || r->device != dev) {
    g.device.reset();
    auto made = std::make_unique<DeviceResources>(dev, g.local_m * g.max_width * g.element_size,
                                                  g.max_width * g.local_n * g.element_size);
    r = made.get();
    g.device = std::move(made);
  }
  auto stream = static_cast<cudaStream_t>(job.comm.stream);
  cublas(cublasSetStream(r->handle, stream), "cublasSetStream");
  void* c = job.c->data();
  const int64_t ldc = std::max<int64_t>(row_stride(*job.c), 1);
  if (g.panels.empty() || job.alpha == 0) {
    scale(g, *r, job.beta, c, ldc, stream);
    return;
  }
  const auto moves = exchange::engine_of(job.comm).broadcasts({{job.a, job.b}, Memory::device, r->copy});
  auto fetch = [&](size_t p) {
    const int s = static_cast<int>(p % 2);
    cuda_call(cudaStreamWaitEvent(r->copy, r->freed[s], 0), "cudaStreamWaitEvent (gemm slot)");
    const exchange::Move step[] = {{&g.a_moves[p], 0, r->abuf[s], nullptr}, {&g.b_moves[p], 1, r->bbuf[s], nullptr}};
    moves->start(step, s);
    cuda_call(cudaEventRecord(r->ready[s], r->copy), "cudaEventRecord (gemm panel)");
  };
  fetch(0);
  for (size_t p = 0; p < g.panels.size(); ++p) {
    if (p + 1 < g.panels.size()) fetch(p + 1);
    const int s = static_cast<int>(p % 2);
    cuda_call(cudaStreamWaitEvent(stream, r->ready[s], 0), "cudaStreamWaitEvent (gemm panel)");
    product(g, *r, g.panels[p].width, job.alpha, r->abuf[s], r->bbuf[s], p == 0 ? job.beta : 1.0, c, ldc);
    cuda_call(cudaEventRecord(r->freed[s], stream), "cudaEventRecord (gemm slot)");
  }
  moves->end();
}

void release_device(gdap_gemm& plan) noexcept { plan.device.reset(); }

}  // namespace gdap::gemm
