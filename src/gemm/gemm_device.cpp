// The device engine of the distributed GEMM: cuBLAS products on the communicator's stream, panels
// moved on a second stream of the plan's own into two buffers per operand, so that panel p+1 moves
// while panel p is multiplied (events: `ready[s]` when slot s is filled, `freed[s]` when its
// product is done). Transports: the in-process group copies straight from the owning rank's
// section (cudaMemcpy2DAsync, peer to peer across GPUs, or within one GPU when ranks share it),
// after every peer's stream reached the call (start events) and with every peer's stream waiting
// for this rank's copies at the end; NCCL sends each panel from its owner to the other ranks of its
// grid row (A) or column (B) with grouped ncclSend/ncclRecv.
#include "gemm/gemm.hpp"

#include "comm/group.hpp"
#include "core/error.hpp"
#include "move/device.hpp"

#if GDAP_HAVE_NCCL
#include "comm/nccl.hpp"
#endif

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>

namespace gdap::gemm {

namespace {

void cuda(cudaError_t e, const char* what) { move::check_cuda(static_cast<int>(e), what); }

void cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) fail(GDAP_ERR_DEVICE, "{} failed: cuBLAS status {}", what, static_cast<int>(s));
}

struct DeviceResources final : Resources {
  int device = -1;
  cublasHandle_t handle = nullptr;
  cudaStream_t copy = nullptr;
  cudaEvent_t ready[2] = {}, freed[2] = {}, start = nullptr, copied = nullptr, done = nullptr;
  char* abuf[2] = {};
  char* bbuf[2] = {};

  explicit DeviceResources(int dev, int64_t a_bytes, int64_t b_bytes) : device(dev) {
    cublas(cublasCreate(&handle), "cublasCreate");
    cuda(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking), "cudaStreamCreate (gemm panels)");
    for (cudaEvent_t* e : {&ready[0], &ready[1], &freed[0], &freed[1], &start, &copied, &done}) {
      cuda(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreate");
    }
    for (int s = 0; s < 2; ++s) {
      cuda(cudaMalloc(&abuf[s], static_cast<size_t>(std::max<int64_t>(a_bytes, 16))), "cudaMalloc (gemm A panels)");
      cuda(cudaMalloc(&bbuf[s], static_cast<size_t>(std::max<int64_t>(b_bytes, 16))), "cudaMalloc (gemm B panels)");
    }
  }
  ~DeviceResources() override {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device);
    if (copy != nullptr) cudaStreamSynchronize(copy);
    for (int s = 0; s < 2; ++s) {
      cudaFree(abuf[s]);
      cudaFree(bbuf[s]);
    }
    for (cudaEvent_t e : {ready[0], ready[1], freed[0], freed[1], start, copied, done}) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    if (copy != nullptr) cudaStreamDestroy(copy);
    if (handle != nullptr) cublasDestroy(handle);
    cudaSetDevice(previous);
  }
};

// Strided 2-d copy on `stream`; nothing for an empty box.
void copy2d(void* dst, int64_t dpitch, const void* src, int64_t spitch, int64_t width, int64_t rows, cudaStream_t stream) {
  if (width == 0 || rows == 0) return;
  cuda(cudaMemcpy2DAsync(dst, static_cast<size_t>(dpitch), src, static_cast<size_t>(spitch), static_cast<size_t>(width),
                         static_cast<size_t>(rows), cudaMemcpyDefault, stream),
       "cudaMemcpy2DAsync (gemm panel)");
}

const char* at(const gdap_array& x, int64_t row, int64_t col, int64_t es) {
  return static_cast<const char*>(x.data()) + (row * row_stride(x) + col * col_stride(x)) * es;
}

class Transport {
 public:
  virtual ~Transport() = default;
  virtual void fetch(const Panel& p, int s) = 0;  // queued on the copy stream, ends recording ready[s]
  virtual void end() = 0;
};

