// The cuBLAS functions gdap calls (GEMM on device sections), defined here and forwarded to
// libcublas.so.<CUDA major> loaded on first use (lazy_library.hpp): libgdap does not link cuBLAS.
// Each definition is checked against cublas_v2.h's declaration; a missing library or function
// returns CUBLAS_STATUS_NOT_INITIALIZED (gemm calls require_cublas first, which says why).
#include "cuda/lazy_library.hpp"

#include <cublas_v2.h>

namespace gdap::cuda {

namespace {
LazyLibrary& cublas_library() {
  static LazyLibrary library(GDAP_CUBLAS_SONAME, GDAP_CUBLAS_FALLBACK);
  return library;
}
}  // namespace

void require_cublas(const char* user) { cublas_library().require(user); }

}  // namespace gdap::cuda

// The body of each definition: call the loaded library's `name` (looked up once) with `args`.
#define GDAP_CUBLAS_FORWARD(name, ...)                                       \
  static void* const fn = gdap::cuda::cublas_library().symbol(#name);       \
  return gdap::cuda::call(fn, CUBLAS_STATUS_NOT_INITIALIZED __VA_OPT__(, ) __VA_ARGS__)

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) { GDAP_CUBLAS_FORWARD(cublasCreate_v2, handle); }

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) { GDAP_CUBLAS_FORWARD(cublasDestroy_v2, handle); }

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  GDAP_CUBLAS_FORWARD(cublasSetStream_v2, handle, stream);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  GDAP_CUBLAS_FORWARD(cublasGemmEx, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                      Ctype, ldc, computeType, algo);
}

cublasStatus_t cublasDgeam(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           const double* alpha, const double* A, int lda, const double* beta, const double* B, int ldb,
                           double* C, int ldc) {
  GDAP_CUBLAS_FORWARD(cublasDgeam, handle, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

cublasStatus_t cublasSgeam(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           const float* alpha, const float* A, int lda, const float* beta, const float* B, int ldb,
                           float* C, int ldc) {
  GDAP_CUBLAS_FORWARD(cublasSgeam, handle, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

}  // extern "C"
