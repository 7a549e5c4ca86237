// The host side of the distributed GEMM: panels packed into contiguous row-major buffers, local
// products by BLAS (sgemm/dgemm, row-major through the transposed column-major call) or, in a
// build without BLAS, a plain loop. Panels move as broadcasts of the communicator's engine
// (exchange/engine.hpp: the in-process group copies straight from the owning rank's section, MPI
// sends the owner's packed panel to the other ranks of its grid row or column), the next panel's
// while the current one is multiplied.
#include "gemm/gemm.hpp"

#include "core/error.hpp"
#include "exchange/engine.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#if GDAP_HAVE_BLAS
extern "C" {
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha, const float* a,
            const int* lda, const float* b, const int* ldb, const float* beta, float* c, const int* ldc);
void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc);
}
#endif

namespace gdap::gemm {

namespace {

int blas_int(int64_t v, const char* what) {
  if (v > INT_MAX) fail(GDAP_ERR_UNSUPPORTED, "{} {} exceeds the BLAS integer range ({})", what, v, INT_MAX);
  return static_cast<int>(v);
}

// C (m x n, row stride ldc) = alpha * A (m x k, packed) * B (k x n, packed) + beta * C; beta 0
// ignores C's old values.
template <typename T>
void local_gemm(int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
#if GDAP_HAVE_BLAS
  const int mi = blas_int(m, "rows"), ni = blas_int(n, "columns"), ki = blas_int(k, "panel width");
  const int lda = std::max(1, ki), ldb = std::max(1, ni), ldci = blas_int(ldc, "row stride of C");
  if constexpr (sizeof(T) == 4) {
    sgemm_("N", "N", &ni, &mi, &ki, &alpha, b, &ldb, a, &lda, &beta, c, &ldci);
  } else {
    dgemm_("N", "N", &ni, &mi, &ki, &alpha, b, &ldb, a, &lda, &beta, c, &ldci);
  }
#else
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) row[j] = beta == T(0) ? T(0) : beta * row[j];
    for (int64_t p = 0; p < k; ++p) {
      const T s = alpha * a[i * k + p];
      const T* brow = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += s * brow[j];
    }
  }
#endif
}

// Copies rows [r0, r0 + rows) x columns [c0, c0 + cols) of a 2-d section into `dst`, packed.
template <typename T>
void pack(const gdap_array& x, int64_t r0, int64_t rows, int64_t c0, int64_t cols, T* dst) {
  const T* src = static_cast<const T*>(x.data());
  const int64_t rs = row_stride(x), cs = col_stride(x);
  for (int64_t i = 0; i < rows; ++i) {
    const T* row = src + (r0 + i) * rs + c0 * cs;
    if (cs == 1) {
      std::memcpy(dst + i * cols, row, static_cast<size_t>(cols) * sizeof(T));
    } else {
      for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = row[j * cs];
    }
  }
}

// Two buffers per operand: panel p moves into slot p % 2 while panel p - 1 is multiplied.
template <typename T>
struct Slots {
  std::shared_ptr<std::vector<T>> a[2], b[2];
  Slots(int64_t a_elems, int64_t b_elems) {
    for (int s = 0; s < 2; ++s) {
      a[s] = std::make_shared<std::vector<T>>(static_cast<size_t>(std::max<int64_t>(a_elems, 1)));
      b[s] = std::make_shared<std::vector<T>>(static_cast<size_t>(std::max<int64_t>(b_elems, 1)));
    }
  }
};

template <typename T>
void scale(T* c, int64_t m, int64_t n, int64_t ldc, T beta) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
  }
}

template <typename T>
void run(const Job& job) {
  gdap_gemm& g = job.plan;
  const auto alpha = static_cast<T>(job.alpha), beta = static_cast<T>(job.beta);
  // C in place when rows are contiguous, else through a packed copy.
  gdap_array& c = *job.c;
  const bool direct = col_stride(c) == 1 && row_stride(c) >= std::max<int64_t>(g.local_n, 1);
  std::vector<T> staged;
  T* cp = static_cast<T*>(c.data());
  int64_t ldc = row_stride(c);
  if (!direct) {
    staged.resize(static_cast<size_t>(std::max<int64_t>(g.local_m * g.local_n, 1)));
    pack(c, 0, g.local_m, 0, g.local_n, staged.data());
    cp = staged.data();
    ldc = std::max<int64_t>(g.local_n, 1);
  }
  if (g.panels.empty() || job.alpha == 0) {
    scale(cp, g.local_m, g.local_n, ldc, beta);
  } else {
    Slots<T> slots(g.local_m * g.max_width, g.max_width * g.local_n);
    const auto moves = exchange::engine_of(job.comm).broadcasts({{job.a, job.b}, Memory::host, nullptr});
    auto fetch = [&](size_t p) {
      const int s = static_cast<int>(p % 2);
      const exchange::Move step[] = {{&g.a_moves[p], 0, reinterpret_cast<char*>(slots.a[s]->data()), slots.a[s]},
                                     {&g.b_moves[p], 1, reinterpret_cast<char*>(slots.b[s]->data()), slots.b[s]}};
      moves->start(step, s);
    };
    fetch(0);
    for (size_t p = 0; p < g.panels.size(); ++p) {
      if (p + 1 < g.panels.size()) fetch(p + 1);
      const int s = static_cast<int>(p % 2);
      moves->wait(s);
      local_gemm<T>(g.local_m, g.local_n, g.panels[p].width, alpha, slots.a[s]->data(), slots.b[s]->data(),
                    p == 0 ? beta : T(1), cp, ldc);
    }
    moves->end();
  }
  if (!direct) {
    T* dst = static_cast<T*>(c.data());
    for (int64_t i = 0; i < g.local_m; ++i) {
      for (int64_t j = 0; j < g.local_n; ++j) dst[i * row_stride(c) + j * col_stride(c)] = staged[i * g.local_n + j];
    }
  }
}

}  // namespace

void run_host(const Job& job) {
  if (job.plan.element_size == 4) {
    run<float>(job);
  } else {
    run<double>(job);
  }
}

#if !GDAP_HAVE_CUDA
void run_device(const Job&) { fail(GDAP_ERR_UNSUPPORTED, "device sections need gdap built with CUDA (cuBLAS)"); }
void release_device(gdap_gemm& plan) noexcept { plan.device.reset(); }
#endif

}  // namespace gdap::gemm