class GroupTransport final : public Transport {
 public:
  struct Published {
    const gdap_array* a;
    const gdap_array* b;
    cudaEvent_t start, done;
  };
  GroupTransport(const Job& job, DeviceResources& r, cudaStream_t stream)
      : job_(job), r_(r), stream_(stream), comm_(dynamic_cast<GroupComm&>(job.comm)) {
    cuda(cudaEventRecord(r.start, stream), "cudaEventRecord");
    mine_ = {job.a, job.b, r.start, r.done};
    std::string error;
    for (const void* p : comm_.exchange(&mine_, [&](const std::vector<const void*>& all) {
           try {
             for (const void* q : all) {
               const auto* peer = static_cast<const Published*>(q);
               move::enable_peer_access(r.device, peer->a->section.device.id);
               cuda(cudaStreamWaitEvent(r.copy, peer->start, 0), "cudaStreamWaitEvent (gemm start)");
             }
           } catch (const Error& e) {
             error = e.what();
           }
         })) {
      peers_.push_back(*static_cast<const Published*>(p));
    }
    if (!error.empty()) fail(GDAP_ERR_DEVICE, "{}", error);
  }
  void fetch(const Panel& p, int s) override {
    const gdap_gemm& g = job_.plan;
    const int64_t es = g.element_size;
    const gdap_array& a = *peers_[static_cast<size_t>(g.my_row * g.grid_cols + p.a_col)].a;
    const gdap_array& b = *peers_[static_cast<size_t>(p.b_row * g.grid_cols + g.my_col)].b;
    copy2d(r_.abuf[s], p.width * es, at(a, 0, p.a_local, es), row_stride(a) * es, p.width * es, g.local_m, r_.copy);
    copy2d(r_.bbuf[s], g.local_n * es, at(b, p.b_local, 0, es), row_stride(b) * es, g.local_n * es, p.width, r_.copy);
  }
  // The caller's stream waits for this rank's reads of its peers; every peer's stream waits for
  // them too, so no peer overwrites a section another rank still reads.
  void end() override {
    cuda(cudaEventRecord(r_.copied, r_.copy), "cudaEventRecord");
    cuda(cudaStreamWaitEvent(stream_, r_.copied, 0), "cudaStreamWaitEvent");
    cuda(cudaEventRecord(r_.done, stream_), "cudaEventRecord");
    comm_.exchange(&mine_, [&](const std::vector<const void*>& all) {
      for (const void* q : all) {
        const auto* peer = static_cast<const Published*>(q);
        if (peer != &mine_) cudaStreamWaitEvent(stream_, peer->done, 0);
      }
    });
  }

 private:
  const Job& job_;
  DeviceResources& r_;
  cudaStream_t stream_;
  GroupComm& comm_;
  Published mine_{};
  std::vector<Published> peers_;
};

#if GDAP_HAVE_NCCL
class NcclTransport final : public Transport {
 public:
  NcclTransport(const Job& job, DeviceResources& r, cudaStream_t stream)
      : job_(job), r_(r), stream_(stream), comm_(dynamic_cast<NcclComm&>(job.comm)) {
    cuda(cudaEventRecord(r.start, stream), "cudaEventRecord");
    cuda(cudaStreamWaitEvent(r.copy, r.start, 0), "cudaStreamWaitEvent");
  }
  void fetch(const Panel& p, int s) override {
    const gdap_gemm& g = job_.plan;
    const int64_t es = g.element_size;
    const int64_t a_bytes = g.local_m * p.width * es, b_bytes = p.width * g.local_n * es;
    if (p.a_col == g.my_col) {
      copy2d(r_.abuf[s], p.width * es, at(*job_.a, 0, p.a_local, es), row_stride(*job_.a) * es, p.width * es, g.local_m, r_.copy);
    }
    if (p.b_row == g.my_row) {
      copy2d(r_.bbuf[s], g.local_n * es, at(*job_.b, p.b_local, 0, es), row_stride(*job_.b) * es, g.local_n * es, p.width,
             r_.copy);
    }
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (int64_t j = 0; j < g.grid_cols && a_bytes > 0; ++j) {
      if (j == g.my_col) continue;
      const int peer = static_cast<int>(g.my_row * g.grid_cols + j);
      if (p.a_col == g.my_col) {
        check_nccl(ncclSend(r_.abuf[s], static_cast<size_t>(a_bytes), ncclChar, peer, comm_.handle(), r_.copy), "ncclSend");
      } else if (j == p.a_col) {
        check_nccl(ncclRecv(r_.abuf[s], static_cast<size_t>(a_bytes), ncclChar, peer, comm_.handle(), r_.copy), "ncclRecv");
      }
    }
    for (int64_t i = 0; i < g.grid_rows && b_bytes > 0; ++i) {
      if (i == g.my_row) continue;
      const int peer = static_cast<int>(i * g.grid_cols + g.my_col);
      if (p.b_row == g.my_row) {
        check_nccl(ncclSend(r_.bbuf[s], static_cast<size_t>(b_bytes), ncclChar, peer, comm_.handle(), r_.copy), "ncclSend");
      } else if (i == p.b_row) {
        check_nccl(ncclRecv(r_.bbuf[s], static_cast<size_t>(b_bytes), ncclChar, peer, comm_.handle(), r_.copy), "ncclRecv");
      }
    }
    comm_.settle(ncclGroupEnd(), "ncclGroupEnd");
  }
  void end() override {
    cuda(cudaEventRecord(r_.copied, r_.copy), "cudaEventRecord");
    cuda(cudaStreamWaitEvent(stream_, r_.copied, 0), "cudaStreamWaitEvent");
  }

 private:
  const Job& job_;
  DeviceResources& r_;
  cudaStream_t stream_;
  NcclComm& comm_;
};
#endif

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
    cuda(cudaMemset2DAsync(c, static_cast<size_t>(ldc * es), 0, static_cast<size_t>(g.local_n * es),
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
  gdap_gemm& g = job.plan;
  const int dev = job.c->section.device.id;
  move::set_device(dev);
  auto* r = dynamic_cast<DeviceResources*>(g.device.get());
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
  std::unique_ptr<Transport> t;
  if (job.comm.kind() == GDAP_COMM_GROUP) {
    t = std::make_unique<GroupTransport>(job, *r, stream);
#if GDAP_HAVE_NCCL
  } else if (job.comm.kind() == GDAP_COMM_NCCL) {
    t = std::make_unique<NcclTransport>(job, *r, stream);
#endif
  } else {
    fail(GDAP_ERR_UNSUPPORTED, "device sections need an in-process group or NCCL communicator (MPI moves host memory)");
  }
  auto fetch = [&](size_t p) {
    const int s = static_cast<int>(p % 2);
    cuda(cudaStreamWaitEvent(r->copy, r->freed[s], 0), "cudaStreamWaitEvent (gemm slot)");
    t->fetch(g.panels[p], s);
    cuda(cudaEventRecord(r->ready[s], r->copy), "cudaEventRecord (gemm panel)");
  };
  fetch(0);
  for (size_t p = 0; p < g.panels.size(); ++p) {
    if (p + 1 < g.panels.size()) fetch(p + 1);
    const int s = static_cast<int>(p % 2);
    cuda(cudaStreamWaitEvent(stream, r->ready[s], 0), "cudaStreamWaitEvent (gemm panel)");
    product(g, *r, g.panels[p].width, job.alpha, r->abuf[s], r->bbuf[s], p == 0 ? job.beta : 1.0, c, ldc);
    cuda(cudaEventRecord(r->freed[s], stream), "cudaEventRecord (gemm slot)");
  }
  t->end();
}

void release_device(gdap_gemm& plan) noexcept { plan.device.reset(); }

}  // namespace gdap::gemm
